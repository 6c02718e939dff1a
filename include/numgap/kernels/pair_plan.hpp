#pragma once
// pair_plan: how to walk a validated (reference, target) pair in reference
// order. Both views are mapped through their axis_order to reference
// dimension order, dimensions of size 1 are dropped and neighbouring
// dimensions that are contiguous on both sides are coalesced, so the common
// case (both contiguous) becomes one flat run.
// for_each_block() then walks any sub-range of the flat reference-order index
// space (in tiles of several rows for transposed layouts, see its comment)
// in blocks of at most flush_interval elements, handing the callback two
// std::span<const T> (T = float, or double for float64 pairs): straight from
// memory when a side is contiguous T without quantization (zero copy),
// otherwise converted, dequantized and gathered into a stack buffer of
// flush_interval elements per side that stays in L1 (unit-stride runs through
// the optional per-arch widen_f32; tiles of transposed float32 layouts
// through row/column copies and the optional per-arch transpose_f32).
// Dequantization is float32 arithmetic, scale * float(q - zero_point), rounded
// once, whatever the block type, so every pass sees the same values
// (q - zero_point is formed exactly, never in int32; above 2^24 in magnitude,
// i.e. int32 data or an extreme zero point, it rounds to float32);
// per-channel parameters are looked up by the element's channel index.
// Precondition: validate_pair() accepted the views (make_pair_plan does not
// re-check). Complexity: make_pair_plan O(rank); for_each_block O(range) with
// O(rank) work per block; no heap allocation. Throws: whatever the callback throws.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

#include <numgap/core/config.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/half.hpp>
#include <numgap/core/prefetch.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/fused_kernel.hpp>
#include <numgap/kernels/kernel_table.hpp>
#include <numgap/kernels/transpose_tile.hpp>

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
    void (*widen_f32)(const void*, dtype, std::size_t, bool, float, std::int32_t, float*) noexcept = nullptr;
    // Optional vectorised tile transpose for transposed float32 layouts (set
    // like widen_f32); null: a scalar transpose.
    void (*transpose_f32)(const float*, std::int64_t, std::size_t, std::size_t, float*, std::int64_t) noexcept = nullptr;
};

