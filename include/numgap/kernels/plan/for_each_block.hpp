#pragma once
// for_each_block: walks any sub-range of a pair_plan's flat reference-order
// index space in blocks of at most flush_interval elements, handing the
// callback two std::span<const T> (T = float, or double for float64 pairs):
// straight from memory when a side is contiguous T without quantization (zero
// copy), otherwise converted, dequantized and gathered (gather.hpp) into a
// stack buffer of flush_interval elements per side that stays in L1.
// Transposed layouts (NHWC against NCHW) are walked in tiles of several rows
// (see for_each_block's comment); tiles of plain float32 sides go through
// row/column copies and the plan's optional per-arch transpose_f32.
// Precondition: validate_pair() accepted the views behind the plan.
// Complexity: O(range) with O(rank) work per block; no heap allocation.
// Throws: whatever the callback throws.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

#include <numgap/core/dtype.hpp>
#include <numgap/core/prefetch.hpp>
#include <numgap/kernels/constants.hpp>
#include <numgap/kernels/plan/gather.hpp>
#include <numgap/kernels/plan/pair_plan.hpp>
#include <numgap/kernels/scalar_arch.hpp>
#include <numgap/kernels/source/transpose_tile.hpp>

namespace numgap::kernels {

namespace detail {
// A side contiguous along the second-innermost dimension but not the innermost
// (NHWC against NCHW, a transposed matrix): walking in reference order would
// touch a new cache line per element and reread each line once per row.
// Tiles of a transposed pair where both sides are plain float32 and each is
// contiguous along the last or the second-to-last dimension are handed over
// column-major, straight from memory or filled with column copies and tile
// transposes (whole vectors) instead of element gathers.
inline bool tile_by_transpose(const pair_plan& plan) noexcept {
    const std::size_t last = std::size_t(plan.rank - 1);
    auto plain = [&](const plan_side& side) {
        return side.type == dtype::float32 && !side.quantized && (side.strides[last] == 1 || side.strides[last - 1] == 1);
    };
    return plain(plan.reference) && plain(plan.target);
}

// Returns the tile of a plain float32 side holding element (first_row + r,
// column + j) at [j * rows + r], for r < rows, j < columns (column-major, see
// tile_by_transpose): the side's own memory when it is column-contiguous and
// dense (NHWC with all channels in the tile: zero copy), else `out` filled by
// column copies or, for a row-contiguous side, by a tile transpose.
inline const float* fill_tile_f32(const pair_plan& plan, const plan_side& side, std::int64_t position,
                                  std::size_t rows, std::size_t columns, float* out) noexcept {
    const std::size_t last = std::size_t(plan.rank - 1);
    const std::int64_t element =
        locate_row(plan, side, position / plan.shape[last]).element + (position % plan.shape[last]) * side.strides[last];
    const float* origin = reinterpret_cast<const float*>(side.base) + element;
    const std::int64_t row_stride = side.strides[last - 1], column_stride = side.strides[last];
    if (row_stride == 1 && column_stride != 1) {
        if (column_stride == std::int64_t(rows)) return origin;
        for (std::size_t j = 0; j < columns; ++j)
            std::memcpy(out + j * rows, origin + std::int64_t(j) * column_stride, rows * sizeof(float));
        return out;
    }
    // A transposed side is read as `rows` interleaved streams (one per row),
    // more than the hardware prefetcher follows: fetch the rows' next tile
    // while this one is transposed (+10-15% at 2^26 with 16 channels), and
    // for a tensor larger than any L2 also the tile 8 ahead into the outer
    // caches (core/prefetch.hpp; 16 channels at 2^26 on Zen 4: 46-48% ->
    // 48-54% of the read loop with AVX-512, 51-54% -> 58-61% with AVX2; in
    // cache, at 2^16 and 2^20, it cost up to a few per cent, hence the size
    // test).
    // Offsets wrap modulo 2^64 like the address arithmetic, so a negative
    // row stride still names the right lines.
    constexpr std::int64_t far_prefetch_from = std::int64_t(1) << 20; // elements: 4 MiB of float32 a side
    constexpr std::size_t far_tiles = 8;
    const bool far = plan.count > far_prefetch_from;
    for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t row_start = r * std::size_t(row_stride);
        numgap::detail::prefetch_bytes(origin, (row_start + columns) * sizeof(float), columns * sizeof(float));
        if (far)
            numgap::detail::prefetch_bytes_far(origin, (row_start + far_tiles * columns) * sizeof(float),
                                               columns * sizeof(float));
    }
    if (plan.transpose_f32 != nullptr)
        plan.transpose_f32(origin, row_stride, rows, columns, out, std::int64_t(rows));
    else
        transpose_scalar(origin, row_stride, rows, columns, out, std::int64_t(rows));
    return out;
}

inline bool transposed_pair(const pair_plan& plan) noexcept {
    if (plan.rank < 2) return false;
    const std::size_t last = std::size_t(plan.rank - 1);
    auto transposed = [&](const plan_side& side) { return side.strides[last] != 1 && side.strides[last - 1] == 1; };
    return transposed(plan.reference) || transposed(plan.target);
}
} // namespace detail

