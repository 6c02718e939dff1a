#pragma once
// transpose_tile: out[j * out_stride + i] = in[i * in_stride + j] for
// i < rows, j < cols (float32). The iteration engine uses it to pair a side
// stored transposed (NHWC against NCHW) with the other side's rows without
// gathering element by element.
// Why in-register blocks: a scalar transpose moves one element per store
// (about a cycle each); 16x16 blocks on AVX-512 (64 shuffles per 256
// elements), 8x8 on AVX/AVX2 and 4x4 on SSE2 move whole vectors, so the
// transposed side costs a fraction of a cycle per element. Edges that do not
// fill a block, and architectures without a block routine (NEON, scalar), use
// the scalar loop. Copies bits exactly (NaN payloads included).
// Complexity: O(rows * cols), no allocation. Throws: nothing.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include <numgap/core/isa_namespace.hpp>
#include <numgap/kernels/scalar_arch.hpp>

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <immintrin.h>
#endif

namespace numgap::kernels {

namespace detail {
inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

template <class Arch>
constexpr std::size_t transpose_block_width() noexcept {
#if defined(__AVX512F__)
    if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) return 16;
#endif
#if defined(__AVX__)
    if constexpr (std::is_base_of_v<xsimd::avx, Arch>) return 8;
#endif
#if defined(__SSE2__)
    if constexpr (std::is_base_of_v<xsimd::sse2, Arch>) return 4;
#endif
    return 1;
}

#if defined(__AVX512F__)
inline void transpose_block_16(const float* in, std::int64_t in_stride, float* out, std::int64_t out_stride) noexcept {
    // maskz forms with full masks: see simd_lanes.hpp (GCC 12 -Wuninitialized).
    constexpr __mmask16 all = 0xFFFF;
    constexpr __mmask8 all_pairs = 0xFF;
    __m512 rows[16], pairs[16];
    for (int i = 0; i < 16; ++i) rows[i] = _mm512_loadu_ps(in + i * in_stride);
    for (int i = 0; i < 8; ++i) {
        pairs[2 * i] = _mm512_maskz_unpacklo_ps(all, rows[2 * i], rows[2 * i + 1]);
        pairs[2 * i + 1] = _mm512_maskz_unpackhi_ps(all, rows[2 * i], rows[2 * i + 1]);
    }
    // Now each 128-bit lane k of quads[4g + m] holds rows 4g..4g+3 of column 4k+m.
    __m512 quads[16];
    for (int g = 0; g < 4; ++g) {
        const __m512d p0 = _mm512_castps_pd(pairs[4 * g]), p1 = _mm512_castps_pd(pairs[4 * g + 1]),
                      p2 = _mm512_castps_pd(pairs[4 * g + 2]), p3 = _mm512_castps_pd(pairs[4 * g + 3]);
        quads[4 * g] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(all_pairs, p0, p2));
        quads[4 * g + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(all_pairs, p0, p2));
        quads[4 * g + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(all_pairs, p1, p3));
        quads[4 * g + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(all_pairs, p1, p3));
    }
    // Transpose the 4x4 grid of 128-bit lanes for each m.
    for (int m = 0; m < 4; ++m) {
        const __m512 low01 = _mm512_maskz_shuffle_f32x4(all, quads[m], quads[4 + m], 0x44);
        const __m512 high01 = _mm512_maskz_shuffle_f32x4(all, quads[m], quads[4 + m], 0xEE);
        const __m512 low23 = _mm512_maskz_shuffle_f32x4(all, quads[8 + m], quads[12 + m], 0x44);
        const __m512 high23 = _mm512_maskz_shuffle_f32x4(all, quads[8 + m], quads[12 + m], 0xEE);
        _mm512_storeu_ps(out + (0 + m) * out_stride, _mm512_maskz_shuffle_f32x4(all, low01, low23, 0x88));
        _mm512_storeu_ps(out + (4 + m) * out_stride, _mm512_maskz_shuffle_f32x4(all, low01, low23, 0xDD));
        _mm512_storeu_ps(out + (8 + m) * out_stride, _mm512_maskz_shuffle_f32x4(all, high01, high23, 0x88));
        _mm512_storeu_ps(out + (12 + m) * out_stride, _mm512_maskz_shuffle_f32x4(all, high01, high23, 0xDD));
    }
}
#endif

#if defined(__AVX__)
inline void transpose_block_8(const float* in, std::int64_t in_stride, float* out, std::int64_t out_stride) noexcept {
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
#endif

#if defined(__SSE2__)
inline void transpose_block_4(const float* in, std::int64_t in_stride, float* out, std::int64_t out_stride) noexcept {
    __m128 row0 = _mm_loadu_ps(in), row1 = _mm_loadu_ps(in + in_stride), row2 = _mm_loadu_ps(in + 2 * in_stride),
           row3 = _mm_loadu_ps(in + 3 * in_stride);
    _MM_TRANSPOSE4_PS(row0, row1, row2, row3);
    _mm_storeu_ps(out, row0);
    _mm_storeu_ps(out + out_stride, row1);
    _mm_storeu_ps(out + 2 * out_stride, row2);
    _mm_storeu_ps(out + 3 * out_stride, row3);
}
#endif

inline void transpose_scalar(const float* in, std::int64_t in_stride, std::size_t rows, std::size_t cols, float* out,
                             std::int64_t out_stride) noexcept {
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) out[std::int64_t(j) * out_stride + std::int64_t(i)] = in[std::int64_t(i) * in_stride + std::int64_t(j)];
}

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace detail

template <class Arch>
void transpose_tile(Arch, const float* in, std::int64_t in_stride, std::size_t rows, std::size_t cols, float* out,
                    std::int64_t out_stride) noexcept {
    constexpr std::size_t width = detail::transpose_block_width<Arch>();
    std::size_t i = 0;
    if constexpr (width > 1) {
        for (; i + width <= rows; i += width) {
            const float* in_rows = in + std::int64_t(i) * in_stride;
            std::size_t j = 0;
            for (; j + width <= cols; j += width) {
                float* out_block = out + std::int64_t(j) * out_stride + std::int64_t(i);
#if defined(__AVX512F__)
                if constexpr (width == 16) detail::transpose_block_16(in_rows + j, in_stride, out_block, out_stride);
#endif
#if defined(__AVX__)
                if constexpr (width == 8) detail::transpose_block_8(in_rows + j, in_stride, out_block, out_stride);
#endif
#if defined(__SSE2__)
                if constexpr (width == 4) detail::transpose_block_4(in_rows + j, in_stride, out_block, out_stride);
#endif
            }
            detail::transpose_scalar(in_rows + j, in_stride, width, cols - j, out + std::int64_t(j) * out_stride + std::int64_t(i),
                                     out_stride);
        }
    }
    detail::transpose_scalar(in + std::int64_t(i) * in_stride, in_stride, rows - i, cols, out + std::int64_t(i), out_stride);
}

} // namespace numgap::kernels
