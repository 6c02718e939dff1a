#pragma once
// AVX-512 forms of the per-instruction-set operations (kernels/isa.hpp), for
// xsimd::avx512f and the architectures derived from it (CD, DQ, BW).
// Declared only when the translation unit is compiled with AVX-512F.
//   vector_registers: 32 (zmm0-31), as generic.hpp; all the same, two
//     accumulator sets for float32's 16 lanes, four for float64
//     (source/simd_lanes.hpp).
//   multiply_add: the intrinsic, because xsimd 8.1's fma on AVX-512 batches
//     is not emitted as a fused instruction by clang 14.
//   lane_max / lane_min / reduce_sum, and every AVX-512 intrinsic here, use
//     the zero-masking forms with a full mask: GCC 12's plain forms of these
//     (and of conversions, shifts and unpacks) pass _mm512_undefined_*() as
//     the unused merge source, which -Wall reports as "used uninitialized"
//     (GCC bug 105593, fixed in GCC 13) in every program that includes numgap
//     with -march=native; the maskz forms emit the same instructions.
//   reduce_sum: halves to 256, then 128 bits, then shuffles; rounding in
//     float is bounded by log2(16) ulps of a chunk sum, which the float64
//     accumulation across chunks keeps negligible.
//   widen_to_float32: 16 float16 (vcvtph2ps), bfloat16 or 8/16-bit integers
//     (vpmovzx/vpmovsx), or float8 e4m3fn / e5m2 (by way of float16) to one
//     vector of float32.
//   widen_nibbles_to_float32: 16 packed 4-bit codes from 8 bytes: each byte
//     into two 32-bit lanes (nibble_indices: a broadcast and one in-lane
//     vpshufb with AVX512BW, ~6% faster in cache on Zen 4 than the byte
//     unpack and cross-lane zero extension), odd lanes shifted down by 4, and
//     the nibbles looked up as floats with vpermps (one operation for the
//     shift pair and conversion that would sign-extend and convert them).
//   widen_mx_to_float32: 16 MX element codes looked up in registers: e2m1
//     nibbles (nibble_indices, as for int4) index the 16-entry table with
//     vpermps; float6 bytes index the 32 magnitudes with vpermt2ps (which
//     reads only the index's low 5 bits), and bit 5 moves to the sign bit.
//   widen_float16_vectors: 16 float16 per vcvtph2ps, except vectors holding a
//     NaN, converted portably (vcvtph2ps would quiet a signalling NaN).
//   transpose_block: 16x16 float32 block, 64 shuffles per 256 elements
//     (transpose_16x16 in registers).
//   load_columns: four columns of 16 rows: rows g, g + 4, g + 8, g + 12
//     share a vector (one 128-bit piece each, 12 inserts), then a 4x4
//     transpose within each 128-bit lane (4 unpacks, 4 shuffles); sixteen
//     columns: one load per row and transpose_16x16.
// Complexity: O(1) per call (widen_float16_vectors: O(n)). Throws: nothing.
#include <numgap/kernels/isa/generic.hpp>

#if defined(__AVX512F__)
#include <immintrin.h>

#include <cstring>

