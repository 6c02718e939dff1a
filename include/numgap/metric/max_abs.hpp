#pragma once
// max_abs: max |r - t|, the smallest atol that would pass an elementwise check.
// Lower is better; no default rule. Exact: the maximum of |fl(r - t)| in the
// block's precision; rounding is monotone, so for float32 inputs it equals the
// exact maximum rounded once to float32. Zero vectors: 0. Empty: NaN.
// NaN: a plain max instruction drops NaN, so NaN is detected through the
// fused sum of |r - t|: any NaN difference (a NaN input, or Inf - Inf) makes
// max_abs NaN (fails). Inf: +Inf when some r - t is infinite.
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/metric/fused_builtin.hpp>
#include <numgap/metric/rule.hpp>

namespace numgap {

struct max_abs : detail::fused_builtin<max_abs> {
    static constexpr std::string_view name = "max_abs";
    static constexpr direction better = direction::lower_is_better;
    static constexpr std::optional<pass_rule> default_rule = std::nullopt;
    static constexpr unsigned kernel_features = kernels::kernel_feature::moments;

    double from_moments(const kernels::pair_moments& m) const noexcept {
        if (m.count == 0 || std::isnan(m.sum_abs_diff)) return std::numeric_limits<double>::quiet_NaN();
        return m.max_abs_diff;
    }
};

} // namespace numgap
