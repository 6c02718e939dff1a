#pragma once
// max_rel: max |r - t| / max(|r|, tiny), tiny = FLT_MIN (1.17549435e-38, the
// smallest normal float32), so a zero reference element reports its absolute
// difference scaled by 1/FLT_MIN instead of dividing by zero. Lower is better;
// no default rule. Each ratio is rounded once in the block's precision (float32
// for float32 inputs: within 2^-23 relative of a long-double reference).
// Zero vectors: 0. Empty: NaN. NaN: any NaN difference makes it NaN (fails),
// detected as for max_abs. Inf: +Inf difference over finite |r| gives +Inf;
// over infinite |r| it gives NaN per IEEE (Inf / Inf). That NaN is not left to
// the kernel's running max (a SIMD max drops NaN lanes): an infinite |r| always
// yields an Inf or NaN difference, so max |r| == Inf alone decides it.
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/metric/fused_builtin.hpp>
#include <numgap/metric/rule.hpp>

namespace numgap {

struct max_rel : detail::fused_builtin<max_rel> {
    static constexpr std::string_view name = "max_rel";
    static constexpr direction better = direction::lower_is_better;
    static constexpr std::optional<pass_rule> default_rule = std::nullopt;
    static constexpr unsigned kernel_features = kernels::kernel_feature::closeness;

    double from_moments(const kernels::pair_moments& m) const noexcept {
        // An infinite r makes its own ratio NaN (Inf / Inf, or a NaN difference
        // when t equals it), whatever the running max kept.
        if (m.count == 0 || std::isnan(m.sum_abs_diff) || std::isinf(m.max_abs_reference))
            return std::numeric_limits<double>::quiet_NaN();
        return m.max_relative_diff;
    }
};

} // namespace numgap
