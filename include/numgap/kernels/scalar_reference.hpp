#pragma once
// The oracle: straightforward long-double implementations of every built-in
// metric and of the per-side statistics, written from the definitions (not
// from the fused sums), against which every kernel path is tested.
// Not for production: one scalar pass, no SIMD, O(n) time.
// Semantics pinned here and documented in each metric header: cosine of two
// all-zero vectors is 1 and of exactly one all-zero vector 0; any NaN input
// makes every sum-based metric NaN; max_abs / max_rel are NaN when any r - t is
// NaN; snr_db / psnr_db are +inf for identical inputs.
// Complexity: O(n) (O(n log k) for topk). Throws: std::bad_alloc (row metrics).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

namespace numgap::kernels {

struct reference_side {
    std::int64_t finite_count = 0, nan_count = 0, positive_inf_count = 0, negative_inf_count = 0;
    long double min = std::numeric_limits<long double>::infinity();
    long double max = -std::numeric_limits<long double>::infinity();
    long double mean = 0, std = 0;
};

struct reference_result {
    long double count = 0, sum_squared_diff = 0, sum_abs_diff = 0, max_abs_diff = 0, dot = 0,
                sum_squared_reference = 0, sum_squared_target = 0, max_abs_reference = 0,
                max_relative_diff = 0, not_close = 0;
    bool any_nan_input = false, any_nan_diff = false, any_nan_ratio = false;
    reference_side reference, target;

    static constexpr long double nan = std::numeric_limits<long double>::quiet_NaN();
    static constexpr long double inf = std::numeric_limits<long double>::infinity();

    long double cosine() const {
        if (any_nan_input) return nan;
        if (sum_squared_reference == 0 && sum_squared_target == 0) return 1;
        if (sum_squared_reference == 0 || sum_squared_target == 0) return 0;
        return dot / (std::sqrt(sum_squared_reference) * std::sqrt(sum_squared_target));
    }
    long double one_minus_cosine() const { return 1 - cosine(); }
    long double atol() const { return sum_abs_diff / count; }
    long double mse() const { return sum_squared_diff / count; }
    long double max_abs() const { return any_nan_diff ? nan : max_abs_diff; }
    long double l1() const { return sum_abs_diff; }
    long double snr_db() const {
        if (sum_squared_diff == 0) return any_nan_input ? nan : inf;
        return 10 * std::log10(sum_squared_reference / sum_squared_diff);
    }
    long double psnr_db() const {
        if (any_nan_input) return nan;
        if (sum_squared_diff == 0) return inf;
        return 20 * std::log10(max_abs_reference) - 10 * std::log10(mse());
    }
    long double norm_l2() const {
        if (sum_squared_reference == 0) return sum_squared_diff == 0 ? 0 : inf;
        return std::sqrt(sum_squared_diff / sum_squared_reference);
    }
    long double max_rel() const { return any_nan_diff || any_nan_ratio ? nan : max_relative_diff; }
    long double allclose() const { return any_nan_input ? nan : not_close / count; }
};

namespace detail {
template <class T>
reference_side reference_side_of(std::span<const T> values) {
    reference_side side;
    long double sum = 0;
    for (const T value : values) {
        const long double x = value;
        if (std::isnan(x)) ++side.nan_count;
        else if (std::isinf(x)) (x > 0 ? side.positive_inf_count : side.negative_inf_count)++;
        else {
            ++side.finite_count;
            sum += x;
            side.min = std::min(side.min, x);
            side.max = std::max(side.max, x);
        }
    }
    if (side.finite_count == 0) return side;
    side.mean = sum / side.finite_count;
    long double squares = 0;
    for (const T value : values)
        if (std::isfinite(static_cast<long double>(value))) squares += (value - side.mean) * (value - side.mean);
    side.std = std::sqrt(squares / side.finite_count);
    return side;
}
} // namespace detail

template <class T>
reference_result scalar_reference(std::span<const T> reference, std::span<const T> target,
                                  long double allclose_atol = 1e-8L, long double allclose_rtol = 1e-5L) {
    reference_result result;
    result.count = static_cast<long double>(reference.size());
    for (std::size_t i = 0; i < reference.size(); ++i) {
        const long double r = reference[i], t = target[i], difference = r - t;
        result.any_nan_input |= std::isnan(r) || std::isnan(t);
        result.any_nan_diff |= std::isnan(difference);
        result.sum_squared_diff += difference * difference;
        result.sum_abs_diff += std::fabs(difference);
        if (!std::isnan(difference)) result.max_abs_diff = std::max(result.max_abs_diff, std::fabs(difference));
        result.dot += r * t;
        result.sum_squared_reference += r * r;
        result.sum_squared_target += t * t;
        if (!std::isnan(r)) result.max_abs_reference = std::max(result.max_abs_reference, std::fabs(r));
        const long double floor = std::numeric_limits<float>::min();
        if (!std::isnan(difference)) {
            // Inf / Inf (an infinite reference against a different target) is
            // NaN and must stay NaN: std::max would drop it.
            const long double ratio = std::fabs(difference) / std::max(std::fabs(r), floor);
            if (std::isnan(ratio))
                result.any_nan_ratio = true;
            else
                result.max_relative_diff = std::max(result.max_relative_diff, ratio);
        }
        const bool close = (std::isfinite(r) && std::isfinite(t) &&
                            std::fabs(difference) <= allclose_atol + allclose_rtol * std::fabs(r)) ||
                           r == t;
        result.not_close += close ? 0 : 1;
    }
    result.reference = detail::reference_side_of(reference);
    result.target = detail::reference_side_of(target);
    return result;
}

// Mean KL(softmax(r) || softmax(t)) over consecutive rows of row_length.
template <class T>
long double kl_div_reference(std::span<const T> reference, std::span<const T> target, std::size_t row_length) {
    long double total = 0;
    const std::size_t rows = reference.size() / row_length;
    for (std::size_t row = 0; row < rows; ++row) {
        auto lse = [&](std::span<const T> x) {
            long double largest = -std::numeric_limits<long double>::infinity(), sum = 0;
            for (std::size_t i = 0; i < row_length; ++i) largest = std::max<long double>(largest, x[row * row_length + i]);
            for (std::size_t i = 0; i < row_length; ++i) sum += std::exp(x[row * row_length + i] - largest);
            return largest + std::log(sum);
        };
        const long double lse_r = lse(reference), lse_t = lse(target);
        long double kl = 0;
        for (std::size_t i = 0; i < row_length; ++i) {
            const long double p = std::exp(reference[row * row_length + i] - lse_r);
            if (p == 0) continue;
            kl += p * ((reference[row * row_length + i] - lse_r) - (target[row * row_length + i] - lse_t));
        }
        total += std::max<long double>(kl, 0);
    }
    return total / rows;
}

// Fraction of rows whose top-k index sets differ (ties: lower index first).
template <class T>
long double topk_reference(std::span<const T> reference, std::span<const T> target, std::size_t row_length,
                           std::size_t k) {
    const std::size_t rows = reference.size() / row_length;
    std::size_t differing = 0;
    auto top = [&](std::span<const T> x, std::size_t row) {
        std::vector<std::size_t> order(row_length);
        std::iota(order.begin(), order.end(), std::size_t(0));
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return x[row * row_length + a] > x[row * row_length + b];
        });
        order.resize(k);
        std::sort(order.begin(), order.end());
        return order;
    };
    for (std::size_t row = 0; row < rows; ++row) differing += top(reference, row) == top(target, row) ? 0 : 1;
    return static_cast<long double>(differing) / rows;
}

} // namespace numgap::kernels
