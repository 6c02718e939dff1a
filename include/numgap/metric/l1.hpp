#pragma once
// l1: sum |r - t| (ExecuTorch Inspector's L1). Lower is better; no default
// rule. Accumulators: float32 within 2048-element chunks, float64 across
// chunks; within 1e-7 relative of a long-double reference at n = 1e7 for
// float32 inputs. Zero vectors: 0. Empty: NaN. NaN on either side: NaN
// (fails). Inf: +Inf or NaN per IEEE.
#include <limits>
#include <optional>
#include <string_view>

#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/metric/fused_builtin.hpp>
#include <numgap/metric/rule.hpp>

namespace numgap {

struct l1 : detail::fused_builtin<l1> {
    static constexpr std::string_view name = "l1";
    static constexpr direction better = direction::lower_is_better;
    static constexpr std::optional<pass_rule> default_rule = std::nullopt;
    static constexpr unsigned kernel_features = kernels::kernel_feature::moments;

    double from_moments(const kernels::pair_moments& m) const noexcept {
        if (m.count == 0) return std::numeric_limits<double>::quiet_NaN();
        return m.sum_abs_diff;
    }
};

} // namespace numgap
