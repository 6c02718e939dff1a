#pragma once
// block_source<Arch, Codes>: the kernel source (kernel_source.hpp's
// interface: load, at, advanced, prefetch) for integer codes dequantized in
// registers with per-tensor or per-block parameters, never through a float
// copy. Codes is std::int8_t, std::uint8_t, or a packed 4-bit type
// (int4_codes, uint4_codes: two per byte, low nibble first, core/dtype.hpp),
// or an MX element format (float codes: e2m1_codes, packed the same way;
// float6_e2m3fn / float6_e3m2fn and float8_e4m3fn / float8_e5m2, one a byte),
// whose values are scale * decode(code) (core/float_mx.hpp), no zero point.
//
// Two separable steps:
//   element: what the codes of one element or vector are worth given a scale
//     and zero point (block_codes.hpp, shared with aligned_block_source);
//   block: which scale and zero point a vector uses. Without block_scales
//     the run's own (per tensor, or one channel's); with them, the block of
//     the vector's position in its row (offset_in_row / block_size, by
//     divider; plan/stored_run.hpp fills them per run).
// Every integer value is scale * float(q - zero_point), rounded once, as the
// scalar oracle and every other dequantization path (zero points within
// +-2^24); every float one scale * decode(code) (1 * decode without scales).
//
// This is the general source: kernel_table.hpp gives the runs whose vectors
// all lie in one block at a byte boundary (power-of-two blocks of at least
// the width, aligned runs; one block per run) to aligned_block_source, which
// finds a vector's block by a shift. Here each vector tests whether its
// elements share one block (first and last element's blocks agree) and, for
// packed codes, start at a byte: then one vector load of codes and one
// broadcast of the block's scale. Other vectors (straddling two blocks, a
// packed run starting at an odd element) are filled element by element
// through at(): correct, several times slower.
// Precondition: offset_in_row + n and block_size below longest_block_row. Complexity: O(1) per call. Throws: nothing.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include <numgap/core/isa_namespace.hpp>
#include <numgap/core/prefetch.hpp>
#include <numgap/kernels/isa.hpp>
#include <numgap/kernels/block_divider.hpp>
#include <numgap/kernels/scalar_arch.hpp>
#include <numgap/kernels/source/block_codes.hpp>
#include <numgap/kernels/source/simd_lanes.hpp>

namespace numgap::kernels::detail {
inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

template <class Arch, class Codes>
struct block_source {
    static_assert(block_codes<Codes>, "block_source reads 8-bit integers, packed 4-bit codes and MX element codes.");
    using value_type = float;
    using batch = typename lanes<Arch, float>::batch;
    static constexpr std::size_t width = lanes<Arch, float>::width;

    const std::uint8_t* bytes; // element 0 is byte 0 (8-bit codes) or its nibble `nibble`
    std::size_t nibble = 0;    // packed codes: 0 or 1
    float scale = 1.0f;        // without block_scales
    std::int32_t zero_point = 0;
    const float* block_scales = nullptr;
    const std::int32_t* block_zero_points = nullptr;
    std::uint32_t offset_in_row = 0;
    std::uint32_t block_size = 0;
    block_divider divider{};

    float at(std::size_t i) const noexcept {
        const auto [block_scale, block_zero_point] = parameters(i);
        return dequantize_code<Codes>(bytes, element(i), block_scale, block_zero_point);
    }

    block_source advanced(std::size_t k) const noexcept {
        block_source moved = *this;
        if constexpr (packed_codes<Codes>) {
            moved.bytes += (nibble + k) / 2;
            moved.nibble = (nibble + k) % 2;
        } else {
            moved.bytes += k;
        }
        moved.offset_in_row += std::uint32_t(k); // within one row: stays below 2^31
        return moved;
    }

    void prefetch(std::size_t i, std::size_t n) const noexcept {
        if constexpr (!std::is_same_v<Arch, scalar_arch>) {
            if constexpr (packed_codes<Codes>)
                numgap::detail::prefetch_bytes(bytes, (nibble + i) / 2, n / 2 + 1);
            else
                numgap::detail::prefetch_bytes(bytes, i, n);
        }
    }

    batch load(std::size_t i) const noexcept {
        batch widened = widen(i);
        lanes<Arch, float>::pin(widened); // rounded, as keep_rounded
        return widened;
    }

private:
    struct block_parameters {
        float scale;
        std::int32_t zero_point;
    };

    // Element i's position counted from byte 0 (nibble counts for packed codes only).
    std::size_t element(std::size_t i) const noexcept { return packed_codes<Codes> ? nibble + i : i; }

    block_parameters parameters(std::size_t i) const noexcept {
        if (block_scales == nullptr) return {scale, zero_point};
        const std::uint32_t block = divide(offset_in_row + std::uint32_t(i), divider);
        return {block_scales[block], block_zero_points != nullptr ? block_zero_points[block] : 0};
    }

    batch widen(std::size_t i) const noexcept {
        if constexpr (std::is_same_v<Arch, scalar_arch>) {
            return at(i);
        } else {
            // One block for the whole vector? Its first and last element's blocks agree.
            block_parameters shared{scale, zero_point};
            bool one_block = true;
            if (block_scales != nullptr) {
                const std::uint32_t first = offset_in_row + std::uint32_t(i);
                const std::uint32_t block = divide(first, divider);
                one_block = first + std::uint32_t(width) <= (block + 1) * block_size;
                shared = {block_scales[block], block_zero_points != nullptr ? block_zero_points[block] : 0};
            }
            if (one_block && (!packed_codes<Codes> || element(i) % 2 == 0))
                return widen_codes<Arch, Codes>(bytes, element(i), shared.scale, shared.zero_point);
            alignas(64) float values[width]; // not std::array: its members are shared symbols
            for (std::size_t k = 0; k < width; ++k) values[k] = at(i + k);
            return batch::load_aligned(values);
        }
    }
};

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace numgap::kernels::detail