namespace numgap::kernels::detail::isa {
inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

inline constexpr __mmask16 all_16_lanes = 0xFFFF;
inline constexpr __mmask8 all_8_lanes = 0xFF;
inline constexpr __mmask8 low_4_lanes = 0xF;

constexpr int vector_registers(xsimd::avx512f) noexcept { return 32; }

template <class Arch>
xsimd::batch<float, Arch> multiply_add(xsimd::avx512f, const xsimd::batch<float, Arch>& a, const xsimd::batch<float, Arch>& b,
                                       const xsimd::batch<float, Arch>& c) noexcept {
    return _mm512_fmadd_ps(a, b, c);
}
template <class Arch>
xsimd::batch<double, Arch> multiply_add(xsimd::avx512f, const xsimd::batch<double, Arch>& a,
                                        const xsimd::batch<double, Arch>& b, const xsimd::batch<double, Arch>& c) noexcept {
    return _mm512_fmadd_pd(a, b, c);
}

template <class Arch>
xsimd::batch<float, Arch> lane_max(xsimd::avx512f, const xsimd::batch<float, Arch>& a, const xsimd::batch<float, Arch>& b) noexcept {
    return _mm512_maskz_max_ps(all_16_lanes, a, b);
}
template <class Arch>
xsimd::batch<double, Arch> lane_max(xsimd::avx512f, const xsimd::batch<double, Arch>& a, const xsimd::batch<double, Arch>& b) noexcept {
    return _mm512_maskz_max_pd(all_8_lanes, a, b);
}
template <class Arch>
xsimd::batch<float, Arch> lane_min(xsimd::avx512f, const xsimd::batch<float, Arch>& a, const xsimd::batch<float, Arch>& b) noexcept {
    return _mm512_maskz_min_ps(all_16_lanes, a, b);
}
template <class Arch>
xsimd::batch<double, Arch> lane_min(xsimd::avx512f, const xsimd::batch<double, Arch>& a, const xsimd::batch<double, Arch>& b) noexcept {
    return _mm512_maskz_min_pd(all_8_lanes, a, b);
}

template <class Arch>
double reduce_sum(xsimd::avx512f, const xsimd::batch<float, Arch>& x) noexcept {
    const __m512d bits = _mm512_castps_pd(x);
    const __m256 halves = _mm256_add_ps(_mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(low_4_lanes, bits, 0)),
                                        _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(low_4_lanes, bits, 1)));
    __m128 quarter = _mm_add_ps(_mm256_castps256_ps128(halves), _mm256_extractf128_ps(halves, 1));
    quarter = _mm_add_ps(quarter, _mm_movehl_ps(quarter, quarter));
    quarter = _mm_add_ss(quarter, _mm_shuffle_ps(quarter, quarter, 1));
    return double(_mm_cvtss_f32(quarter));
}
template <class Arch>
double reduce_sum(xsimd::avx512f, const xsimd::batch<double, Arch>& x) noexcept {
    const __m256d halves = _mm256_add_pd(_mm512_maskz_extractf64x4_pd(low_4_lanes, x, 0),
                                         _mm512_maskz_extractf64x4_pd(low_4_lanes, x, 1));
    const __m128d quarter = _mm_add_pd(_mm256_castpd256_pd128(halves), _mm256_extractf128_pd(halves, 1));
    return _mm_cvtsd_f64(_mm_add_sd(quarter, _mm_unpackhi_pd(quarter, quarter)));
}

// float8 as in x86_avx2.hpp: through float16 (vcvtph2ps) on 16-bit lanes
// (AVX2 instructions: AVX-512F has no 16-bit integer operations).
template <class Arch, class Stored>
    requires(std::is_same_v<Stored, float8_e4m3fn> || std::is_same_v<Stored, float8_e5m2>)
xsimd::batch<float, Arch> widen_to_float32(xsimd::avx512f, const Stored* p, float, std::int32_t) noexcept {
    const __m256i words = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    if constexpr (std::is_same_v<Stored, float8_e5m2>) {
        return _mm512_maskz_cvtph_ps(all_16_lanes, _mm256_slli_epi16(words, 8));
    } else {
        const __m256i half = _mm256_and_si256(_mm256_slli_epi16(words, 7), _mm256_set1_epi16(std::int16_t(0xbf80)));
        const __m256i nan_code = _mm256_cmpeq_epi16(_mm256_and_si256(half, _mm256_set1_epi16(0x7fff)), _mm256_set1_epi16(0x3f80));
        const __m256i fixed = _mm256_xor_si256(half, _mm256_and_si256(nan_code, _mm256_set1_epi16(0x4180)));
        return _mm512_mul_ps(_mm512_maskz_cvtph_ps(all_16_lanes, fixed), _mm512_set1_ps(0x1p+8f));
    }
}

