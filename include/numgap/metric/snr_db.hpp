#pragma once
// snr_db: 10 * log10(sum r^2 / sum (r - t)^2); the reference is the signal.
// Higher is better; default rule >= 20. Accumulators: float32 within
// 2048-element chunks, float64 across chunks; within 1e-7 relative of a
// long-double reference at n = 1e7 for float32 inputs. Identical inputs
// (sum (r-t)^2 = 0, including both all zero): +Inf. All-zero reference with a
// non-zero target: -Inf. Empty: NaN. NaN on either side: NaN (fails).
// Inf: NaN or +/-Inf per IEEE arithmetic on the sums.
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/metric/fused_builtin.hpp>
#include <numgap/metric/rule.hpp>

namespace numgap {

struct snr_db : detail::fused_builtin<snr_db> {
    static constexpr std::string_view name = "snr_db";
    static constexpr direction better = direction::higher_is_better;
    static constexpr std::optional<pass_rule> default_rule = pass_rule{comparison::ge, 20.0};
    static constexpr unsigned kernel_features = kernels::kernel_feature::moments;

    double from_moments(const kernels::pair_moments& m) const noexcept {
        constexpr double nan = std::numeric_limits<double>::quiet_NaN();
        if (m.count == 0 || std::isnan(m.sum_squared_diff) || std::isnan(m.sum_squared_reference)) return nan;
        if (m.sum_squared_diff == 0) return std::numeric_limits<double>::infinity();
        return 10.0 * std::log10(m.sum_squared_reference / m.sum_squared_diff);
    }
};

} // namespace numgap
