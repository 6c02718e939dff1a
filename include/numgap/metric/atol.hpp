#pragma once
// atol: mean |r - t| (the Qualcomm AI Engine debugger's "Atol Similarity").
// Lower is better; default rule < 0.1. Accumulators: float32 within
// 2048-element chunks, float64 across chunks (chunks whose float partials are
// not finite are redone in float64); within 1e-7 relative of a long-double
// reference at n = 1e7 for float32 inputs. Zero vectors: 0. Empty: NaN.
// NaN on either side: NaN (fails). Inf: +Inf where r - t is infinite, NaN for
// equal infinities (Inf - Inf), per IEEE arithmetic; fails either way.
#include <limits>
#include <optional>
#include <string_view>

#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/metric/fused_builtin.hpp>
#include <numgap/metric/rule.hpp>

namespace numgap {

struct atol : detail::fused_builtin<atol> {
    static constexpr std::string_view name = "atol";
    static constexpr direction better = direction::lower_is_better;
    static constexpr std::optional<pass_rule> default_rule = pass_rule{comparison::lt, 0.1};
    static constexpr unsigned kernel_features = kernels::kernel_feature::moments;

    double from_moments(const kernels::pair_moments& m) const noexcept {
        if (m.count == 0) return std::numeric_limits<double>::quiet_NaN();
        return m.sum_abs_diff / double(m.count);
    }
};

} // namespace numgap
