#pragma once
// AVX / AVX2 / F16C forms of the per-instruction-set operations
// (kernels/isa.hpp), for xsimd::avx and the architectures derived from it
// (AVX2, FMA3 on AVX and AVX2). Each operation is declared only when the
// translation unit's flags include the extensions it uses; the rest fall back
// to generic.hpp.
//   vector_registers (AVX): 16 (ymm0-15), as SSE2.
//   transpose_block (AVX): 8x8 float32 block (unpack, shuffle, permute2f128).
//   load_columns (AVX): four columns of 8 rows: rows c and c + 4 share a
//     vector (one 128-bit piece each), then a 4x4 transpose within each
//     128-bit lane (4 unpacks, 4 shuffles).
//   widen_float16_vectors (AVX + F16C): 8 float16 per vcvtph2ps, except
//     vectors holding a NaN, converted portably so NaN payloads stay
//     bit-identical (vcvtph2ps sets the quiet bit of a signalling NaN).
//   widen_to_float32 (AVX2; float16 and float8 also need F16C): one vector of
//     8 float32 by zero/sign-extending loads (vpmovzx/vpmovsx) or vcvtph2ps
//     (float8 by way of float16: core/float8.hpp).
//   widen_nibbles_to_float32 (AVX2): 8 packed 4-bit codes from 4 bytes.
//   widen_mx_to_float32 (AVX2): 8 MX element codes looked up in registers:
//     the magnitude bits index 8-entry tables with vpermps (four of them and
//     two blends for the 32 float6 magnitudes), the sign bit is moved to bit 31.
// Complexity: O(1) per call (widen_float16_vectors: O(n)). Throws: nothing.
#include <numgap/kernels/isa/generic.hpp>

#if defined(__AVX__)
#include <immintrin.h>

#include <cstring>

namespace numgap::kernels::detail::isa {
inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

constexpr int vector_registers(xsimd::avx) noexcept { return 16; }

constexpr std::size_t transpose_block_width(xsimd::avx) noexcept { return 8; }

inline void transpose_block(xsimd::avx, const float* in, std::int64_t in_stride, float* out, std::int64_t out_stride) noexcept {
    __m256 rows[8], pairs[8], quads[8];
    for (int i = 0; i < 8; ++i) rows[i] = _mm256_loadu_ps(in + i * in_stride);
    for (int i = 0; i < 4; ++i) {
        pairs[2 * i] = _mm256_unpacklo_ps(rows[2 * i], rows[2 * i + 1]);
        pairs[2 * i + 1] = _mm256_unpackhi_ps(rows[2 * i], rows[2 * i + 1]);
    }
    for (int g = 0; g < 2; ++g) {
        quads[4 * g] = _mm256_shuffle_ps(pairs[4 * g], pairs[4 * g + 2], _MM_SHUFFLE(1, 0, 1, 0));
        quads[4 * g + 1] = _mm256_shuffle_ps(pairs[4 * g], pairs[4 * g + 2], _MM_SHUFFLE(3, 2, 3, 2));
        quads[4 * g + 2] = _mm256_shuffle_ps(pairs[4 * g + 1], pairs[4 * g + 3], _MM_SHUFFLE(1, 0, 1, 0));
        quads[4 * g + 3] = _mm256_shuffle_ps(pairs[4 * g + 1], pairs[4 * g + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int m = 0; m < 4; ++m) {
        _mm256_storeu_ps(out + m * out_stride, _mm256_permute2f128_ps(quads[m], quads[4 + m], 0x20));
        _mm256_storeu_ps(out + (4 + m) * out_stride, _mm256_permute2f128_ps(quads[m], quads[4 + m], 0x31));
    }
}

template <class Arch>
NUMGAP_ALWAYS_INLINE void load_columns(xsimd::avx, const float* first, std::int64_t row_stride,
                                       xsimd::batch<float, Arch> (&out)[4]) noexcept {
    __m256 rows[4]; // lane 0: row g, lane 1: row g + 4
    for (int g = 0; g < 4; ++g)
        rows[g] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(first + g * row_stride)),
                                       _mm_loadu_ps(first + (g + 4) * row_stride), 1);
    const __m256 low01 = _mm256_unpacklo_ps(rows[0], rows[1]), high01 = _mm256_unpackhi_ps(rows[0], rows[1]);
    const __m256 low23 = _mm256_unpacklo_ps(rows[2], rows[3]), high23 = _mm256_unpackhi_ps(rows[2], rows[3]);
    out[0] = _mm256_shuffle_ps(low01, low23, _MM_SHUFFLE(1, 0, 1, 0));
    out[1] = _mm256_shuffle_ps(low01, low23, _MM_SHUFFLE(3, 2, 3, 2));
    out[2] = _mm256_shuffle_ps(high01, high23, _MM_SHUFFLE(1, 0, 1, 0));
    out[3] = _mm256_shuffle_ps(high01, high23, _MM_SHUFFLE(3, 2, 3, 2));
}

#if defined(__F16C__)
inline std::size_t widen_float16_vectors(xsimd::avx, const float16* source, std::size_t n, float* out) noexcept {
    const __m128i magnitude_mask = _mm_set1_epi16(0x7fff), infinity = _mm_set1_epi16(0x7c00);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(source + i));
        // Magnitudes stay below 0x8000, so the signed compare is exact.
        const __m128i nan = _mm_cmpgt_epi16(_mm_and_si128(halves, magnitude_mask), infinity);
        if (_mm_movemask_epi8(nan) == 0)
            _mm256_storeu_ps(out + i, _mm256_cvtph_ps(halves));
        else
            for (std::size_t k = i; k < i + 8; ++k) out[k] = to_float(source[k]);
    }
    return i;
}

