#pragma once
// Storage types for the OCP Microscaling (MX v1.0) element formats below one
// byte, and their exact conversions to float32. None of them has an Inf or a
// NaN code ("fn": finite; MX blocks carry NaN in their e8m0 scale instead,
// core/float8.hpp), every code is exactly a float32, and to_float is exact.
//
// float4_e2m1fn (OCP FP4 E2M1, ml_dtypes float4_e2m1fn, PyTorch
//   float4_e2m1fn_x2 for the packed pair, safetensors F4): bit 3 sign, bits
//   2-1 exponent e (bias 1), bit 0 mantissa m.
//   e = 0: (-1)^s * m/2 (0 and the one subnormal 0.5; 0x0 = +0, 0x8 = -0);
//   e = 1..3: (-1)^s * (1 + m/2) * 2^(e-1): 1, 1.5, 2, 3, 4, 6.
//   Largest magnitude 6 (producers saturate to it). In a tensor of dtype
//   float4_e2m1fn two codes share a byte, low nibble first, exactly like
//   int4 (core/dtype.hpp); one float4_e2m1fn value holds one code in bits 0-3.
// float6_e2m3fn (OCP FP6 E2M3, ml_dtypes float6_e2m3fn): bit 5 sign, bits
//   4-3 exponent e (bias 1), bits 2-0 mantissa m.
//   e = 0: m/8 (subnormals, smallest 0.125); e = 1..3: (1 + m/8) * 2^(e-1);
//   largest 7.5.
// float6_e3m2fn (OCP FP6 E3M2, ml_dtypes float6_e3m2fn): bit 5 sign, bits
//   4-2 exponent e (bias 3), bits 1-0 mantissa m.
//   e = 0: m/4 * 2^-2 (subnormals, smallest 0.0625); e = 1..7: (1 + m/4) *
//   2^(e-3); largest 28.
// The 6-bit formats are stored one per byte in bits 0-5, as ml_dtypes does.
// Bits 6-7 are ignored (decoded as if zero), everywhere: by to_float, the
// kernels and the readers. Refusing them would mean scanning every byte of a
// tensor before comparing it, which numgap never does (validation is O(rank));
// like the spare nibble of an odd-length int4 tensor they carry no value.
//
// MX blocks (OCP MX v1.0 section 5): 32 consecutive elements share one e8m0
// scale X; element value = X * decode(code). MXFP8 (e4m3fn / e5m2 elements,
// core/float8.hpp), MXFP6, MXFP4 take exactly this form; MXINT8 is int8
// codes with an implicit 2^-6, i.e. X * 2^-6 * q, which numgap expresses as
// block quantization with scales X * 2^-6: exact, as X * 2^-6 is a power of
// two from 2^-133 up (a float32, subnormal below 2^-126) and X * 2^-6 * q a
// multiple of 2^-133 of at most 8 significant bits, except X = 2^127 with
// q = -128: -2^128 is beyond float32 and becomes -Inf.
// core/quantization.hpp describes the block descriptor these use.
//
// The conversions are per instruction set (core/isa_namespace.hpp), as in
// half.hpp: the kernels' dispatch units call them.
#include <cstdint>

#include <numgap/core/dtype.hpp>
#include <numgap/core/isa_namespace.hpp>

namespace numgap {

struct float4_e2m1fn {
    std::uint8_t bits; // the code in bits 0-3; bits 4-7 ignored
};
struct float6_e2m3fn {
    std::uint8_t bits; // the code in bits 0-5; bits 6-7 ignored
};
struct float6_e3m2fn {
    std::uint8_t bits; // the code in bits 0-5; bits 6-7 ignored
};

template <> struct dtype_of<float6_e2m3fn> { static constexpr dtype value = dtype::float6_e2m3fn; };
template <> struct dtype_of<float6_e3m2fn> { static constexpr dtype value = dtype::float6_e3m2fn; };

inline namespace NUMGAP_ISA_NAMESPACE {

// A sign-magnitude code: sign above `exponent_bits` exponent bits (bias
// `bias`) above `mantissa_bits` mantissa bits. Value: significand (the
// mantissa, with the implicit bit for exponent > 0) times 2^(max(exponent, 1)
// - bias - mantissa_bits). Computed with integers and exact halvings and
// doublings rather than bit tricks through float32 subnormals, which a
// flush-to-zero mode would zero.
constexpr float decode_sign_magnitude(std::uint32_t code, int exponent_bits, int mantissa_bits, int bias) noexcept {
    const std::uint32_t mantissa = code & ((1u << mantissa_bits) - 1u);
    const std::uint32_t exponent = (code >> mantissa_bits) & ((1u << exponent_bits) - 1u);
    const bool negative = ((code >> (exponent_bits + mantissa_bits)) & 1u) != 0;
    const std::uint32_t significand = exponent == 0 ? mantissa : (mantissa | (1u << mantissa_bits));
    const int power = (exponent == 0 ? 1 : int(exponent)) - bias - mantissa_bits;
    float magnitude = float(significand); // at most 4 bits: exact
    for (int p = power; p > 0; --p) magnitude *= 2.0f;
    for (int p = power; p < 0; ++p) magnitude *= 0.5f;
    return negative ? -magnitude : magnitude;
}

constexpr float to_float(float4_e2m1fn value) noexcept { return decode_sign_magnitude(value.bits & 0xfu, 2, 1, 1); }
constexpr float to_float(float6_e2m3fn value) noexcept { return decode_sign_magnitude(value.bits & 0x3fu, 2, 3, 1); }
constexpr float to_float(float6_e3m2fn value) noexcept { return decode_sign_magnitude(value.bits & 0x3fu, 3, 2, 3); }

} // namespace NUMGAP_ISA_NAMESPACE

} // namespace numgap
