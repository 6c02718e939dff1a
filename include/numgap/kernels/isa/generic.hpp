#pragma once
// The portable forms of the per-instruction-set operations (kernels/isa.hpp):
// overloads on xsimd::generic, the base of every xsimd architecture, and on
// scalar_arch. A call passes the architecture tag (Arch{}); an overload for a
// more derived tag in x86_sse2.hpp / x86_avx2.hpp / x86_avx512.hpp, when the
// translation unit's flags declare it, is a better match and wins, so any
// architecture without one (NEON, plain AVX for widening, SVE) lands here.
//   vector_registers(tag): registers the kernels may plan accumulators for.
//   multiply_add / lane_max / lane_min / reduce_sum: xsimd's operations.
//   widen_to_float32<Arch>(tag, p, scale, zero_point): one vector of float32
//     from `width` stored float16 / bfloat16 / float8 / 8- and 16-bit integers
//     (integers as scale * float(q - zero_point)), element by element through
//     widen_one, which compilers vectorise.
//   widen_one(value, scale, zero_point): that conversion of one element.
//   nibble_code<Codes>(bytes, e): packed 4-bit code e (core/dtype.hpp's
//     layout: byte e / 2, low nibble first), sign-extended for int4_codes.
//   widen_nibbles_to_float32<Arch, Codes>(tag, bytes, scale, zero_point): one
//     vector of float32 from `width` packed codes starting at a byte
//     boundary, as scale * float(q - zero_point), element by element here.
//   mx_code_value<Codes>(bytes, e): element e of MX element codes (Codes:
//     e2m1_codes, packed like int4, or float6_e2m3fn / float6_e3m2fn, one a
//     byte) as its float32 value (core/float_mx.hpp), from mx_code_table.
//   widen_mx_to_float32<Arch, Codes>(tag, bytes): one vector of those values
//     from `width` codes starting at a byte boundary, unscaled (block_source
//     applies the block's scale), element by element here; x86_avx2.hpp and
//     x86_avx512.hpp look the codes up in registers.
//   transpose_block_width(tag) / transpose_block(tag, ...): the side of the
//     in-register transpose block and the block itself (1 here: one element;
//     transpose_tile.hpp then uses its scalar loop throughout).
//   widen_float16_vectors(tag, source, n, out): how many float16 elements the
//     hardware converted (0 here: the caller converts them all).
//   load_columns<Arch>(tag, first, row_stride, out): four columns of a band
//     of `width` rows stored row by row: lane c of out[k] is
//     first[c * row_stride + k] (k < 4; reads 4 floats of each row). Here
//     with xsimd's zips when a vector holds 4 floats (SSE2, NEON), element
//     by element otherwise; x86_avx2.hpp and x86_avx512.hpp assemble 128-bit
//     row pieces and transpose them in registers.
// Complexity: O(1) per call (widen_float16_vectors: O(n)). Throws: nothing.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include <numgap/core/config.hpp>
#include <numgap/core/float8.hpp>
#include <numgap/core/half.hpp>
#include <numgap/core/isa_namespace.hpp>
#include <numgap/kernels/isa/register_barrier.hpp>
#include <numgap/kernels/scalar_arch.hpp>

