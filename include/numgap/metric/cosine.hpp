#pragma once
// cosine: sum(r*t) / (||r|| * ||t||). Higher is better; default rule >= 0.99.
// Computed from the fused float64 sums as 1 - d with
//   d = (sum (r-t)^2 - (||r|| - ||t||)^2) / (2 ||r|| ||t||),
//   ||r|| - ||t|| = sum (r-t)(r+t) / (||r|| + ||t||),
// never as 1 - sum(r*t)/..., so the quantity people read near 1 (1 - cosine,
// available as cosine::distance) keeps ~1e-6 relative accuracy at n = 1e7 for
// float32 inputs (tests/kernels/fused/fused_kernel.cpp). Accumulators: float32 within
// 2048-element chunks, float64 across chunks. The value is clamped to [-1, 1].
// Both vectors all zero: 1 (identical). Exactly one all zero: 0. Empty
// (count 0, only reachable by calling finalize on a fresh state): NaN.
// NaN on either side: NaN (fails). Inf on either side: NaN (the direction is
// undefined; fails).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/metric/fused_builtin.hpp>
#include <numgap/metric/rule.hpp>

namespace numgap {

struct cosine : detail::fused_builtin<cosine> {
    static constexpr std::string_view name = "cosine";
    static constexpr direction better = direction::higher_is_better;
    static constexpr std::optional<pass_rule> default_rule = pass_rule{comparison::ge, 0.99};
    static constexpr unsigned kernel_features = kernels::kernel_feature::moments;

    // 1 - cosine, accurate where cosine itself rounds to 1.
    static double distance(const kernels::pair_moments& m) noexcept {
        constexpr double nan = std::numeric_limits<double>::quiet_NaN();
        if (m.count == 0) return nan;
        const double rr = m.sum_squared_reference, tt = m.sum_squared_target;
        if (std::isnan(rr) || std::isnan(tt) || std::isinf(rr) || std::isinf(tt)) return nan;
        if (rr == 0 && tt == 0) return 0.0;
        if (rr == 0 || tt == 0) return 1.0;
        const double norm_reference = std::sqrt(rr), norm_target = std::sqrt(tt);
        const double norm_gap = m.sum_diff_times_sum / (norm_reference + norm_target);
        const double d = (m.sum_squared_diff - norm_gap * norm_gap) / (2 * norm_reference * norm_target);
        return std::clamp(d, 0.0, 2.0);
    }
    double from_moments(const kernels::pair_moments& m) const noexcept { return 1.0 - distance(m); }
};

} // namespace numgap