template <class Arch, class Stored>
    requires(std::is_same_v<Stored, float16> || std::is_same_v<Stored, bfloat16> || std::is_integral_v<Stored>)
xsimd::batch<float, Arch> widen_to_float32(xsimd::avx512f, const Stored* p, float scale, std::int32_t zero_point) noexcept {
    if constexpr (std::is_same_v<Stored, float16>)
        return _mm512_maskz_cvtph_ps(all_16_lanes, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    else if constexpr (std::is_same_v<Stored, bfloat16>)
        return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(
            all_16_lanes, _mm512_maskz_cvtepu16_epi32(all_16_lanes, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16));
    else {
        __m512i q;
        if constexpr (std::is_same_v<Stored, std::uint8_t>)
            q = _mm512_maskz_cvtepu8_epi32(all_16_lanes, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        else if constexpr (std::is_same_v<Stored, std::int8_t>)
            q = _mm512_maskz_cvtepi8_epi32(all_16_lanes, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        else if constexpr (std::is_same_v<Stored, std::uint16_t>)
            q = _mm512_maskz_cvtepu16_epi32(all_16_lanes, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
        else
            q = _mm512_maskz_cvtepi16_epi32(all_16_lanes, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
        const __m512 shifted = _mm512_maskz_cvtepi32_ps(all_16_lanes, _mm512_sub_epi32(q, _mm512_set1_epi32(zero_point)));
        return _mm512_mul_ps(_mm512_set1_ps(scale), shifted);
    }
}

// The 16 packed 4-bit codes at `bytes` (8 bytes, low nibble first), one per
// 32-bit lane in the lane's low 4 bits (higher bits are garbage: vpermps
// reads only those 4). Lanes 2k and 2k+1 both get byte k, zero-extended (with
// AVX512BW: an 8-byte broadcast, a load, and one in-lane vpshufb; else a
// byte unpack and a cross-lane zero extension); odd lanes then shift down by 4.
inline __m512i nibble_indices(const std::uint8_t* bytes) noexcept {
#if defined(__AVX512BW__)
    std::int64_t eight_bytes;
    std::memcpy(&eight_bytes, bytes, sizeof eight_bytes);
    // Dword j takes byte j / 2 of its 128-bit lane (every lane holds the 8
    // bytes); the other three bytes of the dword are zeroed (index 0x80).
    const __m512i spread = _mm512_set_epi32(
        int(0x80808007u), int(0x80808007u), int(0x80808006u), int(0x80808006u), int(0x80808005u), int(0x80808005u),
        int(0x80808004u), int(0x80808004u), int(0x80808003u), int(0x80808003u), int(0x80808002u), int(0x80808002u),
        int(0x80808001u), int(0x80808001u), int(0x80808000u), int(0x80808000u));
    const __m512i doubled = _mm512_shuffle_epi8(_mm512_set1_epi64(eight_bytes), spread);
#else
    const __m128i packed = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes));
    const __m512i doubled = _mm512_maskz_cvtepu8_epi32(all_16_lanes, _mm_unpacklo_epi8(packed, packed));
#endif
    const __m512i to_bottom = _mm512_set_epi32(4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0);
    return _mm512_maskz_srlv_epi32(all_16_lanes, doubled, to_bottom);
}

template <class Arch, class Codes>
xsimd::batch<float, Arch> widen_nibbles_to_float32(xsimd::avx512f, const std::uint8_t* bytes, float scale,
                                                   std::int32_t zero_point) noexcept {
    // The table holds each code's value as a float.
    const float* table = Codes::is_signed ? int4_values.values : uint4_values.values;
    const __m512 q = _mm512_maskz_permutexvar_ps(all_16_lanes, nibble_indices(bytes), _mm512_loadu_ps(table));
    // float(q) - float(zero_point) is the correctly rounded q - zero_point,
    // as converting the integer difference is (both exact: |zero_point| <=
    // 2^24); a constant 0 (no zero points) folds away.
    const __m512 shifted = _mm512_sub_ps(q, _mm512_set1_ps(float(zero_point)));
    return _mm512_mul_ps(_mm512_set1_ps(scale), shifted);
}

template <class Arch, class Codes>
xsimd::batch<float, Arch> widen_mx_to_float32(xsimd::avx512f, const std::uint8_t* bytes) noexcept {
    const float* table = mx_values<Codes>();
    if constexpr (std::is_same_v<Codes, e2m1_codes>) {
        return _mm512_maskz_permutexvar_ps(all_16_lanes, nibble_indices(bytes), _mm512_loadu_ps(table));
    } else {
        const __m512i codes = _mm512_maskz_cvtepu8_epi32(all_16_lanes, _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes)));
        const __m512 magnitude = _mm512_maskz_permutex2var_ps(all_16_lanes, _mm512_loadu_ps(table), codes,
                                                              _mm512_loadu_ps(table + 16));
        // Bit 5 to bit 31; bits 6-7 shift out (ignored, core/float_mx.hpp).
        const __m512i sign = _mm512_maskz_slli_epi32(all_16_lanes, _mm512_and_si512(codes, _mm512_set1_epi32(0x20)), 26);
        return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(magnitude), sign));
    }
}

