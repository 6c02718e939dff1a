#pragma once
// numgap::builtin_metrics: the one list of built-in metric types, in the
// order the README's metric table and builtin_metric_names() give them.
// metric_set::add_builtin(name) and builtin_metric_names() are both derived
// from it, so a new built-in is added here and nowhere else.
// for_each_builtin_metric(f) calls f(M{}) for each type in order and stops at
// the first call returning true. Complexity O(number of built-ins). Throws
// what f throws.
#include <string_view>
#include <type_traits>
#include <vector>

#include <numgap/metric/allclose.hpp>
#include <numgap/metric/atol.hpp>
#include <numgap/metric/cosine.hpp>
#include <numgap/metric/kl_div.hpp>
#include <numgap/metric/l1.hpp>
#include <numgap/metric/max_abs.hpp>
#include <numgap/metric/max_rel.hpp>
#include <numgap/metric/mse.hpp>
#include <numgap/metric/norm_l2.hpp>
#include <numgap/metric/psnr_db.hpp>
#include <numgap/metric/snr_db.hpp>
#include <numgap/metric/topk.hpp>

namespace numgap {

template <class... Metrics>
struct metric_list {};

using builtin_metrics =
    metric_list<cosine, atol, mse, max_abs, l1, snr_db, psnr_db, norm_l2, max_rel, allclose, kl_div, topk>;

template <class Visit>
bool for_each_builtin_metric(Visit&& visit) {
    return []<class... Metrics>(metric_list<Metrics...>, Visit& f) {
        return (static_cast<bool>(f(Metrics{})) || ...);
    }(builtin_metrics{}, visit);
}

inline std::vector<std::string_view> builtin_metric_names() {
    std::vector<std::string_view> names;
    for_each_builtin_metric([&](const auto& metric) {
        names.push_back(std::remove_cvref_t<decltype(metric)>::name);
        return false;
    });
    return names;
}

} // namespace numgap
