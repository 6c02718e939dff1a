#pragma once
// The element step of the block-quantized sources (block_source.hpp,
// aligned_block_source.hpp): what the stored codes of one element or one
// vector are worth, given the scale and zero point of their block. Which
// block that is stays the sources' own business.
//   dequantize_code<Codes>(bytes, e, scale, zero_point): element e (counted in
//     codes from `bytes`, byte 0's low nibble for packed codes) as
//     scale * float(q - zero_point) for integer codes, scale * decode(code)
//     for float codes (zero_point unused), rounded once.
//   widen_codes<Arch, Codes>(bytes, e, scale, zero_point): the same for the
//     `width` elements from e, in registers (isa::widen_to_float32 for bytes,
//     isa::widen_nibbles_to_float32 for nibbles, which apply the scale
//     themselves; float codes decoded unscaled, then one multiply), equal to
//     dequantize_code element by element. Precondition for packed codes: e
//     even (the vector starts at a byte).
// Codes: std::int8_t, std::uint8_t, int4_codes, uint4_codes, or the MX element
// codes (e2m1_codes, float6_e2m3fn / float6_e3m2fn, float8_e4m3fn /
// float8_e5m2). Complexity: O(1). Throws: nothing.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include <numgap/core/float8.hpp>
#include <numgap/core/float_mx.hpp>
#include <numgap/core/isa_namespace.hpp>
#include <numgap/kernels/isa.hpp>
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
template <class Codes>
inline constexpr bool block_codes = packed_codes<Codes> || float_codes<Codes> || std::is_same_v<Codes, std::int8_t> ||
                                    std::is_same_v<Codes, std::uint8_t>;

template <class Codes>
float dequantize_code(const std::uint8_t* bytes, std::size_t e, float scale, std::int32_t zero_point) noexcept {
    static_assert(block_codes<Codes>, "block sources read 8-bit integers, packed 4-bit codes and MX element codes.");
    if constexpr (std::is_same_v<Codes, float8_e4m3fn> || std::is_same_v<Codes, float8_e5m2>)
        return keep_rounded(scale * to_float(reinterpret_cast<const Codes*>(bytes)[e]));
    else if constexpr (float_codes<Codes>)
        return keep_rounded(scale * isa::mx_code_value<Codes>(bytes, e));
    else if constexpr (packed_codes<Codes>)
        return keep_rounded(scale * float(isa::nibble_code<Codes>(bytes, e) - zero_point));
    else
        return keep_rounded(scale * float(std::int32_t(reinterpret_cast<const Codes*>(bytes)[e]) - zero_point));
}

template <class Arch, class Codes>
typename lanes<Arch, float>::batch widen_codes(const std::uint8_t* bytes, std::size_t e, float scale,
                                               std::int32_t zero_point) noexcept {
    static_assert(block_codes<Codes>, "block sources read 8-bit integers, packed 4-bit codes and MX element codes.");
    using batch = typename lanes<Arch, float>::batch;
    if constexpr (std::is_same_v<Codes, float8_e4m3fn> || std::is_same_v<Codes, float8_e5m2>)
        return batch(scale) * isa::widen_to_float32<Arch>(Arch{}, reinterpret_cast<const Codes*>(bytes) + e, 1.0f, 0);
    else if constexpr (float_codes<Codes>)
        return batch(scale) * isa::widen_mx_to_float32<Arch, Codes>(Arch{}, bytes + (packed_codes<Codes> ? e / 2 : e));
    else if constexpr (packed_codes<Codes>)
        return isa::widen_nibbles_to_float32<Arch, Codes>(Arch{}, bytes + e / 2, scale, zero_point);
    else
        return isa::widen_to_float32<Arch>(Arch{}, reinterpret_cast<const Codes*>(bytes) + e, scale, zero_point);
}

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace numgap::kernels::detail