namespace numgap::kernels::detail {
// The element types of packed 4-bit data (core/dtype.hpp: int4, uint4), as
// tags for the sources and widening operations that read them.
struct int4_codes {
    static constexpr bool is_signed = true;
};
struct uint4_codes {
    static constexpr bool is_signed = false;
};
// Packed float4_e2m1fn codes (core/float_mx.hpp), two per byte like int4.
struct e2m1_codes {};

// Every code's value, for the in-register lookups (the 6-bit tables' first
// 32 entries are the positive magnitudes, the last 32 their negations).
// Data, not code: one copy serves every instruction set.
template <std::size_t Count>
struct mx_code_table {
    float values[Count];
};
template <class Format, std::size_t Count>
constexpr mx_code_table<Count> make_mx_code_table() noexcept {
    mx_code_table<Count> table{};
    for (std::size_t code = 0; code < Count; ++code) table.values[code] = to_float(Format{std::uint8_t(code)});
    return table;
}
inline constexpr mx_code_table<16> e2m1_values = make_mx_code_table<float4_e2m1fn, 16>();
inline constexpr mx_code_table<64> e2m3_values = make_mx_code_table<float6_e2m3fn, 64>();
inline constexpr mx_code_table<64> e3m2_values = make_mx_code_table<float6_e3m2fn, 64>();
// The 16 packed 4-bit integer codes as floats (x86_avx512.hpp looks them up
// like e2m1 instead of shifting and converting).
inline constexpr mx_code_table<16> int4_values = {{0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1}};
inline constexpr mx_code_table<16> uint4_values = {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}};

} // namespace numgap::kernels::detail

