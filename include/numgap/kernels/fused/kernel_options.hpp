#pragma once
// kernel_options: which optional tiers the fused kernel computes on top of the
// always-on moments (count, sum of squared / absolute differences, max |r-t|,
// sums of squares of each side and sum (r-t)(r+t)), and the allclose tolerances.
// Why tiers: the common cosine+atol+mse+max_abs set must not pay for per-side
// statistics or the closeness tests; each tier is a separate loop over the same
// chunk while it is still in L1, so memory is still read once.
// Complexity: none. Throws: nothing.

namespace numgap::kernels {

namespace kernel_feature {
inline constexpr unsigned moments = 0;          // always computed
inline constexpr unsigned side_statistics = 1u; // min/max/mean/std/NaN/Inf per side
inline constexpr unsigned closeness = 2u;       // max|r|, max relative diff, allclose count
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