namespace detail {

struct logical_dimension {
    std::int64_t size;
    std::int64_t stride[2];
    bool channel[2];
    bool last;
};

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
    for (int d = 0; d < view.rank(); ++d) {
        dims[std::size_t(d)].stride[which] = strides[std::size_t(d)];
        dims[std::size_t(d)].channel[which] = d == channel;
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
        return view.is_contiguous() && !view.has_axis_order() && !(view.is_quantized() && view.quant().per_channel());
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
    for (int d = 0; d < rank; ++d) dims[std::size_t(d)] = {shape[std::size_t(d)], {0, 0}, {false, false}, d == rank - 1};
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
            const bool mergeable = !outer.channel[0] && !outer.channel[1] && !dim.channel[0] &&
                                   !dim.channel[1] && !(keep_last_axis && dim.last) &&
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
    if (kept_rank == 0) kept[std::size_t(kept_rank++)] = {1, {1, 1}, {false, false}, true};
    plan.rank = kept_rank;
    for (int d = 0; d < kept_rank; ++d) {
        const auto& dim = kept[std::size_t(d)];
        plan.shape[std::size_t(d)] = dim.size;
        plan.reference.strides[std::size_t(d)] = dim.stride[0];
        plan.target.strides[std::size_t(d)] = dim.stride[1];
        if (dim.channel[0]) plan.reference.channel_dim = d;
        if (dim.channel[1]) plan.target.channel_dim = d;
    }
    if (plan.reference.scales == nullptr) plan.reference.channel_dim = -1;
    if (plan.target.scales == nullptr) plan.target.channel_dim = -1;
    return plan;
}

namespace detail {

template <class Source, class T>
void convert_run_typed(const plan_side& side, std::int64_t offset, std::int64_t stride,
                       std::size_t n, std::int64_t channel, std::int64_t channel_step,
                       T* out) noexcept {
    // bool is read as its byte: a stored byte other than 0 or 1 (C, numpy
    // views) would be undefined behaviour through a bool lvalue; nonzero is true.
    using stored = std::conditional_t<std::is_same_v<Source, bool>, std::uint8_t, Source>;
    const stored* source = reinterpret_cast<const stored*>(side.base) + offset;
    auto raw = [&](std::size_t i) -> T {
        const stored value = source[std::int64_t(i) * stride];
        if constexpr (std::is_same_v<Source, float16> || std::is_same_v<Source, bfloat16>)
            return T(to_float(value));
        else if constexpr (std::is_same_v<Source, bool>)
            return value != 0 ? T(1) : T(0);
        else
            return T(value);
    };
    if constexpr (std::is_integral_v<Source> && !std::is_same_v<Source, bool>) {
        if (side.quantized) {
            if (side.scales == nullptr || channel_step == 0) {
                const float scale = side.scales ? side.scales[channel] : side.scale;
                const std::int64_t zero_point =
                    side.scales ? (side.zero_points ? side.zero_points[channel] : 0) : side.zero_point;
                // q - zero_point spans up to 2^33 (int32 q, int32 zero point), so
                // int32 arithmetic would overflow; double holds it exactly (53-bit
                // mantissa), so float(difference) rounds once, as from int64, and
                // the unit-stride loop still vectorises (int32 -> double converts
                // natively, int64 -> float does not before AVX-512DQ).
                const double zero = double(zero_point);
                if (stride == 1) {
                    if constexpr (sizeof(Source) < 4) {
                        if (zero_point >= -(1 << 24) && zero_point <= (1 << 24)) {
                            // The everyday case: int32 is exact here and
                            // vectorises at full float width.
                            const std::int32_t zero32 = std::int32_t(zero_point);
                            for (std::size_t i = 0; i < n; ++i)
                                out[i] = T(scale * float(std::int32_t(source[i]) - zero32));
                            return;
                        }
                    }
                    for (std::size_t i = 0; i < n; ++i) out[i] = T(scale * float(double(source[i]) - zero));
                    return;
                }
                for (std::size_t i = 0; i < n; ++i)
                    out[i] = T(scale * float(double(source[std::int64_t(i) * stride]) - zero));
            } else {
                for (std::size_t i = 0; i < n; ++i) {
                    const std::int64_t c = channel + std::int64_t(i);
                    const std::int64_t zero_point = side.zero_points ? side.zero_points[c] : 0;
                    out[i] = T(side.scales[c] * float(double(source[std::int64_t(i) * stride]) - double(zero_point)));
                }
            }
            return;
        }
    }
    if (stride == 1) {
        // Unit stride, spelled out so the compiler vectorises the conversion.
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr (std::is_same_v<Source, float16> || std::is_same_v<Source, bfloat16>)
                out[i] = T(to_float(source[i]));
            else if constexpr (std::is_same_v<Source, bool>)
                out[i] = source[i] != 0 ? T(1) : T(0);
            else
                out[i] = T(source[i]);
        }
        return;
    }
    for (std::size_t i = 0; i < n; ++i) out[i] = raw(i);
}

// Converts n elements starting at element `offset`, `stride` apart; channel is
// the channel index of the first element, advancing by channel_step per element.
template <class T>
void convert_run(const plan_side& side, std::int64_t offset, std::int64_t stride, std::size_t n,
                 std::int64_t channel, std::int64_t channel_step, T* out,
                 void (*widen_f32)(const void*, dtype, std::size_t, bool, float, std::int32_t, float*) noexcept = nullptr) noexcept {
    if constexpr (std::is_same_v<T, float>) {
        if (widen_f32 != nullptr && stride == 1 && side.scales == nullptr && widens_to_f32(side.type)) {
            widen_f32(side.base + offset * std::int64_t(size_of(side.type)), side.type, n, side.quantized, side.scale,
                      side.zero_point, out);
            return;
        }
    }
    switch (side.type) {
    case dtype::float32: return convert_run_typed<float>(side, offset, stride, n, channel, channel_step, out);
    case dtype::float64: return convert_run_typed<double>(side, offset, stride, n, channel, channel_step, out);
    case dtype::float16: return convert_run_typed<float16>(side, offset, stride, n, channel, channel_step, out);
    case dtype::bfloat16: return convert_run_typed<bfloat16>(side, offset, stride, n, channel, channel_step, out);
    case dtype::int8: return convert_run_typed<std::int8_t>(side, offset, stride, n, channel, channel_step, out);
    case dtype::uint8: return convert_run_typed<std::uint8_t>(side, offset, stride, n, channel, channel_step, out);
    case dtype::int16: return convert_run_typed<std::int16_t>(side, offset, stride, n, channel, channel_step, out);
    case dtype::uint16: return convert_run_typed<std::uint16_t>(side, offset, stride, n, channel, channel_step, out);
    case dtype::int32: return convert_run_typed<std::int32_t>(side, offset, stride, n, channel, channel_step, out);
    case dtype::boolean: return convert_run_typed<bool>(side, offset, stride, n, channel, channel_step, out);
    }
    NUMGAP_ASSERT(false && "validate_pair rejects unknown dtypes");
}

template <class T>
constexpr bool is_direct(const plan_side& side, const pair_plan& plan) noexcept {
    return !side.quantized && side.type == dtype_of<T>::value && plan.shape[std::size_t(plan.rank - 1)] > 0 &&
           side.strides[std::size_t(plan.rank - 1)] == 1;
}

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

// Fills `out` with n elements of `side` starting at flat position `position`,
// crossing rows of the innermost dimension as needed.
template <class T>
void gather(const pair_plan& plan, const plan_side& side, std::int64_t position, std::size_t n,
            T* out) noexcept {
    const int last = plan.rank - 1;
    const std::int64_t inner = plan.shape[std::size_t(last)];
    while (n > 0) {
        const std::int64_t offset_in_row = position % inner;
        const std::size_t length = std::size_t(std::min<std::int64_t>(std::int64_t(n), inner - offset_in_row));
        const row_start start = locate_row(plan, side, position / inner);
        const std::int64_t element = start.element + offset_in_row * side.strides[std::size_t(last)];
        std::int64_t channel = start.channel;
        std::int64_t channel_step = 0;
        if (side.channel_dim == last) {
            channel = offset_in_row;
            channel_step = 1;
        }
        convert_run(side, element, side.strides[std::size_t(last)], length, channel, channel_step, out,
                    plan.widen_f32);
        out += length;
        n -= length;
        position += std::int64_t(length);
    }
}

template <class T>
const T* direct_pointer(const pair_plan& plan, const plan_side& side, std::int64_t position) noexcept {
    const int last = plan.rank - 1;
    const std::int64_t inner = plan.shape[std::size_t(last)];
    return reinterpret_cast<const T*>(side.base) + locate_row(plan, side, position / inner).element + position % inner;
}

} // namespace detail

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
    // while this one is transposed (+10-15% at 2^26 with 16 channels).
    // Offsets wrap modulo 2^64 like the address arithmetic, so a negative
    // row stride still names the right lines.
    for (std::size_t r = 0; r < rows; ++r)
        numgap::detail::prefetch_bytes(origin, (r * std::size_t(row_stride) + columns) * sizeof(float),
                                       columns * sizeof(float));
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
// transposed layouts (see detail::transposed_pair): there whole groups of up to
// 64 rows are walked in tiles of (rows x columns), so a block holds a few
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
    // Below this many elements left in a row, gathering across rows beats
    // handing over tiny zero-copy blocks.
    constexpr std::int64_t shortest_direct_run = 256;
    auto consecutive = [&](std::int64_t position, std::int64_t stop) {
        while (position < stop) {
            std::int64_t length = std::min<std::int64_t>(std::int64_t(flush_interval), stop - position);
            const std::int64_t left_in_row = inner - position % inner;
            const bool use_direct = (reference_direct || target_direct) &&
                                    left_in_row >= std::min(length, shortest_direct_run);
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
    constexpr std::int64_t most_group_rows = 64;
    std::int64_t position = begin;
    while (position < end) {
        const std::int64_t row = position / inner;
        const std::int64_t row_in_outer = row % rows_per_outer;
        const std::int64_t first_row = row - row_in_outer % most_group_rows;
        const std::int64_t group_rows = std::min(most_group_rows, rows_per_outer - (row_in_outer - row_in_outer % most_group_rows));
        const std::int64_t group_begin = first_row * inner, group_end = group_begin + group_rows * inner;
        if (position != group_begin || group_end > end) {
            const std::int64_t stop = std::min(end, group_end);
            consecutive(position, stop);
            position = stop;
            continue;
        }
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
