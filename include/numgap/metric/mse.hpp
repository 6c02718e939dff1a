#pragma once
// mse: mean (r - t)^2. Lower is better; default rule < 0.01. Accumulators:
// float32 within 2048-element chunks, float64 across chunks (non-finite chunk
// partials, e.g. |r - t| > 1.8e19, are redone in float64, so overflow of float
// is not reported as Inf); within 1e-7 relative of a long-double reference at
// n = 1e7 for float32 inputs. Zero vectors: 0. Empty: NaN.
// NaN on either side: NaN (fails). Inf: +Inf or NaN per IEEE; fails.
#include <limits>
#include <optional>
#include <string_view>

#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/metric/fused_builtin.hpp>
#include <numgap/metric/rule.hpp>

namespace numgap {

struct mse : detail::fused_builtin<mse> {
    static constexpr std::string_view name = "mse";
    static constexpr direction better = direction::lower_is_better;
    static constexpr std::optional<pass_rule> default_rule = pass_rule{comparison::lt, 0.01};
    static constexpr unsigned kernel_features = kernels::kernel_feature::moments;

    double from_moments(const kernels::pair_moments& m) const noexcept {
        if (m.count == 0) return std::numeric_limits<double>::quiet_NaN();
        return m.sum_squared_diff / double(m.count);
    }
};

} // namespace numgap
