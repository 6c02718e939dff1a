#pragma once
// kl_div_rows: mean over rows (last axis) of KL(softmax(r) || softmax(t)),
// computed in float64 with log-sum-exp: KL = sum_i p_i * (log p_i - log q_i),
// log p_i = r_i - lse(r). Terms with p_i = 0 (logit -inf, e.g. masked
// attention) contribute 0 (0 log 0 = 0); p_i > 0 with q_i = 0 gives +inf.
// Rounding can make a row's sum a few ulps negative; it is clamped to 0 since
// KL >= 0. A row containing NaN or +Inf, or consisting only of -Inf, has an
// undefined softmax: the result is NaN. Error bound: ~1e-15 absolute per row
// for logits of moderate magnitude.
// Precondition: validate_pair() accepted the views.
// Complexity: O(n), three passes over each row; memory: the two blocks of
// for_each_row (at most 1 MiB, whatever the row or tensor size). Throws:
// std::bad_alloc.
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/rows/for_each_row.hpp>

namespace numgap::kernels {

namespace detail {
// log-sum-exp of one side of each row, in two passes over the row's blocks
// (maximum, then the sum of exp(x - maximum)): the same operations in the
// same order as over a whole row in memory, so the result does not depend on
// the block size. NaN when the row holds NaN or +Inf or only -Inf.
struct row_log_sum_exp {
    double reference, target;
};

inline row_log_sum_exp log_sum_exp(const row_blocks& row) {
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    double largest_reference = -std::numeric_limits<double>::infinity(), largest_target = largest_reference;
    bool reference_nan = false, target_nan = false;
    row.for_each([&](std::span<const double> reference, std::span<const double> target, std::int64_t) {
        for (std::size_t i = 0; i < reference.size(); ++i) {
            reference_nan |= std::isnan(reference[i]);
            target_nan |= std::isnan(target[i]);
            largest_reference = reference[i] > largest_reference ? reference[i] : largest_reference;
            largest_target = target[i] > largest_target ? target[i] : largest_target;
        }
    });
    const bool reference_defined = !reference_nan && std::isfinite(largest_reference);
    const bool target_defined = !target_nan && std::isfinite(largest_target);
    if (!reference_defined || !target_defined) return {reference_defined ? 0 : nan, target_defined ? 0 : nan};
    double sum_reference = 0, sum_target = 0;
    row.for_each([&](std::span<const double> reference, std::span<const double> target, std::int64_t) {
        for (std::size_t i = 0; i < reference.size(); ++i) {
            sum_reference += std::exp(reference[i] - largest_reference);
            sum_target += std::exp(target[i] - largest_target);
        }
    });
    return {largest_reference + std::log(sum_reference), largest_target + std::log(sum_target)};
}
} // namespace detail

// KL of one row: three passes over its blocks (two for the log-sum-exps).
inline double kl_div_of_row(const row_blocks& row) {
    const detail::row_log_sum_exp lse = detail::log_sum_exp(row);
    if (std::isnan(lse.reference) || std::isnan(lse.target)) return std::numeric_limits<double>::quiet_NaN();
    double kl = 0;
    row.for_each([&](std::span<const double> reference, std::span<const double> target, std::int64_t) {
        for (std::size_t i = 0; i < reference.size(); ++i) {
            const double log_p = reference[i] - lse.reference;
            const double p = std::exp(log_p);
            if (p == 0) continue;
            kl += p * (log_p - (target[i] - lse.target));
        }
    });
    return kl > 0 ? kl : 0.0;
}

inline double kl_div_rows(const tensor_view& reference, const tensor_view& target) {
    double sum = 0;
    std::int64_t rows = 0;
    for_each_row(reference, target, [&](const row_blocks& row) {
        sum += kl_div_of_row(row);
        ++rows;
    });
    return sum / double(rows);
}

} // namespace numgap::kernels
