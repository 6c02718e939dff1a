#pragma once
// Element types numgap reads. Two sides of a comparison may differ
// (a float32 reference against a uint8 quantized target is the everyday case).
//
// Packed 4-bit types (int4, uint4, float4_e2m1fn) hold two elements per byte, low nibble
// first: element 2k is bits 0-3 of byte k, element 2k+1 bits 4-7. int4 is
// two's complement (-8..7), uint4 is 0..15. A tensor of an odd count uses the
// low nibble of its last byte; the spare high nibble is ignored. (float4_e2m1fn
// codes, core/float_mx.hpp, are packed the same way.) Views of
// packed types are contiguous (validate_view says so otherwise), so element e
// of a view lies in byte e / 2 of its data, nibble e % 2.
// A tensor's size in bytes is storage_bytes(type, count), never
// count * size_of(type): size_of is the storage unit (one byte for the packed
// types, which holds two elements).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace numgap {

enum class dtype : std::uint8_t {
    float32,
    float64,
    float16,  // IEEE 754 binary16
    bfloat16, // upper half of a float32
    int8,
    uint8,
    int16,
    uint16,
    int32,
    boolean, // one byte, 0 or non-zero
    // One-byte floats (rules in core/float8.hpp).
    float8_e4m3fn,  // 4 exponent bits, 3 mantissa bits, no Inf (PyTorch, OCP FP8)
    float8_e5m2,    // 5 exponent bits, 2 mantissa bits: the top byte of a float16
    float8_e8m0fnu, // 2^(e - 127), the OCP MX block scale: no sign, no zero
    int4,    // packed, two per byte, low nibble first, two's complement
    uint4,   // packed, two per byte, low nibble first
    // OCP MX element formats below one byte (rules in core/float_mx.hpp).
    float4_e2m1fn, // packed like int4: two per byte, low nibble first
    float6_e2m3fn, // one per byte, bits 0-5
    float6_e3m2fn, // one per byte, bits 0-5
};

inline constexpr dtype all_dtypes[] = {dtype::float32, dtype::float64, dtype::float16,
                                       dtype::bfloat16, dtype::int8,    dtype::uint8,
                                       dtype::int16,   dtype::uint16,  dtype::int32,
                                       dtype::boolean, dtype::float8_e4m3fn, dtype::float8_e5m2,
                                       dtype::float8_e8m0fnu, dtype::int4, dtype::uint4,
                                       dtype::float4_e2m1fn, dtype::float6_e2m3fn, dtype::float6_e3m2fn};

// Bytes of one storage unit: the element, or for int4 / uint4 the byte that
// holds two. Alignment needs this; a tensor's byte count is storage_bytes.
constexpr std::size_t size_of(dtype type) noexcept {
    switch (type) {
    case dtype::float64: return 8;
    case dtype::float32:
    case dtype::int32: return 4;
    case dtype::float16:
    case dtype::bfloat16:
    case dtype::int16:
    case dtype::uint16: return 2;
    case dtype::int8:
    case dtype::uint8:
    case dtype::boolean:
    case dtype::float8_e4m3fn:
    case dtype::float8_e5m2:
    case dtype::float8_e8m0fnu:
    case dtype::int4:
    case dtype::uint4:
    case dtype::float4_e2m1fn:
    case dtype::float6_e2m3fn:
    case dtype::float6_e3m2fn: return 1;
    }
    return 0;
}

constexpr bool is_packed(dtype type) noexcept {
    return type == dtype::int4 || type == dtype::uint4 || type == dtype::float4_e2m1fn;
}

// Bits one element occupies in memory (4 for the packed types); 0 if unknown.
constexpr std::size_t bits_of(dtype type) noexcept { return is_packed(type) ? 4 : 8 * size_of(type); }

// Bytes `count` elements occupy, rounded up to whole bytes (an odd count of a
// packed type leaves half of the last byte unused). Precondition: the product
// count * bits_of(type) fits in 64 bits (readers check shapes with
// detail::checked_storage_bytes first).
constexpr std::uint64_t storage_bytes(dtype type, std::uint64_t count) noexcept {
    return is_packed(type) ? count / 2 + count % 2 : count * size_of(type);
}

constexpr std::string_view name_of(dtype type) noexcept {
    switch (type) {
    case dtype::float32: return "float32";
    case dtype::float64: return "float64";
    case dtype::float16: return "float16";
    case dtype::bfloat16: return "bfloat16";
    case dtype::int8: return "int8";
    case dtype::uint8: return "uint8";
    case dtype::int16: return "int16";
    case dtype::uint16: return "uint16";
    case dtype::int32: return "int32";
    case dtype::boolean: return "bool";
    case dtype::float8_e4m3fn: return "float8_e4m3fn";
    case dtype::float8_e5m2: return "float8_e5m2";
    case dtype::float8_e8m0fnu: return "float8_e8m0fnu";
    case dtype::int4: return "int4";
    case dtype::uint4: return "uint4";
    case dtype::float4_e2m1fn: return "float4_e2m1fn";
    case dtype::float6_e2m3fn: return "float6_e2m3fn";
    case dtype::float6_e3m2fn: return "float6_e3m2fn";
    }
    return "unknown";
}

constexpr bool is_integer(dtype type) noexcept {
    return type == dtype::int8 || type == dtype::uint8 || type == dtype::int16 ||
           type == dtype::uint16 || type == dtype::int32 || type == dtype::int4 || type == dtype::uint4;
}

