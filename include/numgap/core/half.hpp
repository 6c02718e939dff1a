#pragma once
// Storage types for 16-bit floats and their exact conversions to float32.
// float16 -> float32 and bfloat16 -> float32 are exact; the reverse rounds to
// nearest-even (used to write test data and demo runs, not in kernels).
#include <cstdint>

#include <numgap/core/dtype.hpp>
#include <numgap/core/isa_namespace.hpp>

namespace numgap {

struct float16 {
    std::uint16_t bits;
};
struct bfloat16 {
    std::uint16_t bits;
};

template <> struct dtype_of<float16> { static constexpr dtype value = dtype::float16; };
template <> struct dtype_of<bfloat16> { static constexpr dtype value = dtype::bfloat16; };

// The conversions are per instruction set (core/isa_namespace.hpp): the
// kernels' dispatch units call them. __builtin_bit_cast rather than
// std::bit_cast for the same reason: std::bit_cast is an out-of-line function
// at -O0, one symbol shared by every translation unit.
inline namespace NUMGAP_ISA_NAMESPACE {

// Branch-free so that a loop over it vectorises.
constexpr float to_float(float16 value) noexcept {
    const std::uint32_t sign = std::uint32_t(value.bits & 0x8000u) << 16;
    const std::uint32_t magnitude = value.bits & 0x7fffu;
    // Shift exponent+mantissa into place; rebias by (127-15) via a multiply so
    // subnormals come out right, then fix up Inf/NaN whose exponent is all ones.
    const float scaled = __builtin_bit_cast(float, magnitude << 13) * 0x1p+112f;
    const std::uint32_t inf_nan = magnitude >= 0x7c00u ? 0x7f800000u | (magnitude << 13) : 0u;
    const std::uint32_t result = inf_nan ? inf_nan : __builtin_bit_cast(std::uint32_t, scaled);
    return __builtin_bit_cast(float, sign | result);
}

constexpr float to_float(bfloat16 value) noexcept {
    return __builtin_bit_cast(float, std::uint32_t(value.bits) << 16);
}

constexpr float16 to_float16(float value) noexcept {
    const std::uint32_t bits = __builtin_bit_cast(std::uint32_t, value);
    const std::uint16_t sign = std::uint16_t((bits >> 16) & 0x8000u);
    const std::uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return {std::uint16_t(sign | 0x7e00u)}; // NaN stays quiet NaN
    if (magnitude >= 0x477ff000u) return {std::uint16_t(sign | 0x7c00u)}; // rounds past 65504
    if (magnitude < 0x38800000u) {
        // Subnormal or zero in half: let float addition do the rounding.
        const float shifted = __builtin_bit_cast(float, magnitude) + 0.5f;
        return {std::uint16_t(sign | (__builtin_bit_cast(std::uint32_t, shifted) - 0x3f000000u))};
    }
    const std::uint32_t odd = (magnitude >> 13) & 1u;
    const std::uint32_t rounded = magnitude + 0xc8000fffu + odd; // rebias by -112<<23, round to even
    return {std::uint16_t(sign | (rounded >> 13))};
}

constexpr bfloat16 to_bfloat16(float value) noexcept {
    const std::uint32_t bits = __builtin_bit_cast(std::uint32_t, value);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return {std::uint16_t((bits >> 16) | 0x0040u)};
    const std::uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
    return {std::uint16_t((bits + rounding) >> 16)};
}

} // namespace NUMGAP_ISA_NAMESPACE

} // namespace numgap
