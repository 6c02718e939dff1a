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
// Complexity: O(n); allocates two row buffers. Throws: std::bad_alloc.
#include <cmath>
#include <limits>
#include <span>

#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/for_each_row.hpp>

namespace numgap::kernels {

namespace detail {
inline double log_sum_exp(std::span<const double> logits) noexcept {
    double largest = -std::numeric_limits<double>::infinity();
    for (const double x : logits) {
        if (std::isnan(x)) return std::numeric_limits<double>::quiet_NaN();
        largest = x > largest ? x : largest;
    }
    if (!std::isfinite(largest)) return std::numeric_limits<double>::quiet_NaN();
    double sum = 0;
    for (const double x : logits) sum += std::exp(x - largest);
    return largest + std::log(sum);
}
} // namespace detail

inline double kl_div_of_row(std::span<const double> reference, std::span<const double> target) noexcept {
    const double lse_reference = detail::log_sum_exp(reference);
    const double lse_target = detail::log_sum_exp(target);
    if (std::isnan(lse_reference) || std::isnan(lse_target)) return std::numeric_limits<double>::quiet_NaN();
    double kl = 0;
    for (std::size_t i = 0; i < reference.size(); ++i) {
        const double log_p = reference[i] - lse_reference;
        const double p = std::exp(log_p);
        if (p == 0) continue;
        kl += p * (log_p - (target[i] - lse_target));
    }
    return kl > 0 ? kl : 0.0;
}

inline double kl_div_rows(const tensor_view& reference, const tensor_view& target) {
    double sum = 0;
    std::int64_t rows = 0;
    for_each_row(reference, target, [&](std::span<const double> r, std::span<const double> t) {
        sum += kl_div_of_row(r, t);
        ++rows;
    });
    return sum / double(rows);
}

} // namespace numgap::kernels