// Calls block(std::span<const T> reference, std::span<const T> target) for
// blocks that together cover flat reference-order positions [begin, end)
// exactly once, pairing reference and target elements of the same position.
// Blocks come in reference order and hold consecutive positions, except for
// transposed layouts (see detail::transposed_pair): there groups of up to 64
// whole rows (of one outer index, from any row the range reaches whole) are
// walked in tiles of (rows x columns), so a block holds a few
// consecutive positions of each of several rows (column-major when both sides
// are plain float32, see detail::tile_by_transpose). Reductions do not depend on
// the order; row metrics use for_each_row instead.
template <class T, class Block>
void for_each_block(const pair_plan& plan, std::int64_t begin, std::int64_t end, Block&& block) {
    alignas(64) T reference_buffer[flush_interval];
    alignas(64) T target_buffer[flush_interval];
    const bool reference_direct = detail::is_direct<T>(plan.reference, plan);
    const bool target_direct = detail::is_direct<T>(plan.target, plan);
    const std::int64_t inner = plan.shape[std::size_t(plan.rank - 1)];
    auto consecutive = [&](std::int64_t position, std::int64_t stop) {
        while (position < stop) {
            std::int64_t length = std::min<std::int64_t>(std::int64_t(flush_interval), stop - position);
            const std::int64_t left_in_row = inner - position % inner;
            const bool use_direct = (reference_direct || target_direct) &&
                                    left_in_row >= std::min(length, shortest_run);
            if (use_direct) length = std::min(length, left_in_row);
            const T* reference = nullptr;
            const T* target = nullptr;
            if (use_direct && reference_direct) {
                reference = detail::direct_pointer<T>(plan, plan.reference, position);
            } else {
                detail::gather(plan, plan.reference, position, std::size_t(length), reference_buffer);
                reference = reference_buffer;
            }
            if (use_direct && target_direct) {
                target = detail::direct_pointer<T>(plan, plan.target, position);
            } else {
                detail::gather(plan, plan.target, position, std::size_t(length), target_buffer);
                target = target_buffer;
            }
            block(std::span<const T>(reference, std::size_t(length)),
                  std::span<const T>(target, std::size_t(length)));
            position += length;
        }
    };
    if (!detail::transposed_pair(plan)) {
        consecutive(begin, end);
        return;
    }
    const bool by_transpose = detail::tile_by_transpose(plan);
    const std::int64_t rows_per_outer = plan.shape[std::size_t(plan.rank - 2)];
    std::int64_t position = begin;
    while (position < end) {
        const std::int64_t first_row = position / inner;
        // Whole rows from here, up to most_tile_rows of one outer index; a
        // part of a row goes position by position.
        const std::int64_t group_rows =
            std::min({most_tile_rows, rows_per_outer - first_row % rows_per_outer, (end - position) / inner});
        if (position % inner != 0 || group_rows == 0) {
            const std::int64_t stop = std::min(end, (first_row + 1) * inner);
            consecutive(position, stop);
            position = stop;
            continue;
        }
        const std::int64_t group_end = position + group_rows * inner;
        const std::int64_t tile_columns = std::max<std::int64_t>(1, std::int64_t(flush_interval) / group_rows);
        for (std::int64_t column = 0; column < inner; column += tile_columns) {
            const std::int64_t columns = std::min(tile_columns, inner - column);
            if constexpr (std::is_same_v<T, float>) {
                if (by_transpose) {
                    const std::int64_t at = first_row * inner + column;
                    const float* reference = detail::fill_tile_f32(plan, plan.reference, at, std::size_t(group_rows),
                                                                   std::size_t(columns), reference_buffer);
                    const float* target = detail::fill_tile_f32(plan, plan.target, at, std::size_t(group_rows),
                                                                std::size_t(columns), target_buffer);
                    block(std::span<const T>(reference, std::size_t(group_rows * columns)),
                          std::span<const T>(target, std::size_t(group_rows * columns)));
                    continue;
                }
            }
            for (std::int64_t r = 0; r < group_rows; ++r) {
                const std::int64_t at = (first_row + r) * inner + column;
                detail::gather(plan, plan.reference, at, std::size_t(columns), reference_buffer + r * columns);
                detail::gather(plan, plan.target, at, std::size_t(columns), target_buffer + r * columns);
            }
            block(std::span<const T>(reference_buffer, std::size_t(group_rows * columns)),
                  std::span<const T>(target_buffer, std::size_t(group_rows * columns)));
        }
        position = group_end;
    }
}

} // namespace numgap::kernels
