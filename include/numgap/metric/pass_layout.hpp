#pragma once
// detail::pass_layout: how evaluate() serves each metric of a metric_set,
// decided once when the metric is added (metric_set::add), never per call:
// from the fused pass's moments, from a user reduction running on the fused
// pass's float32 blocks, or as a whole-tensor metric after the pass. It also
// holds the kernel options the fused pass needs (the union of the fused
// metrics' tiers and the first tolerance-reading metric's tolerances).
// Why per set and not per call: at a few thousand elements the pass takes
// ~0.2 µs, and re-deriving this (plus its vector) cost a third of that.
// Complexity: add O(1). Throws: std::bad_alloc.
#include <cstddef>
#include <vector>

#include <numgap/kernels/fused/kernel_options.hpp>

namespace numgap::detail {

struct erased_reduction;

struct pass_layout {
    // What pass_source holds for a metric not served by a reduction index.
    static constexpr int from_fused_moments = -2;
    static constexpr int whole_tensor = -1;

    kernels::kernel_options kernel_options{};
    bool any_fused = false;
    bool closeness_claimed = false;
    std::vector<const erased_reduction*> reductions; // owned by the set's entries
    std::vector<int> sources;                          // per metric, in the set's order

    // fused: the metric's kernel options when it can be served by the fused
    // pass, null otherwise; reduction: its reduction fallback, or null.
    void add(const kernels::kernel_options* fused, const erased_reduction* reduction) {
        // Reserve first, so a failed allocation leaves the layout unchanged.
        sources.reserve(sources.size() + 1);
        reductions.reserve(reductions.size() + 1);
        if (fused != nullptr) {
            // Only metrics that read the tolerances claim them: psnr_db and
            // max_rel need the closeness tier but must not make a later
            // allclose's own tolerances a clash.
            const bool claims_tolerance =
                (fused->features & kernels::kernel_feature::closeness) != 0 && fused->uses_tolerance;
            const bool tolerance_clash = claims_tolerance && closeness_claimed &&
                                         (fused->allclose_atol != kernel_options.allclose_atol ||
                                          fused->allclose_rtol != kernel_options.allclose_rtol);
            if (!tolerance_clash) {
                kernel_options.features |= fused->features;
                if (claims_tolerance && !closeness_claimed) {
                    kernel_options.allclose_atol = fused->allclose_atol;
                    kernel_options.allclose_rtol = fused->allclose_rtol;
                    closeness_claimed = true;
                }
                any_fused = true;
                sources.push_back(from_fused_moments);
                return;
            }
        }
        if (reduction != nullptr) {
            sources.push_back(int(reductions.size()));
            reductions.push_back(reduction);
            return;
        }
        sources.push_back(whole_tensor);
    }
};

} // namespace numgap::detail
