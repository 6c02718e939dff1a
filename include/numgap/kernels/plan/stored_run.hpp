#pragma once
// stored_run: one side of a contiguous stretch of a pair, as it lies in
// memory: the address of its first element, its dtype and, for integer data,
// the affine parameters of the stretch (per-tensor, or one channel's). The
// fused kernel's run_f32 entry (kernel_table.hpp) reads two such runs and
// widens narrow types in registers: float16, bfloat16, float8, and 8/16-bit integers
// dequantized as scale * float(q - zero_point), never through a float copy.
//
// widens_in_registers(type, zero_point) says which stored forms run_f32
// accepts: float32 itself, the 16-bit floats, float8 e4m3fn and e5m2 (not
// e8m0, a scale type, which takes the block path), the MX element formats
// (float4_e2m1fn, float6_e2m3fn / e3m2fn; float8 too when block-scaled,
// through block_source), and 8/16-bit integers whose
// zero point lies within +-2^24 (so q - zero_point is exact in int32 and
// exactly representable in float32, and the result is the same rounding, bit
// for bit, as every other dequantization path in numgap). Raw integers are
// scale 1, zero point 0 (1.0f * float(q) is float(q)). int32, bool and
// float64 data and extreme zero points take the converting block path.
//
// Packed int4 / uint4 / float4_e2m1fn runs (core/dtype.hpp) start at nibble `nibble` (0: low,
// 1: high) of the byte at `data`. A run of block-quantized data
// (core/quantization.hpp, blocks along the last axis) lies within one row of
// that axis: `block_scales` / `block_zero_points` are that row's parameters,
// the run's first element is at `offset_in_row`, and the row is cut into
// blocks of `block_size` (< 2^31, as is the row), so element i of the run
// uses parameter (offset_in_row + i) / block_size, computed by `divider`
// (one multiply and shift, kernels/block_divider.hpp).
// Complexity: O(1). Throws: nothing.
#include <cstdint>

#include <numgap/core/dtype.hpp>
#include <numgap/core/isa_namespace.hpp>
#include <numgap/kernels/block_divider.hpp>
#include <numgap/kernels/constants.hpp>

namespace numgap::kernels {

struct stored_run {
    const void* data = nullptr;
    dtype type = dtype::float32;
    float scale = 1.0f;          // integer types only
    std::int32_t zero_point = 0; // integer types only
    std::uint8_t nibble = 0;     // packed types only
    const float* block_scales = nullptr; // block-quantized runs only
    const std::int32_t* block_zero_points = nullptr;
    std::uint32_t offset_in_row = 0;
    std::uint32_t block_size = 0;
    block_divider divider{};
};

inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

constexpr bool widens_in_registers(dtype type, std::int64_t zero_point = 0) noexcept {
    switch (type) {
    case dtype::float32:
    case dtype::float16:
    case dtype::bfloat16:
    case dtype::float8_e4m3fn:
    case dtype::float8_e5m2:
    case dtype::float4_e2m1fn:
    case dtype::float6_e2m3fn:
    case dtype::float6_e3m2fn: return true;
    case dtype::int8:
    case dtype::uint8:
    case dtype::int16:
    case dtype::uint16:
    case dtype::int4:
    case dtype::uint4: return zero_point >= -exact_float_integer_limit && zero_point <= exact_float_integer_limit;
    default: return false;
    }
}

// run_f32 reads pairs where at least one side is float32 (the reference of
// every real comparison); two narrow sides take the block path.
constexpr bool run_pair_supported(dtype reference, dtype target) noexcept {
    return (reference == dtype::float32 || target == dtype::float32) && widens_in_registers(reference) &&
           widens_in_registers(target);
}

// True for the dtypes kernel_table::widen_f32 accepts: the narrow types
// run_f32 widens in registers (any zero point: widen_f32 handles extreme ones).
// Packed 4-bit types are not among them (a run of them may start mid-byte),
// nor the float6 formats (block_source reads them; gather converts them).
constexpr bool widens_to_f32(dtype type) noexcept {
    return type != dtype::float32 && !is_packed(type) && type != dtype::float6_e2m3fn &&
           type != dtype::float6_e3m2fn && widens_in_registers(type);
}

} // namespace NUMGAP_ISA_NAMESPACE

} // namespace numgap::kernels
