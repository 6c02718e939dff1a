#pragma once
// norm_l2: sqrt(sum (r - t)^2 / sum r^2), the relative L2 error. Lower is
// better; no default rule. Accumulators: float32 within 2048-element chunks,
// float64 across chunks; within 1e-7 relative of a long-double reference at
// n = 1e7 for float32 inputs. Both all zero: 0. All-zero reference with a
// non-zero target: +Inf. Empty: NaN. NaN on either side: NaN (fails).
// Inf: NaN or +Inf per IEEE.
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/metric/fused_builtin.hpp>
#include <numgap/metric/rule.hpp>

namespace numgap {

struct norm_l2 : detail::fused_builtin<norm_l2> {
    static constexpr std::string_view name = "norm_l2";
    static constexpr direction better = direction::lower_is_better;
    static constexpr std::optional<pass_rule> default_rule = std::nullopt;
    static constexpr unsigned kernel_features = kernels::kernel_feature::moments;

    double from_moments(const kernels::pair_moments& m) const noexcept {
        constexpr double nan = std::numeric_limits<double>::quiet_NaN();
        if (m.count == 0 || std::isnan(m.sum_squared_diff) || std::isnan(m.sum_squared_reference)) return nan;
        if (m.sum_squared_reference == 0)
            return m.sum_squared_diff == 0 ? 0.0 : std::numeric_limits<double>::infinity();
        return std::sqrt(m.sum_squared_diff / m.sum_squared_reference);
    }
};

} // namespace numgap
