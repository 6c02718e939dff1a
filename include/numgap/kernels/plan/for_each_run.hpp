#pragma once
// for_each_run: walks a pair_plan as stretches that both sides store
// contiguously, handing each over as two stored_runs (address, dtype, the
// stretch's scale and zero point), so the fused kernel reads the data where it
// lies and widens narrow types in registers (kernel_table::run_f32), with no
// intermediate float buffer at all.
//
// runs_in_registers(plan) says whether the whole plan can be walked so: both
// sides unit-stride along the innermost plan dimension, rows of at least
// shortest_run elements (shorter rows would make one kernel call per few
// elements; the block path gathers across rows instead), a dtype pair that
// run_f32 reads, no float64, and per-channel parameters only along an outer
// dimension (NCHW per-channel data: constant within a row), with every zero
// point in the exact range. Block-quantized sides (core/quantization.hpp)
// run in registers when their blocks lie along the innermost plan dimension
// (blocks along the last axis: block_source.hpp), rows below 2^31 elements;
// each run then stays within one row. Everything else (NHWC layouts,
// per-channel along the innermost axis, blocks along another axis, int32,
// bool, float64) takes for_each_block.
//
// Runs come in reference order and split only at row ends and at begin/end.
// Complexity: runs_in_registers O(rank + channels); for_each_run O(rank) per
// row. Throws: whatever the callback throws.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <numgap/core/dtype.hpp>
#include <numgap/kernels/constants.hpp>
#include <numgap/kernels/plan/pair_plan.hpp>
#include <numgap/kernels/plan/stored_run.hpp>

namespace numgap::kernels {

inline bool runs_in_registers(const pair_plan& plan) noexcept {
    if (plan.wide || !run_pair_supported(plan.reference.type, plan.target.type)) return false;
    const int last = plan.rank - 1;
    if (plan.shape[std::size_t(last)] < shortest_run) return false;
    auto side_reads = [&](const plan_side& side) {
        if (side.strides[std::size_t(last)] != 1) return false;
        if (side.block_scales != nullptr)
            return side.block_dim == last && side.block_inner == 1 && side.block_axis_length < longest_block_row &&
                   (side.type == dtype::int8 || side.type == dtype::uint8 || is_packed(side.type) ||
                    is_mx_element(side.type));
        if (side.scales == nullptr) return widens_in_registers(side.type, side.zero_point);
        if (side.channel_dim == last) return false;
        if (side.zero_points != nullptr)
            for (std::int64_t c = 0; c < plan.shape[std::size_t(side.channel_dim)]; ++c)
                if (!widens_in_registers(side.type, side.zero_points[c])) return false;
        return true;
    };
    return side_reads(plan.reference) && side_reads(plan.target);
}

namespace detail {
// The run of `side` that starts at element `offset_in_row` of plan row `row`.
inline stored_run stored_run_at(const pair_plan& plan, const plan_side& side, std::int64_t row,
                                std::int64_t offset_in_row) noexcept {
    const row_start start = locate_row(plan, side, row);
    const std::int64_t element = start.element + offset_in_row; // unit stride along the row
    const std::int64_t channel = start.channel;
    stored_run run{side.base + element * std::int64_t(size_of(side.type)), side.type, 1.0f, 0};
    if (is_packed(side.type)) {
        run.data = side.base + element / 2;
        run.nibble = std::uint8_t(element % 2);
    }
    if (side.block_scales != nullptr) {
        // runs_in_registers: the row is the block axis, so element / length is its index.
        const std::int64_t block_row = element / side.block_axis_length;
        run.block_scales = side.block_scales + block_row * side.blocks_per_row;
        run.block_zero_points = side.block_zero_points ? side.block_zero_points + block_row * side.blocks_per_row : nullptr;
        run.offset_in_row = std::uint32_t(element % side.block_axis_length);
        run.block_size = std::uint32_t(side.block_size);
        run.divider = side.block_divider_of_size;
    } else if (side.scales != nullptr) {
        run.scale = side.scales[channel];
        run.zero_point = side.zero_points != nullptr ? side.zero_points[channel] : 0;
    } else if (side.quantized) {
        run.scale = side.scale;
        run.zero_point = side.zero_point;
    }
    return run;
}
} // namespace detail

// Calls run(const stored_run& reference, const stored_run& target, std::size_t n)
// for stretches covering flat reference-order positions [begin, end) exactly
// once. Precondition: runs_in_registers(plan).
template <class Run>
void for_each_run(const pair_plan& plan, std::int64_t begin, std::int64_t end, Run&& run) {
    const std::int64_t inner = plan.shape[std::size_t(plan.rank - 1)];
    std::int64_t position = begin;
    while (position < end) {
        const std::int64_t row = position / inner, offset_in_row = position % inner;
        const std::int64_t length = std::min(end - position, inner - offset_in_row);
        run(detail::stored_run_at(plan, plan.reference, row, offset_in_row),
            detail::stored_run_at(plan, plan.target, row, offset_in_row), std::size_t(length));
        position += length;
    }
}

} // namespace numgap::kernels
