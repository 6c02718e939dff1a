#pragma once
// pair_moments: every sum and extreme the built-in reduction metrics are
// finalised from, accumulated in float64 by the fused kernel and merged across
// blocks and threads. Which fields are meaningful depends on the kernel
// features requested (see kernel_options.hpp); the rest keep their initial values.
// Why sum_diff_times_sum: sum (r-t)(r+t) equals sum r^2 - sum t^2 without the
// cancellation, so ||r|| - ||t|| and 1 - cosine stay accurate for tiny errors.
// Complexity: O(1) merge. Throws: nothing.
#include <cstdint>

#include <numgap/kernels/fused/side_moments.hpp>

namespace numgap::kernels {

struct pair_moments {
    std::int64_t count = 0;
    double sum_squared_diff = 0.0;  // sum (r-t)^2
    double sum_abs_diff = 0.0;      // sum |r-t|; NaN iff some r-t is NaN
    double max_abs_diff = 0.0;      // max |r-t| over non-NaN differences
    double sum_squared_reference = 0.0;
    double sum_squared_target = 0.0;
    double sum_diff_times_sum = 0.0; // sum (r-t)(r+t)
    // closeness tier
    double max_abs_reference = 0.0;
    double max_relative_diff = 0.0; // max |r-t| / max(|r|, FLT_MIN)
    std::int64_t not_close_count = 0;
    // side_statistics tier (side_counts alone: only their non-finite counts)
    side_moments reference{};
    side_moments target{};

    void merge(const pair_moments& other) noexcept {
        count += other.count;
        sum_squared_diff += other.sum_squared_diff;
        sum_abs_diff += other.sum_abs_diff;
        max_abs_diff = other.max_abs_diff > max_abs_diff ? other.max_abs_diff : max_abs_diff;
        sum_squared_reference += other.sum_squared_reference;
        sum_squared_target += other.sum_squared_target;
        sum_diff_times_sum += other.sum_diff_times_sum;
        max_abs_reference =
            other.max_abs_reference > max_abs_reference ? other.max_abs_reference : max_abs_reference;
        max_relative_diff =
            other.max_relative_diff > max_relative_diff ? other.max_relative_diff : max_relative_diff;
        not_close_count += other.not_close_count;
        reference.merge(other.reference);
        target.merge(other.target);
    }
};

} // namespace numgap::kernels
