#pragma once
// allclose: fraction of elements with |r - t| > atol + rtol * |r| (numpy's
// isclose rule with the reference as `b`; equal infinities count as close).
// atol and rtol are settable, numpy's defaults 1e-8 and 1e-5. Lower is better;
// default rule == 0 (every element close). The tolerance is evaluated in the
// block's precision (float32 for float32 inputs; a difference within one ulp
// of the tolerance may classify differently from a float64 evaluation); the
// count is exact. Zero vectors: 0. Empty: NaN.
// NaN on either side: NaN and fails (numpy would count it as not close; numgap
// reports NaN as for every other metric). Inf against a finite value or the
// opposite infinity: not close.
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include <numgap/kernels/fused/kernel_options.hpp>
#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/metric/fused_builtin.hpp>
#include <numgap/metric/rule.hpp>

namespace numgap {

struct allclose : detail::fused_builtin<allclose> {
    static constexpr std::string_view name = "allclose";
    static constexpr direction better = direction::lower_is_better;
    static constexpr std::optional<pass_rule> default_rule = pass_rule{comparison::eq, 0.0};
    static constexpr unsigned kernel_features = kernels::kernel_feature::closeness;

    double atol = 1e-8;
    double rtol = 1e-5;

    constexpr allclose() noexcept = default;
    constexpr explicit allclose(double absolute_tolerance, double relative_tolerance = 1e-5) noexcept
        : atol(absolute_tolerance), rtol(relative_tolerance) {}

    kernels::kernel_options kernel_options() const noexcept { return {kernel_features, atol, rtol}; }
    double from_moments(const kernels::pair_moments& m) const noexcept {
        if (m.count == 0 || std::isnan(m.sum_squared_reference) || std::isnan(m.sum_squared_target))
            return std::numeric_limits<double>::quiet_NaN();
        return double(m.not_close_count) / double(m.count);
    }
};

} // namespace numgap
