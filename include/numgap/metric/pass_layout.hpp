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

// Adds a fused metric's kernel options to a pass's `into`; false (and `into`
// unchanged) when it reads tolerances other than those an earlier metric
// claimed (`claimed`): the pass cannot serve both. Only metrics that read the
// tolerances claim them: psnr_db and max_rel need the closeness tier but must
// not make a later allclose's own tolerances a clash.
inline bool merge_fused_options(kernels::kernel_options& into, bool& claimed,
                                const kernels::kernel_options& fused) noexcept {
    const bool claims_tolerance = (fused.features & kernels::kernel_feature::closeness) != 0 && fused.uses_tolerance;
    if (claims_tolerance && claimed &&
        (fused.allclose_atol != into.allclose_atol || fused.allclose_rtol != into.allclose_rtol))
        return false;
    into.features |= fused.features;
    if (claims_tolerance && !claimed) {
        into.allclose_atol = fused.allclose_atol;
        into.allclose_rtol = fused.allclose_rtol;
        claimed = true;
    }
    return true;
}

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
        if (fused != nullptr && merge_fused_options(kernel_options, closeness_claimed, *fused)) {
            any_fused = true;
            sources.push_back(from_fused_moments);
            return;
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