inline std::size_t widen_float16_vectors(xsimd::avx512f, const float16* source, std::size_t n, float* out) noexcept {
    const __m256i magnitude_mask = _mm256_set1_epi16(0x7fff), infinity = _mm256_set1_epi16(0x7c00);
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i halves = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(source + i));
        // Magnitudes stay below 0x8000, so the signed compare is exact.
        const __m256i nan = _mm256_cmpgt_epi16(_mm256_and_si256(halves, magnitude_mask), infinity);
        if (_mm256_testz_si256(nan, nan))
            _mm512_storeu_ps(out + i, _mm512_maskz_cvtph_ps(all_16_lanes, halves));
        else
            for (std::size_t k = i; k < i + 16; ++k) out[k] = to_float(source[k]);
    }
    return i;
}

constexpr std::size_t transpose_block_width(xsimd::avx512f) noexcept { return 16; }

template <class Arch>
NUMGAP_ALWAYS_INLINE void load_columns(xsimd::avx512f, const float* first, std::int64_t row_stride,
                                       xsimd::batch<float, Arch> (&out)[4]) noexcept {
    __m512 rows[4]; // 128-bit lane m: row g + 4m
    for (int g = 0; g < 4; ++g) {
        __m512 gathered = _mm512_zextps128_ps512(_mm_loadu_ps(first + g * row_stride));
        gathered = _mm512_maskz_insertf32x4(all_16_lanes, gathered, _mm_loadu_ps(first + (g + 4) * row_stride), 1);
        gathered = _mm512_maskz_insertf32x4(all_16_lanes, gathered, _mm_loadu_ps(first + (g + 8) * row_stride), 2);
        rows[g] = _mm512_maskz_insertf32x4(all_16_lanes, gathered, _mm_loadu_ps(first + (g + 12) * row_stride), 3);
    }
    const __m512 low01 = _mm512_maskz_unpacklo_ps(all_16_lanes, rows[0], rows[1]);
    const __m512 high01 = _mm512_maskz_unpackhi_ps(all_16_lanes, rows[0], rows[1]);
    const __m512 low23 = _mm512_maskz_unpacklo_ps(all_16_lanes, rows[2], rows[3]);
    const __m512 high23 = _mm512_maskz_unpackhi_ps(all_16_lanes, rows[2], rows[3]);
    out[0] = _mm512_maskz_shuffle_ps(all_16_lanes, low01, low23, _MM_SHUFFLE(1, 0, 1, 0));
    out[1] = _mm512_maskz_shuffle_ps(all_16_lanes, low01, low23, _MM_SHUFFLE(3, 2, 3, 2));
    out[2] = _mm512_maskz_shuffle_ps(all_16_lanes, high01, high23, _MM_SHUFFLE(1, 0, 1, 0));
    out[3] = _mm512_maskz_shuffle_ps(all_16_lanes, high01, high23, _MM_SHUFFLE(3, 2, 3, 2));
}

