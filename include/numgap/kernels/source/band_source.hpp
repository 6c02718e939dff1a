#pragma once
// The two sides of a band of a transposed pair (NHWC against NCHW), as the
// fused kernel reads them: `width` rows (the vector width, one lane per row)
// walked column by column, so position p is row p % width of column
// p / width. Both sources read the tensor where it lies; no tile buffer.
//   row_band_source<Arch, Group>: the side stored row by row (element (c, j)
//     at data[c * row_stride + j]); load_group(i) gives the Group columns
//     from i / width on with one load per row (128 bits for four columns, a
//     whole vector for `width`) and an in-register transpose
//     (isa::load_columns), so memory is read as `width` sequential streams,
//     each line once, interleaved with the arithmetic. load(i) alone gathers
//     one column element by element: the kernel takes it only for the last
//     columns of a band (fewer than Group) and for the careful re-reads of a
//     chunk holding a NaN or an infinity.
//   column_band_source<Arch, Group>: the side stored column by column
//     (element (c, j) at data[j * column_stride + c]: NHWC, one column's rows
//     contiguous): load_group(i) / load(i) are plain vector loads.
//   Group: four columns (every ISA), or `width` (AVX-512's square form,
//     kernel_table::band_square_f32: sixteen columns, each row's line read
//     whole by one load; table/accumulate_bands.hpp says when).
// Why: walking a transposed pair in tiles copied through an L1 buffer read
// the row-major side in bursts of a tile's width, then computed: the loads
// and the arithmetic took turns (51% of the two-stream read at 2^26 on Zen
// 5); fed column by column both stay in flight together
// (fused/fused_kernel.hpp, table/accumulate_bands.hpp).
// prefetch(i, n): with a prefetch_offset (where the walk reads later, in
// elements from data; 0: none), both sources fetch what they read at
// i - fused_prefetch_distance (the kernel's own lead, taken off), at that
// offset: the piece accumulate_bands reads a few pieces on, whatever the
// number of rows. A row-major side fetches one line per row every 16
// columns: with four-column calls, a quarter of the rows a call.
// Precondition: row_stride / column_stride address valid elements for every
// position read; positions are multiples of width where a vector is loaded.
// Complexity: O(1) per call (load: O(width)). Throws: nothing.
#include <cstddef>
#include <cstdint>
#include <utility>

#include <numgap/core/config.hpp>
#include <numgap/core/isa_namespace.hpp>
#include <numgap/core/prefetch.hpp>
#include <numgap/kernels/constants.hpp>
#include <numgap/kernels/isa.hpp>
#include <numgap/kernels/source/simd_lanes.hpp>

namespace numgap::kernels::detail {
inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

// Prefetches the floats at base + (offset + k * step) for k < Count, the
// addresses formed as integers (core/prefetch.hpp: they may lie past the
// end). Unrolled and always inlined, as the sources' prefetch: GCC 12 takes
// a call or a loop that only prefetches for one without effect and, under
// a condition, deleted it (the band walk ran without its prefetches).
template <std::size_t... K>
NUMGAP_ALWAYS_INLINE void prefetch_each(const float* base, std::int64_t offset, std::int64_t step,
                                        std::index_sequence<K...>) noexcept {
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(base) + std::uintptr_t(offset) * sizeof(float);
    (numgap::detail::prefetch(
         reinterpret_cast<const void*>(first + std::uintptr_t(std::int64_t(K) * step) * sizeof(float))),
     ...);
}

template <class Arch, std::size_t Group = 4>
struct row_band_source {
    using value_type = float;
    using ops = lanes<Arch, float>;
    using batch = typename ops::batch;
    static constexpr std::size_t width = ops::width;
    static constexpr std::size_t group_vectors = Group; // columns per load_group
    static_assert(Group == 4 || Group == width);
    const float* data;
    std::int64_t row_stride;
    std::int64_t prefetch_offset;

    NUMGAP_ALWAYS_INLINE void load_group(std::size_t i, batch (&out)[group_vectors]) const noexcept {
        isa::load_columns(Arch{}, data + std::int64_t(i / width), row_stride, out);
    }
    batch load(std::size_t i) const noexcept {
        alignas(64) float column[width];
        for (std::size_t c = 0; c < width; ++c) column[c] = at(i + c);
        return batch::load_aligned(column);
    }
    float at(std::size_t i) const noexcept {
        return data[std::int64_t(i % width) * row_stride + std::int64_t(i / width)];
    }
    NUMGAP_ALWAYS_INLINE void prefetch(std::size_t i, std::size_t) const noexcept {
        if (prefetch_offset == 0) return;
        static_assert(width * Group % 16 == 0);
        constexpr auto rows_per_call = std::int64_t(width * Group / 16), calls = std::int64_t(16 / Group);
        const std::int64_t column = (std::int64_t(i) - std::int64_t(fused_prefetch_distance)) / std::int64_t(width);
        prefetch_each(data,
                      prefetch_offset + column / std::int64_t(Group) % calls * rows_per_call * row_stride + column,
                      row_stride, std::make_index_sequence<std::size_t(rows_per_call)>{});
    }
    row_band_source advanced(std::size_t k) const noexcept {
        return {data + std::int64_t(k / width), row_stride, prefetch_offset};
    }
};

template <class Arch, std::size_t Group = 4>
struct column_band_source {
    using value_type = float;
    using ops = lanes<Arch, float>;
    using batch = typename ops::batch;
    static constexpr std::size_t width = ops::width;
    static constexpr std::size_t group_vectors = Group; // as row_band_source's: one address serves the group
    const float* data;
    std::int64_t column_stride;
    std::int64_t prefetch_offset;

    NUMGAP_ALWAYS_INLINE void load_group(std::size_t i, batch (&out)[group_vectors]) const noexcept {
        const float* first = data + std::int64_t(i / width) * column_stride;
        for (std::size_t v = 0; v < group_vectors; ++v) out[v] = ops::load(first + std::int64_t(v) * column_stride);
    }
    batch load(std::size_t i) const noexcept { return ops::load(data + std::int64_t(i / width) * column_stride); }
    float at(std::size_t i) const noexcept {
        return data[std::int64_t(i / width) * column_stride + std::int64_t(i % width)];
    }
    // n is one step of the kernel: group_vectors columns.
    NUMGAP_ALWAYS_INLINE void prefetch(std::size_t i, [[maybe_unused]] std::size_t n) const noexcept {
        NUMGAP_ASSERT(n == group_vectors * width);
        if (prefetch_offset == 0) return;
        const std::int64_t column = (std::int64_t(i) - std::int64_t(fused_prefetch_distance)) / std::int64_t(width);
        prefetch_each(data, prefetch_offset + column * column_stride, column_stride,
                      std::make_index_sequence<group_vectors>{});
    }
    column_band_source advanced(std::size_t k) const noexcept {
        return {data + std::int64_t(k / width) * column_stride, column_stride, prefetch_offset};
    }
};

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace numgap::kernels::detail