template <class Arch>
xsimd::batch<float, Arch> widen_to_float32(xsimd::avx2, const float16* p, float, std::int32_t) noexcept {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
#endif

#if defined(__AVX2__) && defined(__F16C__)
// float8 through float16 (core/float8.hpp), on 16-bit lanes. e5m2 is a
// float16's top byte. e4m3fn: the byte sign-extended to 16 bits and shifted
// left 7 holds the magnitude bits under float16's exponent field (bits 7-13)
// and copies of the sign in bits 14-15; clearing bit 14 gives the float16 of
// the value times 2^-8 (exact, subnormals included, converted at full speed
// by vcvtph2ps), scaled back by an exact multiply. The NaN code's pattern
// 0x3F80 is turned into the float16 quiet NaN 0x7E00 (xor 0x4180, sign kept),
// which the conversion and the multiply carry through unchanged: to_float's
// NaN, bit for bit.
template <class Arch, class Stored>
    requires(std::is_same_v<Stored, float8_e4m3fn> || std::is_same_v<Stored, float8_e5m2>)
xsimd::batch<float, Arch> widen_to_float32(xsimd::avx2, const Stored* p, float, std::int32_t) noexcept {
    const __m128i words = _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    if constexpr (std::is_same_v<Stored, float8_e5m2>) {
        return _mm256_cvtph_ps(_mm_slli_epi16(words, 8));
    } else {
        const __m128i half = _mm_and_si128(_mm_slli_epi16(words, 7), _mm_set1_epi16(std::int16_t(0xbf80)));
        const __m128i nan_code = _mm_cmpeq_epi16(_mm_and_si128(half, _mm_set1_epi16(0x7fff)), _mm_set1_epi16(0x3f80));
        const __m128i fixed = _mm_xor_si128(half, _mm_and_si128(nan_code, _mm_set1_epi16(0x4180)));
        return _mm256_mul_ps(_mm256_cvtph_ps(fixed), _mm256_set1_ps(0x1p+8f));
    }
}
#endif

#if defined(__AVX2__)
template <class Arch, class Stored>
    requires(std::is_same_v<Stored, bfloat16> || std::is_integral_v<Stored>)
xsimd::batch<float, Arch> widen_to_float32(xsimd::avx2, const Stored* p, float scale, std::int32_t zero_point) noexcept {
    if constexpr (std::is_same_v<Stored, bfloat16>) {
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16));
    } else {
        __m256i q;
        if constexpr (std::is_same_v<Stored, std::uint8_t>)
            q = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
        else if constexpr (std::is_same_v<Stored, std::int8_t>)
            q = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
        else if constexpr (std::is_same_v<Stored, std::uint16_t>)
            q = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        else
            q = _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        const __m256 shifted = _mm256_cvtepi32_ps(_mm256_sub_epi32(q, _mm256_set1_epi32(zero_point)));
        return _mm256_mul_ps(_mm256_set1_ps(scale), shifted);
    }
}