constexpr bool is_floating(dtype type) noexcept {
    return type == dtype::float32 || type == dtype::float64 || type == dtype::float16 ||
           type == dtype::bfloat16 || type == dtype::float8_e4m3fn || type == dtype::float8_e5m2 ||
           type == dtype::float8_e8m0fnu || type == dtype::float4_e2m1fn || type == dtype::float6_e2m3fn ||
           type == dtype::float6_e3m2fn;
}

// The element formats an OCP MX block scales (value = scale * decode(code),
// core/float_mx.hpp): float8 e4m3fn / e5m2 and the 6- and 4-bit floats. They
// may carry block quantization (scales only), besides the integers.
constexpr bool is_mx_element(dtype type) noexcept {
    return type == dtype::float8_e4m3fn || type == dtype::float8_e5m2 || type == dtype::float4_e2m1fn ||
           type == dtype::float6_e2m3fn || type == dtype::float6_e3m2fn;
}

// Accepts the canonical names above plus common aliases ("f32", "fp16", "bf16", "u8", "bool_"), and
// for float8 the spellings of ml_dtypes/ONNX ("f8e4m3"), "fp8_e4m3", "e4m3" and safetensors' "F8_E4M3";
// "i4" / "u4" are int4 / uint4 (NumPy's '<i4' descr is read by io/npy's own table); the MX element
// formats by ml_dtypes' names, PyTorch's packed "float4_e2m1fn_x2", "e2m1" / "e2m3" / "e3m2",
// "fp4" / "fp6_e2m3" / "fp6_e3m2" and safetensors' "F4", "F6_E2M3", "F6_E3M2".
constexpr std::optional<dtype> parse_dtype(std::string_view text) noexcept {
    struct alias {
        std::string_view text;
        dtype type;
    };
    constexpr alias aliases[] = {
        {"float32", dtype::float32},  {"f32", dtype::float32},      {"fp32", dtype::float32},
        {"float", dtype::float32},    {"float64", dtype::float64},  {"f64", dtype::float64},
        {"fp64", dtype::float64},     {"double", dtype::float64},   {"float16", dtype::float16},
        {"f16", dtype::float16},      {"fp16", dtype::float16},     {"half", dtype::float16},
        {"bfloat16", dtype::bfloat16}, {"bf16", dtype::bfloat16},   {"int8", dtype::int8},
        {"i8", dtype::int8},          {"uint8", dtype::uint8},      {"u8", dtype::uint8},
        {"int16", dtype::int16},      {"i16", dtype::int16},        {"uint16", dtype::uint16},
        {"u16", dtype::uint16},       {"int32", dtype::int32},      {"i32", dtype::int32},
        {"bool", dtype::boolean},     {"bool_", dtype::boolean},    {"boolean", dtype::boolean},
        {"float8_e4m3fn", dtype::float8_e4m3fn}, {"f8e4m3", dtype::float8_e4m3fn},
        {"fp8_e4m3", dtype::float8_e4m3fn},      {"e4m3", dtype::float8_e4m3fn},
        {"F8_E4M3", dtype::float8_e4m3fn},       {"float8_e5m2", dtype::float8_e5m2},
        {"f8e5m2", dtype::float8_e5m2},          {"fp8_e5m2", dtype::float8_e5m2},
        {"e5m2", dtype::float8_e5m2},            {"F8_E5M2", dtype::float8_e5m2},
        {"float8_e8m0fnu", dtype::float8_e8m0fnu}, {"e8m0", dtype::float8_e8m0fnu},
        {"F8_E8M0", dtype::float8_e8m0fnu},
        {"int4", dtype::int4},        {"i4", dtype::int4},          {"uint4", dtype::uint4},
        {"u4", dtype::uint4},
        {"float4_e2m1fn", dtype::float4_e2m1fn}, {"float4_e2m1fn_x2", dtype::float4_e2m1fn},
        {"e2m1", dtype::float4_e2m1fn},          {"fp4", dtype::float4_e2m1fn},
        {"fp4_e2m1", dtype::float4_e2m1fn},      {"F4", dtype::float4_e2m1fn},
        {"float6_e2m3fn", dtype::float6_e2m3fn}, {"e2m3", dtype::float6_e2m3fn},
        {"fp6_e2m3", dtype::float6_e2m3fn},      {"F6_E2M3", dtype::float6_e2m3fn},
        {"float6_e3m2fn", dtype::float6_e3m2fn}, {"e3m2", dtype::float6_e3m2fn},
        {"fp6_e3m2", dtype::float6_e3m2fn},      {"F6_E3M2", dtype::float6_e3m2fn},
    };
    for (const alias& candidate : aliases)
        if (candidate.text == text) return candidate.type;
    return std::nullopt;
}

// The dtype tag of a C++ element type, for views built from typed memory.
template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr dtype value = dtype::float32; };
template <> struct dtype_of<double> { static constexpr dtype value = dtype::float64; };
template <> struct dtype_of<std::int8_t> { static constexpr dtype value = dtype::int8; };
template <> struct dtype_of<std::uint8_t> { static constexpr dtype value = dtype::uint8; };
template <> struct dtype_of<std::int16_t> { static constexpr dtype value = dtype::int16; };
template <> struct dtype_of<std::uint16_t> { static constexpr dtype value = dtype::uint16; };
template <> struct dtype_of<std::int32_t> { static constexpr dtype value = dtype::int32; };
template <> struct dtype_of<bool> { static constexpr dtype value = dtype::boolean; };

template <class T>
concept known_element = requires { dtype_of<T>::value; };

} // namespace numgap
