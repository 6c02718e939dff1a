#pragma once
// aligned_block_source<Arch, Codes, ZeroPoints>: block_source (block_source.hpp)
// for the runs where no vector can straddle two blocks, which is most of them:
// the block size a power of two no smaller than the vector width and the run
// starting at a multiple of the width within its row (GPTQ/AWQ groups of
// 32-128, MX's 32), or the whole run inside one block (so also per-tensor and
// per-channel packed codes, whose run has one scale). Then the block of the
// vector at i is (first_position + i) >> shift, and a vector is one scale
// load, one broadcast and the element widening (block_codes.hpp): no divide,
// no straddle test, no null test of the scales or zero points (ZeroPoints
// says at compile time whether there are any). block_source spends about as
// many scalar instructions on finding the block as on the widening itself,
// and even at 2^26 elements the block formats are bound by that work, not
// by memory (kernels/README.md, "Block formats with aligned_block_source").
// aligned_block_layout() says whether a run qualifies and gives the fields;
// kernel_table.hpp picks this source then, block_source otherwise.
// Values are those of block_source bit for bit (the same element step).
// Preconditions: bytes at a byte boundary (packed codes start at nibble 0);
// load(i) and advanced(k) at multiples of the width (the fused kernel reads
// vectors from each chunk's start, and chunks start at multiples of
// flush_interval); first_position + n below 2^31.
// Complexity: O(1) per call. Throws: nothing.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>

#include <numgap/core/isa_namespace.hpp>
#include <numgap/core/prefetch.hpp>
#include <numgap/kernels/source/block_codes.hpp>
#include <numgap/kernels/source/simd_lanes.hpp>

namespace numgap::kernels::detail {
inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

template <class Arch, class Codes, bool ZeroPoints>
struct aligned_block_source {
    static_assert(block_codes<Codes>, "aligned_block_source reads 8-bit integers, packed 4-bit codes and MX element codes.");
    static_assert(!ZeroPoints || !float_codes<Codes>, "MX element codes have no zero points.");
    using value_type = float;
    using batch = typename lanes<Arch, float>::batch;
    static constexpr std::size_t width = lanes<Arch, float>::width;

    const std::uint8_t* bytes;  // element 0 is byte 0, or its low nibble
    const float* block_scales;  // element i uses block (first_position + i) >> shift
    const std::int32_t* block_zero_points; // read only with ZeroPoints
    std::uint32_t first_position;
    std::uint32_t shift;

    float at(std::size_t i) const noexcept {
        const std::uint32_t block = block_of(i);
        return dequantize_code<Codes>(bytes, i, block_scales[block], zero_point_of(block));
    }

    aligned_block_source advanced(std::size_t k) const noexcept {
        aligned_block_source moved = *this;
        moved.bytes += packed_codes<Codes> ? k / 2 : k;
        moved.first_position += std::uint32_t(k);
        return moved;
    }

    void prefetch(std::size_t i, std::size_t n) const noexcept {
        if constexpr (packed_codes<Codes>)
            numgap::detail::prefetch_bytes(bytes, i / 2, n / 2);
        else
            numgap::detail::prefetch_bytes(bytes, i, n);
    }

    batch load(std::size_t i) const noexcept {
        const std::uint32_t block = block_of(i);
        batch widened = widen_codes<Arch, Codes>(bytes, i, block_scales[block], zero_point_of(block));
        lanes<Arch, float>::pin(widened); // rounded, as keep_rounded
        return widened;
    }

private:
    std::uint32_t block_of(std::size_t i) const noexcept { return (first_position + std::uint32_t(i)) >> shift; }
    std::int32_t zero_point_of(std::uint32_t block) const noexcept {
        if constexpr (ZeroPoints)
            return block_zero_points[block];
        else
            return 0;
    }
};

// The fields of aligned_block_source for a block-scaled run of n elements
// read `width` at a time, from block_source's (its row's block scales and
// zero points, its first element's position in the row and nibble, the
// block size), or nothing when a vector could straddle two blocks or a
// packed run starts mid-byte (block_source reads those).
struct aligned_block_fields {
    const float* block_scales;
    const std::int32_t* block_zero_points;
    std::uint32_t first_position;
    std::uint32_t shift;
};

inline std::optional<aligned_block_fields> aligned_block_layout(const float* block_scales,
                                                                const std::int32_t* block_zero_points,
                                                                std::uint32_t offset_in_row, std::size_t nibble,
                                                                std::uint32_t block_size, std::size_t n,
                                                                std::size_t width) noexcept {
    // Positions are 32-bit: a longer run (a per-tensor one; block rows stay
    // below 2^31) is block_source's.
    if (block_scales == nullptr || block_size == 0 || nibble != 0 || n == 0 || n >= (std::size_t(1) << 31))
        return std::nullopt;
    const std::uint32_t first_block = offset_in_row / block_size;
    if (first_block == (offset_in_row + std::uint32_t(n - 1)) / block_size) {
        // One block: every position maps to it (positions stay below 2^31).
        return aligned_block_fields{block_scales + first_block,
                                    block_zero_points ? block_zero_points + first_block : nullptr, 0, 31};
    }
    const bool power_of_two = (block_size & (block_size - 1)) == 0;
    if (!power_of_two || block_size < width || offset_in_row % width != 0) return std::nullopt;
    std::uint32_t shift = 0;
    while ((std::uint32_t(1) << shift) < block_size) ++shift;
    return aligned_block_fields{block_scales, block_zero_points, offset_in_row, shift};
}

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace numgap::kernels::detail
