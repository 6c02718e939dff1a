#pragma once
// side_stats: statistics of one side (reference or target) of an evaluated
// pair, computed in the same pass as the metrics. `count` is every element;
// min, max, mean and std are over the finite values only (std is the
// population standard deviation, ddof = 0, from a chunked Chan et al. merge,
// accurate even when |mean| >> std); all four are NaN when no value is finite,
// min and max also when they were not asked for (evaluate_options::side_min_max),
// mean and std when only the counts were (side_detail::counts, the default of
// evaluate_options).
// Accuracy for float32 inputs (float32 sums within 2048-element chunks, then
// float64): min and max exact; mean within ~1e-7 * std of the exact mean; std
// within ~1e-7 relative.
// NaN and +/-Inf are counted, never folded into the statistics.
// float64 sides spread over ~1e152 and more: std is +Inf (a chunk's sum of
// squared deviations, M2, overflows float64 beyond ~1.8e308). The mean stays
// finite for any finite values, also near the largest float64 where sums of
// deviations overflow (then it comes from a sum scaled by a power of two).
// Complexity: O(1). Throws: nothing.
#include <cmath>
#include <cstdint>
#include <limits>

#include <numgap/kernels/fused/side_moments.hpp>

namespace numgap {

struct side_stats {
    std::int64_t count = 0;
    std::int64_t nan_count = 0;
    std::int64_t positive_inf_count = 0;
    std::int64_t negative_inf_count = 0;
    double min = std::numeric_limits<double>::quiet_NaN();
    double max = std::numeric_limits<double>::quiet_NaN();
    double mean = std::numeric_limits<double>::quiet_NaN();
    double std = std::numeric_limits<double>::quiet_NaN();

    std::int64_t finite_count() const noexcept {
        return count - nan_count - positive_inf_count - negative_inf_count;
    }
};

// What a pass gathered per side: the non-finite counts only, with the mean
// and std of the finite values, or with their min and max too.
enum class side_detail { counts, mean_std, min_max };

inline side_stats make_side_stats(const kernels::side_moments& moments, std::int64_t count,
                                  side_detail detail) noexcept {
    side_stats stats;
    stats.count = count;
    stats.nan_count = moments.nan_count;
    stats.positive_inf_count = moments.positive_inf_count;
    stats.negative_inf_count = moments.negative_inf_count;
    if (detail != side_detail::counts && moments.finite_count > 0) {
        if (detail == side_detail::min_max) {
            stats.min = moments.min;
            stats.max = moments.max;
        }
        stats.mean = moments.mean;
        stats.std = std::sqrt(moments.m2 / double(moments.finite_count));
    }
    return stats;
}

} // namespace numgap
