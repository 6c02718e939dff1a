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
// Two separable steps, so other block formats (MXFP4: e2m1 codes with e8m0
// block scales) can reuse the block step with their own element decode:
//   element: the stored codes of one vector as int32 (isa::widen_to_float32
//     for bytes, isa::widen_nibbles_to_float32 for nibbles; both apply the
//     scale given to them), or float codes decoded unscaled
//     (isa::widen_mx_to_float32, float8 through isa::widen_to_float32) and
//     multiplied by the scale, rounded once, as the scalar at();
//   block: which scale and zero point a vector uses. Without block_scales
//     the run's own (per tensor, or one channel's); with them, the block of
//     the vector's position in its row (offset_in_row / block_size, by
//     divider; plan/stored_run.hpp fills them per run).
// Every integer value is scale * float(q - zero_point), rounded once, as the
// scalar oracle and every other dequantization path (zero points within
// +-2^24); every float one scale * decode(code) (1 * decode without scales).
//
// Fast path: a vector whose elements share one block (always so when the
// block size is a multiple of the vector width and the run starts at a
// multiple of it within its row), and for packed codes starts at a byte
// boundary: one vector load of codes and one broadcast of the block's scale.
// Other vectors (straddling two blocks, block sizes below or not multiple of
// the width, a packed run starting at an odd element) are filled element by
// element through at(): correct, several times slower.
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
#include <numgap/kernels/source/simd_lanes.hpp>

namespace numgap::kernels::detail {
inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

template <class Codes>
inline constexpr bool packed_codes =
    std::is_same_v<Codes, int4_codes> || std::is_same_v<Codes, uint4_codes> || std::is_same_v<Codes, e2m1_codes>;
template <class Codes>
inline constexpr bool float_codes = std::is_same_v<Codes, e2m1_codes> || std::is_same_v<Codes, float6_e2m3fn> ||
                                    std::is_same_v<Codes, float6_e3m2fn> || std::is_same_v<Codes, float8_e4m3fn> ||
                                    std::is_same_v<Codes, float8_e5m2>;

template <class Arch, class Codes>
struct block_source {
    static_assert(packed_codes<Codes> || float_codes<Codes> || std::is_same_v<Codes, std::int8_t> ||
                      std::is_same_v<Codes, std::uint8_t>,
                  "block_source reads 8-bit integers, packed 4-bit codes and MX element codes.");
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
        if constexpr (float_codes<Codes>)
            return keep_rounded(block_scale * decoded(i));
        else
            return keep_rounded(block_scale * float(code(i) - block_zero_point));
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

    float decoded(std::size_t i) const noexcept {
        if constexpr (std::is_same_v<Codes, e2m1_codes>)
            return isa::mx_code_value<Codes>(bytes, nibble + i);
        else if constexpr (std::is_same_v<Codes, float8_e4m3fn> || std::is_same_v<Codes, float8_e5m2>)
            return to_float(reinterpret_cast<const Codes*>(bytes)[i]);
        else
            return isa::mx_code_value<Codes>(bytes, i);
    }

    std::int32_t code(std::size_t i) const noexcept {
        if constexpr (packed_codes<Codes>)
            return isa::nibble_code<Codes>(bytes, nibble + i);
        else
            return std::int32_t(reinterpret_cast<const Codes*>(bytes)[i]);
    }

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
            if constexpr (float_codes<Codes>) {
                if (one_block && (!packed_codes<Codes> || (nibble + i) % 2 == 0)) {
                    batch values;
                    if constexpr (packed_codes<Codes>)
                        values = isa::widen_mx_to_float32<Arch, Codes>(Arch{}, bytes + (nibble + i) / 2);
                    else if constexpr (std::is_same_v<Codes, float8_e4m3fn> || std::is_same_v<Codes, float8_e5m2>)
                        values = isa::widen_to_float32<Arch>(Arch{}, reinterpret_cast<const Codes*>(bytes) + i, 1.0f, 0);
                    else
                        values = isa::widen_mx_to_float32<Arch, Codes>(Arch{}, bytes + i);
                    return batch(shared.scale) * values;
                }
            } else if constexpr (packed_codes<Codes>) {
                if (one_block && (nibble + i) % 2 == 0)
                    return isa::widen_nibbles_to_float32<Arch, Codes>(Arch{}, bytes + (nibble + i) / 2, shared.scale,
                                                                      shared.zero_point);
            } else {
                if (one_block)
                    return isa::widen_to_float32<Arch>(Arch{}, reinterpret_cast<const Codes*>(bytes) + i, shared.scale,
                                                       shared.zero_point);
            }
            alignas(64) float values[width]; // not std::array: its members are shared symbols
            for (std::size_t k = 0; k < width; ++k) values[k] = at(i + k);
            return batch::load_aligned(values);
        }
    }
};

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace numgap::kernels::detail
