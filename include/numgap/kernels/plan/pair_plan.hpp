#pragma once
// pair_plan: how to walk a validated (reference, target) pair in reference
// order. Both views are mapped through their axis_order to reference
// dimension order, dimensions of size 1 are dropped and neighbouring
// dimensions that are contiguous on both sides are coalesced, so the common
// case (both contiguous) becomes one flat run.
// The plan is walked by for_each_run (for_each_run.hpp: stretches both sides
// store contiguously, read where they lie) or by for_each_block
// (for_each_block.hpp: converted and gathered L1 blocks, see gather.hpp).
// locate_row() says where a plan row starts in one side; both walks use it
// (row_cursor: the same for consecutive rows, without divisions).
// Precondition: validate_pair() accepted the views (make_pair_plan does not
// re-check). Complexity: make_pair_plan and locate_row O(rank); no heap
// allocation. Throws: nothing.
#include <array>
#include <cstddef>
#include <cstdint>

#include <numgap/core/config.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/block_divider.hpp>
#include <numgap/kernels/entry_points.hpp>

namespace numgap::kernels {

struct plan_side {
    const unsigned char* base = nullptr;
    dtype type = dtype::float32;
    std::array<std::int64_t, max_rank> strides{}; // per plan dimension, in elements
    bool quantized = false;
    float scale = 1.0f;
    std::int32_t zero_point = 0;
    const float* scales = nullptr;             // per-channel, or null
    const std::int32_t* zero_points = nullptr; // per-channel, or null (all zero)
    int channel_dim = -1;                      // plan dimension the channels run along
    // Block quantization (core/quantization.hpp) over the side's contiguous
    // storage, by stored element index e (block views have no axis_order):
    // e uses parameter (e / (block_axis_length * block_inner) * blocks_per_row
    // + e / block_inner % block_axis_length / block_size) * block_inner
    // + e % block_inner. block_size is at most block_axis_length (a larger
    // block is one block per row).
    const float* block_scales = nullptr; // null: not block-quantized
    const std::int32_t* block_zero_points = nullptr;
    std::int64_t block_size = 0, block_axis_length = 0, block_inner = 1, blocks_per_row = 0;
    block_divider block_divider_of_size{};
    int block_dim = -1; // plan dimension of the block axis (-1: it was dropped)
};

struct pair_plan {
    int rank = 1;
    std::array<std::int64_t, max_rank> shape{};
    plan_side reference{}, target{};
    std::int64_t count = 0;
    // float64 on either side: blocks are float64 so no precision is lost.
    bool wide = false;
    // Optional vectorised widening of unit-stride runs to float32 (set by the
    // evaluation engine from the active kernel_table); null: portable loop.
    widen_f32_function* widen_f32 = nullptr;
    // Optional vectorised tile transpose for transposed float32 layouts (set
    // like widen_f32); null: a scalar transpose.
    transpose_f32_function* transpose_f32 = nullptr;
};

namespace detail {

struct logical_dimension {
    std::int64_t size;
    std::int64_t stride[2];
    bool channel[2];
    bool last;
    bool block_axis[2] = {false, false};
};

// Fills side's block fields from a validated block-quantized view.
inline int describe_blocks(const tensor_view& view, plan_side& side) noexcept {
    const quantization& q = view.quant();
    const int axis = resolved_axis(q.axis, view.rank());
    side.block_scales = q.scales.data();
    side.block_zero_points = q.zero_points.empty() ? nullptr : q.zero_points.data();
    side.block_axis_length = view.shape(axis);
    side.block_size = q.block_size < side.block_axis_length ? q.block_size : side.block_axis_length;
    side.block_inner = 1;
    for (int d = axis + 1; d < view.rank(); ++d) side.block_inner *= view.shape(d);
    side.blocks_per_row = (side.block_axis_length + side.block_size - 1) / side.block_size;
    if (side.block_size < longest_block_row) side.block_divider_of_size = make_block_divider(std::uint32_t(side.block_size));
    return axis;
}

inline void describe_side(const tensor_view& view, int which,
                          std::array<logical_dimension, max_rank>& dims, plan_side& side) {
    const auto strides = view.logical_strides();
    int channel = -1;
    side.base = static_cast<const unsigned char*>(view.data());
    side.type = view.type();
    if (view.is_quantized()) {
        const quantization& q = view.quant();
        side.quantized = true;
        side.scale = q.scale;
        side.zero_point = q.zero_point;
        if (q.per_channel()) {
            channel = view.has_axis_order() ? view.axis_order()[std::size_t(q.axis)] : q.axis;
            side.scales = q.scales.data();
            side.zero_points = q.zero_points.empty() ? nullptr : q.zero_points.data();
        }
    }
    const int block_axis = view.is_quantized() && view.quant().per_block() ? describe_blocks(view, side) : -1;
    for (int d = 0; d < view.rank(); ++d) {
        dims[std::size_t(d)].stride[which] = strides[std::size_t(d)];
        dims[std::size_t(d)].channel[which] = d == channel;
        dims[std::size_t(d)].block_axis[which] = d == block_axis;
    }
}

// A single channel is per-tensor quantization.
inline void fold_single_channel(plan_side& side) noexcept {
    if (side.scales == nullptr) return;
    side.scale = side.scales[0];
    side.zero_point = side.zero_points ? side.zero_points[0] : 0;
    side.scales = nullptr;
    side.zero_points = nullptr;
}

} // namespace detail

// keep_last_axis: keep the reference's last dimension on its own (row metrics).
inline pair_plan make_pair_plan(const tensor_view& reference, const tensor_view& target,
                                bool keep_last_axis = false) {
    pair_plan plan;
    // The everyday case, two dense views in the same order without per-channel
    // parameters, is one flat run: skip the per-dimension mapping (a sizeable
    // share of a call at a few thousand elements).
    auto flat = [](const tensor_view& view) {
        return view.is_contiguous() && !view.has_axis_order() &&
               !(view.is_quantized() && (view.quant().per_channel() || view.quant().per_block()));
    };
    if (!keep_last_axis && flat(reference) && flat(target) && reference.size() > 0) {
        auto describe_flat = [](const tensor_view& view, plan_side& side) {
            side.base = static_cast<const unsigned char*>(view.data());
            side.type = view.type();
            side.strides[0] = 1;
            if (view.is_quantized()) {
                side.quantized = true;
                side.scale = view.quant().scale;
                side.zero_point = view.quant().zero_point;
            }
        };
        describe_flat(reference, plan.reference);
        describe_flat(target, plan.target);
        plan.count = reference.size();
        plan.shape[0] = plan.count;
        plan.wide = reference.type() == dtype::float64 || target.type() == dtype::float64;
        return plan;
    }
    const int rank = reference.rank();
    const auto shape = reference.logical_shape();
    std::array<detail::logical_dimension, max_rank> dims{};
    for (int d = 0; d < rank; ++d) dims[std::size_t(d)] = {shape[std::size_t(d)], {0, 0}, {false, false}, d == rank - 1, {false, false}};
    detail::describe_side(reference, 0, dims, plan.reference);
    detail::describe_side(target, 1, dims, plan.target);
    plan.count = reference.size();
    plan.wide = reference.type() == dtype::float64 || target.type() == dtype::float64;

    std::array<detail::logical_dimension, max_rank> kept{};
    int kept_rank = 0;
    for (int d = 0; d < rank; ++d) {
        const auto& dim = dims[std::size_t(d)];
        if (dim.size == 1 && !(keep_last_axis && dim.last)) {
            if (dim.channel[0]) detail::fold_single_channel(plan.reference);
            if (dim.channel[1]) detail::fold_single_channel(plan.target);
            continue;
        }
        if (kept_rank > 0) {
            auto& outer = kept[std::size_t(kept_rank - 1)];
            // A block axis stays a plan dimension of its own, so runs split
            // at its rows (for_each_run: blocks restart with every row).
            const bool mergeable = !outer.channel[0] && !outer.channel[1] && !dim.channel[0] &&
                                   !dim.channel[1] && !(keep_last_axis && dim.last) && !outer.block_axis[0] &&
                                   !outer.block_axis[1] && !dim.block_axis[0] && !dim.block_axis[1] &&
                                   outer.stride[0] == dim.stride[0] * dim.size &&
                                   outer.stride[1] == dim.stride[1] * dim.size;
            if (mergeable) {
                outer.size *= dim.size;
                outer.stride[0] = dim.stride[0];
                outer.stride[1] = dim.stride[1];
                outer.last = dim.last;
                continue;
            }
        }
        kept[std::size_t(kept_rank++)] = dim;
    }
    if (kept_rank == 0) kept[std::size_t(kept_rank++)] = {1, {1, 1}, {false, false}, true, {false, false}};
    plan.rank = kept_rank;
    for (int d = 0; d < kept_rank; ++d) {
        const auto& dim = kept[std::size_t(d)];
        plan.shape[std::size_t(d)] = dim.size;
        plan.reference.strides[std::size_t(d)] = dim.stride[0];
        plan.target.strides[std::size_t(d)] = dim.stride[1];
        if (dim.channel[0]) plan.reference.channel_dim = d;
        if (dim.channel[1]) plan.target.channel_dim = d;
        if (dim.block_axis[0]) plan.reference.block_dim = d;
        if (dim.block_axis[1]) plan.target.block_dim = d;
    }
    if (plan.reference.scales == nullptr) plan.reference.channel_dim = -1;
    if (plan.target.scales == nullptr) plan.target.channel_dim = -1;
    return plan;
}

namespace detail {

// Where plan row `row` (an index over every dimension but the innermost)
// starts in `side`, in elements, and its index along the side's per-channel
// dimension when that is an outer one (else 0).
struct row_start {
    std::int64_t element;
    std::int64_t channel;
};
inline row_start locate_row(const pair_plan& plan, const plan_side& side, std::int64_t row) noexcept {
    row_start start{0, 0};
    for (int d = plan.rank - 2; d >= 0; --d) {
        const std::int64_t index = row % plan.shape[std::size_t(d)];
        row /= plan.shape[std::size_t(d)];
        start.element += index * side.strides[std::size_t(d)];
        if (d == side.channel_dim) start.channel = index;
    }
    return start;
}

// Plan rows in order from `row` on, with where each starts in both sides:
// locate_row's answers without its divisions per row (walks of many short
// rows, metric/evaluate_segments.hpp). Channels are not tracked.
class row_cursor {
public:
    row_cursor(const pair_plan& plan, std::int64_t row) noexcept : plan_(&plan) {
        for (int d = plan.rank - 2; d >= 0; --d) {
            index_[std::size_t(d)] = row % plan.shape[std::size_t(d)];
            row /= plan.shape[std::size_t(d)];
            reference_ += index_[std::size_t(d)] * plan.reference.strides[std::size_t(d)];
            target_ += index_[std::size_t(d)] * plan.target.strides[std::size_t(d)];
        }
    }
    std::int64_t reference_element() const noexcept { return reference_; }
    std::int64_t target_element() const noexcept { return target_; }

    // To the next row (past the last one: back to row 0's start).
    void advance() noexcept {
        for (int d = plan_->rank - 2; d >= 0; --d) {
            const auto u = std::size_t(d);
            reference_ += plan_->reference.strides[u];
            target_ += plan_->target.strides[u];
            if (++index_[u] < plan_->shape[u]) return;
            reference_ -= plan_->shape[u] * plan_->reference.strides[u];
            target_ -= plan_->shape[u] * plan_->target.strides[u];
            index_[u] = 0;
        }
    }

private:
    const pair_plan* plan_;
    std::array<std::int64_t, max_rank> index_{};
    std::int64_t reference_ = 0, target_ = 0;
};

} // namespace detail

} // namespace numgap::kernels