// 8 packed 4-bit codes from 4 bytes, as the AVX-512 form (x86_avx512.hpp).
template <class Arch, class Codes>
xsimd::batch<float, Arch> widen_nibbles_to_float32(xsimd::avx2, const std::uint8_t* bytes, float scale,
                                                   std::int32_t zero_point) noexcept {
    std::int32_t four_bytes;
    std::memcpy(&four_bytes, bytes, sizeof four_bytes);
    const __m128i packed = _mm_cvtsi32_si128(four_bytes);
    const __m256i doubled = _mm256_cvtepu8_epi32(_mm_unpacklo_epi8(packed, packed));
    __m256i q;
    if constexpr (Codes::is_signed)
        q = _mm256_srai_epi32(_mm256_sllv_epi32(doubled, _mm256_set_epi32(24, 28, 24, 28, 24, 28, 24, 28)), 28);
    else
        q = _mm256_and_si256(_mm256_srlv_epi32(doubled, _mm256_set_epi32(4, 0, 4, 0, 4, 0, 4, 0)), _mm256_set1_epi32(0xf));
    const __m256 shifted = _mm256_cvtepi32_ps(_mm256_sub_epi32(q, _mm256_set1_epi32(zero_point)));
    return _mm256_mul_ps(_mm256_set1_ps(scale), shifted);
}

template <class Arch, class Codes>
xsimd::batch<float, Arch> widen_mx_to_float32(xsimd::avx2, const std::uint8_t* bytes) noexcept {
    const float* table = mx_values<Codes>();
    __m256i codes;
    __m256 magnitude;
    int sign_shift;
    if constexpr (std::is_same_v<Codes, e2m1_codes>) {
        std::int32_t four_bytes;
        std::memcpy(&four_bytes, bytes, sizeof four_bytes);
        const __m128i packed = _mm_cvtsi32_si128(four_bytes);
        const __m256i doubled = _mm256_cvtepu8_epi32(_mm_unpacklo_epi8(packed, packed));
        codes = _mm256_srlv_epi32(doubled, _mm256_set_epi32(4, 0, 4, 0, 4, 0, 4, 0));
        magnitude = _mm256_permutevar8x32_ps(_mm256_loadu_ps(table), codes); // low 3 bits: the magnitude
        sign_shift = 28; // bit 3
    } else {
        codes = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes)));
        // blendv picks by bit 31: bit 3 of the code selects within a pair of
        // tables, bit 4 between the pairs.
        const __m256 bit3 = _mm256_castsi256_ps(_mm256_slli_epi32(codes, 28));
        const __m256 bit4 = _mm256_castsi256_ps(_mm256_slli_epi32(codes, 27));
        const __m256 low = _mm256_blendv_ps(_mm256_permutevar8x32_ps(_mm256_loadu_ps(table), codes),
                                            _mm256_permutevar8x32_ps(_mm256_loadu_ps(table + 8), codes), bit3);
        const __m256 high = _mm256_blendv_ps(_mm256_permutevar8x32_ps(_mm256_loadu_ps(table + 16), codes),
                                             _mm256_permutevar8x32_ps(_mm256_loadu_ps(table + 24), codes), bit3);
        magnitude = _mm256_blendv_ps(low, high, bit4);
        sign_shift = 26; // bit 5; bits 6-7 shift out (ignored, core/float_mx.hpp)
    }
    const __m256i sign = _mm256_and_si256(_mm256_sll_epi32(codes, _mm_cvtsi32_si128(sign_shift)),
                                          _mm256_set1_epi32(std::int32_t(0x80000000u)));
    return _mm256_castsi256_ps(_mm256_or_si256(_mm256_castps_si256(magnitude), sign));
}
#endif

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace numgap::kernels::detail::isa
#endif
