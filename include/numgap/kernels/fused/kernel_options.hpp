#pragma once
// kernel_options: which optional tiers the fused kernel computes on top of the
// always-on moments (count, sum of squared / absolute differences, max |r-t|,
// sums of squares of each side and sum (r-t)(r+t)), and the allclose tolerances.
// Without side_min_max, side_moments' min and max keep their initial +-Inf;
// with side_counts alone only its three non-finite counts are filled.
// Why tiers: the common cosine+atol+mse+max_abs set must not pay for per-side
// statistics or the closeness tests; a tier is either a few more operations in
// the moments loop (side statistics, their min and max), a second loop over
// the same chunk while it is still in L1 (closeness, and side_counts for a
// chunk whose sum of squares is not finite: only such a chunk can hold a NaN
// or an infinity, so clean data costs a comparison per chunk), so memory is
// read once.
// Complexity: none. Throws: nothing.

namespace numgap::kernels {

namespace kernel_feature {
inline constexpr unsigned moments = 0;          // always computed
inline constexpr unsigned side_statistics = 1u; // per side: NaN/+Inf/-Inf counts, mean and M2
inline constexpr unsigned closeness = 2u;       // max|r|, max relative diff, allclose count
inline constexpr unsigned side_min_max = 4u;    // per side: min and max too (implies side_statistics)
inline constexpr unsigned side_counts = 8u;     // per side: NaN/+Inf/-Inf counts only (side_statistics has them)
} // namespace kernel_feature

struct kernel_options {
    unsigned features = kernel_feature::moments;
    double allclose_atol = 1e-8;
    double allclose_rtol = 1e-5;
    // False for metrics that need the closeness tier (max |r|, max relative
    // diff) but not the tolerances, so they never claim the tolerances and
    // force a later allclose with its own tolerances onto a fallback pass.
    bool uses_tolerance = true;
};

} // namespace numgap::kernels