// rows[k] becomes column k of the 16 x 16 block rows[0..15] held.
NUMGAP_ALWAYS_INLINE void transpose_16x16(__m512 (&rows)[16]) noexcept {
    __m512 pairs[16];
    for (int i = 0; i < 8; ++i) {
        pairs[2 * i] = _mm512_maskz_unpacklo_ps(all_16_lanes, rows[2 * i], rows[2 * i + 1]);
        pairs[2 * i + 1] = _mm512_maskz_unpackhi_ps(all_16_lanes, rows[2 * i], rows[2 * i + 1]);
    }
    // Now each 128-bit lane k of quads[4g + m] holds rows 4g..4g+3 of column 4k+m.
    __m512 quads[16];
    for (int g = 0; g < 4; ++g) {
        const __m512d p0 = _mm512_castps_pd(pairs[4 * g]), p1 = _mm512_castps_pd(pairs[4 * g + 1]),
                      p2 = _mm512_castps_pd(pairs[4 * g + 2]), p3 = _mm512_castps_pd(pairs[4 * g + 3]);
        quads[4 * g] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(all_8_lanes, p0, p2));
        quads[4 * g + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(all_8_lanes, p0, p2));
        quads[4 * g + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(all_8_lanes, p1, p3));
        quads[4 * g + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(all_8_lanes, p1, p3));
    }
    // Transpose the 4x4 grid of 128-bit lanes for each m.
    for (int m = 0; m < 4; ++m) {
        const __m512 low01 = _mm512_maskz_shuffle_f32x4(all_16_lanes, quads[m], quads[4 + m], 0x44);
        const __m512 high01 = _mm512_maskz_shuffle_f32x4(all_16_lanes, quads[m], quads[4 + m], 0xEE);
        const __m512 low23 = _mm512_maskz_shuffle_f32x4(all_16_lanes, quads[8 + m], quads[12 + m], 0x44);
        const __m512 high23 = _mm512_maskz_shuffle_f32x4(all_16_lanes, quads[8 + m], quads[12 + m], 0xEE);
        rows[0 + m] = _mm512_maskz_shuffle_f32x4(all_16_lanes, low01, low23, 0x88);
        rows[4 + m] = _mm512_maskz_shuffle_f32x4(all_16_lanes, low01, low23, 0xDD);
        rows[8 + m] = _mm512_maskz_shuffle_f32x4(all_16_lanes, high01, high23, 0x88);
        rows[12 + m] = _mm512_maskz_shuffle_f32x4(all_16_lanes, high01, high23, 0xDD);
    }
}

inline void transpose_block(xsimd::avx512f, const float* in, std::int64_t in_stride, float* out,
                            std::int64_t out_stride) noexcept {
    __m512 rows[16];
    for (int i = 0; i < 16; ++i) rows[i] = _mm512_loadu_ps(in + i * in_stride);
    transpose_16x16(rows);
    for (int k = 0; k < 16; ++k) _mm512_storeu_ps(out + k * out_stride, rows[k]);
}

template <class Arch>
NUMGAP_ALWAYS_INLINE void load_columns(xsimd::avx512f, const float* first, std::int64_t row_stride,
                                       xsimd::batch<float, Arch> (&out)[16]) noexcept {
    __m512 rows[16];
    for (int i = 0; i < 16; ++i) rows[i] = _mm512_loadu_ps(first + i * row_stride);
    transpose_16x16(rows);
    for (int k = 0; k < 16; ++k) out[k] = rows[k];
}

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace numgap::kernels::detail::isa
#endif
