#pragma once
// prepared_metric_set: a metric_set and evaluate_options fixed once, for
// callers that compare millions of small tensor pairs. evaluate_into()
// computes exactly what evaluate() computes (same engine, same values, bit for
// bit) but writes each metric's value into caller storage, in the set's
// order, and the side statistics where the caller points; with built-in sum
// metrics and one thread it allocates nothing, builds no string and makes no
// std::function or virtual call (kernels chosen once, at construction; each
// built-in finalised through a plain function pointer).
// passed(i, value) gives the verdict metric_result::passed would hold.
//
//   numgap::prepared_metric_set prepared(numgap::metric_set::defaults(), {.threads = 1, .side_counts = false});
//   std::array<double, 3> values;                   // cosine, atol, mse
//   for (auto& [reference, target] : pairs) prepared.evaluate_into(reference, target, values);
//
// Thread safety: evaluate_into is const and may run concurrently on one
// object. Complexity: O(n) per pair, as evaluate(). Throws: numgap::error
// (usage) for a values span whose size is not size(); whatever evaluate() throws for the pair.
#include <cstddef>
#include <span>
#include <string>
#include <utility>

#include <numgap/core/error.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/dispatch/dispatch.hpp>
#include <numgap/kernels/table/kernel_table.hpp>
#include <numgap/metric/evaluate.hpp>
#include <numgap/metric/evaluate_options.hpp>
#include <numgap/metric/metric_result.hpp>
#include <numgap/metric/metric_set.hpp>
#include <numgap/metric/side_stats.hpp>

namespace numgap {

class prepared_metric_set {
public:
    explicit prepared_metric_set(metric_set metrics, evaluate_options options = {})
        : metrics_(std::move(metrics)), options_(options), table_(kernels::active_kernels()) {}

    std::size_t size() const noexcept { return metrics_.size(); }
    const metric_set& metrics() const noexcept { return metrics_; }
    const evaluate_options& options() const noexcept { return options_; }

    // values[i] receives the set's i-th metric. Side statistics (what
    // options().side_detail_asked() names; none when any_side_statistics()
    // is false) are stored where the pointers are non-null.
    void evaluate_into(const tensor_view& reference, const tensor_view& target, std::span<double> values,
                       side_stats* reference_stats = nullptr, side_stats* target_stats = nullptr) const {
        if (values.size() != metrics_.size())
            throw error(error_kind::usage,
                        "prepared_metric_set::evaluate_into was given room for " + std::to_string(values.size()) +
                            " values; the set has " + std::to_string(metrics_.size()) + " metrics",
                        error_location::of_item("values"));
        detail::evaluate_pass(reference, target, metrics_, options_, table_, reference_stats, target_stats,
                              [values](const auto& value_of) {
                                  for (std::size_t i = 0; i < values.size(); ++i) values[i] = value_of(i);
                              });
    }

    bool passed(std::size_t i, double value) const noexcept {
        return metric_passes(detail::metric_set_access::entries(metrics_)[i].rule, value);
    }

private:
    metric_set metrics_;
    evaluate_options options_;
    kernels::kernel_table table_;
};

} // namespace numgap
