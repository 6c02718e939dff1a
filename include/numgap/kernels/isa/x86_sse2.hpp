#pragma once
// SSE2 forms of the per-instruction-set operations (kernels/isa.hpp), for
// xsimd::sse2 and the architectures derived from it (SSE3 .. SSE4.2, FMA3 on
// SSE4.2). Declared only when the translation unit is compiled with SSE2;
// operations not written here fall back to generic.hpp.
//   vector_registers: 16 (xmm0-15): two accumulator sets of five sums and
//     one shared max, eleven chains: they hide FMA latency, and twelve
//     spilled one (fused_kernel.hpp).
//   widen_to_float32: bfloat16 and 8/16-bit integers; SSE2 has no sign/zero-
//     extending loads, so it interleaves with zeros (or with the value itself
//     and shifts back arithmetically). float16 and float8 have no SSE2
//     conversion (they take generic.hpp's).
//   transpose_block: 4x4 float32 block with _MM_TRANSPOSE4_PS.
// Complexity: O(1) per call. Throws: nothing.
#include <numgap/kernels/isa/generic.hpp>

#if defined(__SSE2__)
#include <cstring>

#include <immintrin.h>

namespace numgap::kernels::detail::isa {
inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

constexpr int vector_registers(xsimd::sse2) noexcept { return 16; }

// float16 and the float8 formats take the portable form (no SSE2 half conversion).
template <class Arch, class Stored>
    requires(std::is_same_v<Stored, bfloat16> || std::is_integral_v<Stored>)
xsimd::batch<float, Arch> widen_to_float32(xsimd::sse2, const Stored* p, float scale, std::int32_t zero_point) noexcept {
    const __m128i zero = _mm_setzero_si128();
    if constexpr (std::is_same_v<Stored, bfloat16>) {
        return _mm_castsi128_ps(_mm_unpacklo_epi16(zero, _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
    } else {
        __m128i q;
        if constexpr (sizeof(Stored) == 1) {
            std::int32_t four;
            std::memcpy(&four, p, sizeof four);
            const __m128i bytes = _mm_cvtsi32_si128(four);
            if constexpr (std::is_same_v<Stored, std::uint8_t>)
                q = _mm_unpacklo_epi16(_mm_unpacklo_epi8(bytes, zero), zero);
            else {
                const __m128i doubled = _mm_unpacklo_epi8(bytes, bytes);
                q = _mm_srai_epi32(_mm_unpacklo_epi16(doubled, doubled), 24);
            }
        } else {
            const __m128i halves = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
            if constexpr (std::is_same_v<Stored, std::uint16_t>)
                q = _mm_unpacklo_epi16(halves, zero);
            else
                q = _mm_srai_epi32(_mm_unpacklo_epi16(halves, halves), 16);
        }
        const __m128 shifted = _mm_cvtepi32_ps(_mm_sub_epi32(q, _mm_set1_epi32(zero_point)));
        return _mm_mul_ps(_mm_set1_ps(scale), shifted);
    }
}

constexpr std::size_t transpose_block_width(xsimd::sse2) noexcept { return 4; }

inline void transpose_block(xsimd::sse2, const float* in, std::int64_t in_stride, float* out, std::int64_t out_stride) noexcept {
    __m128 row0 = _mm_loadu_ps(in), row1 = _mm_loadu_ps(in + in_stride), row2 = _mm_loadu_ps(in + 2 * in_stride),
           row3 = _mm_loadu_ps(in + 3 * in_stride);
    _MM_TRANSPOSE4_PS(row0, row1, row2, row3);
    _mm_storeu_ps(out, row0);
    _mm_storeu_ps(out + out_stride, row1);
    _mm_storeu_ps(out + 2 * out_stride, row2);
    _mm_storeu_ps(out + 3 * out_stride, row3);
}

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace numgap::kernels::detail::isa
#endif