namespace numgap::kernels::detail::isa {
inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

// 32 vector registers (AVX-512, NEON64) hold four accumulator sets of six
// sums plus temporaries; x86_sse2.hpp and x86_avx2.hpp say 16.
constexpr int vector_registers(xsimd::generic) noexcept { return 32; }

template <class Arch, class T>
xsimd::batch<T, Arch> multiply_add(xsimd::generic, const xsimd::batch<T, Arch>& a, const xsimd::batch<T, Arch>& b,
                                   const xsimd::batch<T, Arch>& c) noexcept {
    return xsimd::fma(a, b, c);
}
template <class Arch, class T>
xsimd::batch<T, Arch> lane_max(xsimd::generic, const xsimd::batch<T, Arch>& a, const xsimd::batch<T, Arch>& b) noexcept {
    return xsimd::max(a, b);
}
template <class Arch, class T>
xsimd::batch<T, Arch> lane_min(xsimd::generic, const xsimd::batch<T, Arch>& a, const xsimd::batch<T, Arch>& b) noexcept {
    return xsimd::min(a, b);
}
template <class Arch, class T>
double reduce_sum(xsimd::generic, const xsimd::batch<T, Arch>& x) noexcept {
    return double(xsimd::hadd(x));
}

template <class Stored>
float widen_one(Stored value, float scale, std::int32_t zero_point) noexcept {
    if constexpr (is_stored_float<Stored>)
        return keep_rounded(to_float(value));
    else
        return keep_rounded(scale * float(std::int32_t(value) - zero_point));
}

template <class Arch, class Stored>
xsimd::batch<float, Arch> widen_to_float32(xsimd::generic, const Stored* p, float scale, std::int32_t zero_point) noexcept {
    constexpr std::size_t width = xsimd::batch<float, Arch>::size;
    alignas(64) float values[width]; // not std::array: its members are shared symbols
    for (std::size_t k = 0; k < width; ++k) values[k] = widen_one(p[k], scale, zero_point);
    return xsimd::batch<float, Arch>::load_aligned(values);
}

template <class Codes>
std::int32_t nibble_code(const std::uint8_t* bytes, std::size_t element) noexcept {
    const std::int32_t nibble = std::int32_t(bytes[element / 2] >> (4 * (element % 2))) & 0xf;
    if constexpr (Codes::is_signed)
        return (nibble ^ 8) - 8; // two's complement: 8..15 are -8..-1
    else
        return nibble;
}

template <class Arch, class Codes>
xsimd::batch<float, Arch> widen_nibbles_to_float32(xsimd::generic, const std::uint8_t* bytes, float scale,
                                                   std::int32_t zero_point) noexcept {
    constexpr std::size_t width = xsimd::batch<float, Arch>::size;
    alignas(64) float values[width];
    for (std::size_t k = 0; k < width; ++k)
        values[k] = keep_rounded(scale * float(nibble_code<Codes>(bytes, k) - zero_point));
    return xsimd::batch<float, Arch>::load_aligned(values);
}

template <class Codes>
constexpr const float* mx_values() noexcept {
    if constexpr (std::is_same_v<Codes, e2m1_codes>)
        return e2m1_values.values;
    else if constexpr (std::is_same_v<Codes, float6_e2m3fn>)
        return e2m3_values.values;
    else
        return e3m2_values.values;
}

template <class Codes>
float mx_code_value(const std::uint8_t* bytes, std::size_t element) noexcept {
    static_assert(std::is_same_v<Codes, e2m1_codes> || std::is_same_v<Codes, float6_e2m3fn> ||
                      std::is_same_v<Codes, float6_e3m2fn>,
                  "mx_code_value reads packed e2m1 codes or one-byte float6 codes.");
    if constexpr (std::is_same_v<Codes, e2m1_codes>)
        return mx_values<Codes>()[(bytes[element / 2] >> (4 * (element % 2))) & 0xf];
    else
        return mx_values<Codes>()[bytes[element] & 0x3f]; // bits 6-7 ignored (core/float_mx.hpp)
}

template <class Arch, class Codes>
xsimd::batch<float, Arch> widen_mx_to_float32(xsimd::generic, const std::uint8_t* bytes) noexcept {
    constexpr std::size_t width = xsimd::batch<float, Arch>::size;
    alignas(64) float values[width];
    for (std::size_t k = 0; k < width; ++k) values[k] = mx_code_value<Codes>(bytes, k);
    return xsimd::batch<float, Arch>::load_aligned(values);
}

constexpr std::size_t transpose_block_width(xsimd::generic) noexcept { return 1; }
constexpr std::size_t transpose_block_width(scalar_arch) noexcept { return 1; }
// A block of one element, so every architecture has a transpose_block.
inline void transpose_block(xsimd::generic, const float* in, std::int64_t, float* out, std::int64_t) noexcept { *out = *in; }
inline void transpose_block(scalar_arch, const float* in, std::int64_t, float* out, std::int64_t) noexcept { *out = *in; }

template <class Arch>
NUMGAP_ALWAYS_INLINE void load_columns(xsimd::generic, const float* first, std::int64_t row_stride,
                                       xsimd::batch<float, Arch> (&out)[4]) noexcept {
    using batch = xsimd::batch<float, Arch>;
    using pairs = xsimd::batch<double, Arch>;
    if constexpr (batch::size == 4) {
        // Rows a, b, c, d: zip rows pairwise, then zip those pairs as 64-bit lanes.
        const batch a = batch::load_unaligned(first), b = batch::load_unaligned(first + row_stride),
                    c = batch::load_unaligned(first + 2 * row_stride),
                    d = batch::load_unaligned(first + 3 * row_stride);
        const auto ab_low = xsimd::bitwise_cast<pairs>(xsimd::zip_lo(a, b)),
                   ab_high = xsimd::bitwise_cast<pairs>(xsimd::zip_hi(a, b));
        const auto cd_low = xsimd::bitwise_cast<pairs>(xsimd::zip_lo(c, d)),
                   cd_high = xsimd::bitwise_cast<pairs>(xsimd::zip_hi(c, d));
        out[0] = xsimd::bitwise_cast<batch>(xsimd::zip_lo(ab_low, cd_low));
        out[1] = xsimd::bitwise_cast<batch>(xsimd::zip_hi(ab_low, cd_low));
        out[2] = xsimd::bitwise_cast<batch>(xsimd::zip_lo(ab_high, cd_high));
        out[3] = xsimd::bitwise_cast<batch>(xsimd::zip_hi(ab_high, cd_high));
    } else {
        for (int k = 0; k < 4; ++k) {
            alignas(64) float values[batch::size];
            for (std::size_t c = 0; c < batch::size; ++c) values[c] = first[std::int64_t(c) * row_stride + k];
            out[k] = batch::load_aligned(values);
        }
    }
}

inline std::size_t widen_float16_vectors(xsimd::generic, const float16*, std::size_t, float*) noexcept { return 0; }
inline std::size_t widen_float16_vectors(scalar_arch, const float16*, std::size_t, float*) noexcept { return 0; }

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace numgap::kernels::detail::isa
