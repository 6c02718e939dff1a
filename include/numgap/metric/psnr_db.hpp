#pragma once
// psnr_db: 20 * log10(max |r|) - 10 * log10(mse), the peak being the
// reference's largest magnitude. Higher is better; default rule >= 30.
// Accumulators: as mse, plus an exact max |r| (closeness tier of the kernel);
// within ~1e-7 relative of a long-double reference for float32 inputs.
// Identical inputs (mse = 0): +Inf. All-zero reference with a non-zero
// target: -Inf. Empty: NaN. NaN on either side: NaN (fails). Inf: NaN or
// +/-Inf per IEEE arithmetic.
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/metric/fused_builtin.hpp>
#include <numgap/metric/rule.hpp>

namespace numgap {

struct psnr_db : detail::fused_builtin<psnr_db> {
    static constexpr std::string_view name = "psnr_db";
    static constexpr direction better = direction::higher_is_better;
    static constexpr std::optional<pass_rule> default_rule = pass_rule{comparison::ge, 30.0};
    static constexpr unsigned kernel_features = kernels::kernel_feature::closeness;

    double from_moments(const kernels::pair_moments& m) const noexcept {
        constexpr double nan = std::numeric_limits<double>::quiet_NaN();
        if (m.count == 0 || std::isnan(m.sum_squared_diff) || std::isnan(m.sum_squared_reference)) return nan;
        if (m.sum_squared_diff == 0) return std::numeric_limits<double>::infinity();
        const double mean_squared = m.sum_squared_diff / double(m.count);
        return 20.0 * std::log10(m.max_abs_reference) - 10.0 * std::log10(mean_squared);
    }
};

} // namespace numgap
