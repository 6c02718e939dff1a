#pragma once
// Storage types for the one-byte floats and their exact conversions to float32.
// Every code of every format is exactly representable in float32, so to_float
// is exact (no rounding) except that NaN payloads are not kept.
//
// float8_e4m3fn (PyTorch torch.float8_e4m3fn, ml_dtypes float8_e4m3fn, ONNX
// FLOAT8E4M3FN, safetensors F8_E4M3, OCP FP8 E4M3):
//   bit 7 sign, bits 6-3 exponent e (bias 7), bits 2-0 mantissa m.
//   e = 0:        (-1)^s * m/8 * 2^-6       (subnormals; 0x00 = +0, 0x80 = -0)
//   e = 1..15:    (-1)^s * (1 + m/8) * 2^(e-7)
//   except e = 15, m = 7 (0x7F, 0xFF): NaN. "fn" = finite: no Inf codes, so
//   the largest magnitude is 0x7E = 1.75 * 2^8 = 448 (producers saturate to
//   it or write NaN on overflow); the smallest subnormal is 2^-9.
// float8_e5m2 (torch.float8_e5m2, F8_E5M2, OCP FP8 E5M2): the top byte of an
//   IEEE binary16: bit 7 sign, bits 6-2 exponent (bias 15), bits 1-0 mantissa.
//   e = 0: subnormals m/4 * 2^-14 (smallest 2^-16); e = 1..30: (1 + m/4) *
//   2^(e-15), largest 0x7B = 57344; e = 31: m = 0 Inf (0x7C, 0xFC), m != 0 NaN
//   (0x7D-0x7F, 0xFD-0xFF).
// float8_e8m0fnu (OCP MX shared block scale, ml_dtypes float8_e8m0fnu,
//   safetensors F8_E8M0): all eight bits are an exponent e: 2^(e-127), from
//   2^-127 (0x00; a float32 subnormal) to 2^127 (0xFE); 0xFF is NaN. No sign,
//   no zero, no Inf ("fnu": finite, NaN, unsigned). As a scale, multiplying
//   by it is exact whenever the product is a normal float32.
//
// The conversions are per instruction set (core/isa_namespace.hpp), as in
// half.hpp: the kernels' dispatch units call them.
#include <cstdint>
#include <type_traits>

#include <numgap/core/dtype.hpp>
#include <numgap/core/float_mx.hpp>
#include <numgap/core/half.hpp>
#include <numgap/core/isa_namespace.hpp>

namespace numgap {

struct float8_e4m3fn {
    std::uint8_t bits;
};
struct float8_e5m2 {
    std::uint8_t bits;
};
struct float8_e8m0fnu {
    std::uint8_t bits;
};

template <> struct dtype_of<float8_e4m3fn> { static constexpr dtype value = dtype::float8_e4m3fn; };
template <> struct dtype_of<float8_e5m2> { static constexpr dtype value = dtype::float8_e5m2; };
template <> struct dtype_of<float8_e8m0fnu> { static constexpr dtype value = dtype::float8_e8m0fnu; };

inline namespace NUMGAP_ISA_NAMESPACE {

// The magnitude bits placed as a float16 of the same mantissa (exponent field
// 4 bits wide inside float16's 5) give the value times 2^-8: exact, also for
// subnormals (both formats' subnormals land on float16 subnormals), and the
// multiply by 2^8 in float32 is exact. The SIMD forms use the same mapping
// with hardware float16 conversion (kernels/isa/).
constexpr float to_float(float8_e4m3fn value) noexcept {
    const std::uint32_t sign = std::uint32_t(value.bits & 0x80u) << 24;
    const std::uint32_t magnitude = value.bits & 0x7fu;
    const float scaled = to_float(float16{std::uint16_t(magnitude << 7)}) * 0x1p+8f;
    const std::uint32_t result = magnitude == 0x7fu ? 0x7fc00000u : __builtin_bit_cast(std::uint32_t, scaled);
    return __builtin_bit_cast(float, sign | result);
}

constexpr float to_float(float8_e5m2 value) noexcept {
    return to_float(float16{std::uint16_t(std::uint16_t(value.bits) << 8)});
}

// 2^(e-127) is the float32 whose exponent field is e; e = 0 is the subnormal
// 2^-127 (mantissa's top bit), e = 0xFF a quiet NaN.
constexpr float to_float(float8_e8m0fnu value) noexcept {
    const std::uint32_t exponent = value.bits;
    const std::uint32_t result = exponent == 0u      ? 0x00400000u
                                 : exponent == 0xffu ? 0x7fc00000u
                                                     : exponent << 23;
    return __builtin_bit_cast(float, result);
}

} // namespace NUMGAP_ISA_NAMESPACE

// True for the storage types whose to_float is their whole decoding
// (float16, bfloat16, the float8 and the one-per-byte float6 formats), as
// opposed to integers. Not float4_e2m1fn: its tensors pack two codes a byte.
template <class T>
inline constexpr bool is_stored_float =
    std::is_same_v<T, float16> || std::is_same_v<T, bfloat16> || std::is_same_v<T, float8_e4m3fn> ||
    std::is_same_v<T, float8_e5m2> || std::is_same_v<T, float8_e8m0fnu> || std::is_same_v<T, float6_e2m3fn> ||
    std::is_same_v<T, float6_e3m2fn>;

} // namespace numgap
