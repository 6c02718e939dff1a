#pragma once
// What the fused kernel reads one side from: load(i) gives the batch of
// elements i .. i + width - 1, at(i) element i, advanced(k) the source
// shifted by k elements, prefetch(i, n) asks the CPU to start loading
// elements i .. i + n - 1 (a hint: no effect on results, no fault past the
// end; a no-op for scalar_arch).
//   pointer_source<Arch, T>:       float32 or float64 values in memory.
//   widening_source<Arch, Stored>: float16, bfloat16 or an 8/16-bit integer
//     type, widened to float32 in registers; integers are dequantized as
//     scale * float(q - zero_point) (raw integers: scale 1, zero point 0).
// Every path yields exactly to_float(x) or that dequantized value, so a
// widened batch equals the portable conversion bit for bit, except a float16
// NaN, which stays a NaN but may come out quiet (vcvtph2ps); no metric reads
// NaN payloads. The hardware widening is written per instruction set (AVX-512,
// AVX2 with F16C for float16, SSE2) and selected by the architecture tag and
// the translation unit's flags; any other architecture (NEON, plain AVX,
// scalar_arch) fills a vector from at(), which compilers vectorise.
// Precondition: zero_point within +-2^24 (see stored_run.hpp).
// Complexity: O(1) per call. Throws: nothing.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include <numgap/core/half.hpp>
#include <numgap/core/isa_namespace.hpp>
#include <numgap/core/prefetch.hpp>
#include <numgap/kernels/scalar_arch.hpp>
#include <numgap/kernels/source/simd_lanes.hpp>

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <immintrin.h>
#endif

namespace numgap::kernels::detail {
inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

#if defined(__F16C__)
inline constexpr bool compiled_with_f16c = true;
#else
inline constexpr bool compiled_with_f16c = false;
#endif

template <class Arch, class T>
struct pointer_source {
    using value_type = T;
    const T* data;

    auto load(std::size_t i) const noexcept { return lanes<Arch, T>::load(data + i); }
    T at(std::size_t i) const noexcept { return data[i]; }
    void prefetch(std::size_t i, std::size_t n) const noexcept {
        if constexpr (!std::is_same_v<Arch, scalar_arch>) numgap::detail::prefetch_bytes(data, i * sizeof(T), n * sizeof(T));
    }
    pointer_source advanced(std::size_t k) const noexcept { return {data + k}; }
};

template <class Arch, class Stored>
struct widening_source {
    static_assert(std::is_same_v<Stored, float16> || std::is_same_v<Stored, bfloat16> ||
                      std::is_same_v<Stored, std::int8_t> || std::is_same_v<Stored, std::uint8_t> ||
                      std::is_same_v<Stored, std::int16_t> || std::is_same_v<Stored, std::uint16_t>,
                  "widening_source reads 16-bit floats and 8/16-bit integers");
    using value_type = float;
    using batch = typename lanes<Arch, float>::batch;
    static constexpr std::size_t width = lanes<Arch, float>::width;
    static constexpr bool is_float = std::is_same_v<Stored, float16> || std::is_same_v<Stored, bfloat16>;

    const Stored* data;
    float scale = 1.0f;
    std::int32_t zero_point = 0;

    float at(std::size_t i) const noexcept {
        if constexpr (is_float)
            return keep_rounded(to_float(data[i]));
        else
            return keep_rounded(scale * float(std::int32_t(data[i]) - zero_point));
    }
    widening_source advanced(std::size_t k) const noexcept { return {data + k, scale, zero_point}; }
    void prefetch(std::size_t i, std::size_t n) const noexcept {
        if constexpr (!std::is_same_v<Arch, scalar_arch>) numgap::detail::prefetch_bytes(data, i * sizeof(Stored), n * sizeof(Stored));
    }

    batch load(std::size_t i) const noexcept {
        batch widened = widen(i);
        lanes<Arch, float>::pin(widened); // rounded, as keep_rounded
        return widened;
    }

private:
    batch widen(std::size_t i) const noexcept {
        [[maybe_unused]] const Stored* p = data + i;
#if defined(__AVX512F__)
        if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) {
            // maskz forms: see simd_lanes.hpp (GCC 12 -Wuninitialized).
            if constexpr (std::is_same_v<Stored, float16>)
                return batch(_mm512_maskz_cvtph_ps(__mmask16(0xFFFF), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))));
            else if constexpr (std::is_same_v<Stored, bfloat16>)
                return batch(_mm512_castsi512_ps(
                    _mm512_maskz_slli_epi32(__mmask16(0xFFFF), _mm512_maskz_cvtepu16_epi32(__mmask16(0xFFFF), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16)));
            else {
                __m512i q;
                if constexpr (std::is_same_v<Stored, std::uint8_t>)
                    q = _mm512_maskz_cvtepu8_epi32(__mmask16(0xFFFF), _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
                else if constexpr (std::is_same_v<Stored, std::int8_t>)
                    q = _mm512_maskz_cvtepi8_epi32(__mmask16(0xFFFF), _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
                else if constexpr (std::is_same_v<Stored, std::uint16_t>)
                    q = _mm512_maskz_cvtepu16_epi32(__mmask16(0xFFFF), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
                else
                    q = _mm512_maskz_cvtepi16_epi32(__mmask16(0xFFFF), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
                const __m512 shifted = _mm512_maskz_cvtepi32_ps(__mmask16(0xFFFF), _mm512_sub_epi32(q, _mm512_set1_epi32(zero_point)));
                return batch(_mm512_mul_ps(_mm512_set1_ps(scale), shifted));
            }
        } else
#endif
#if defined(__AVX2__)
        if constexpr (std::is_base_of_v<xsimd::avx2, Arch> && width == 8 &&
                      (!std::is_same_v<Stored, float16> || compiled_with_f16c)) {
            if constexpr (std::is_same_v<Stored, float16>) {
#if defined(__F16C__)
                return batch(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
#endif
            } else if constexpr (std::is_same_v<Stored, bfloat16>) {
                return batch(_mm256_castsi256_ps(
                    _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16)));
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
                return batch(_mm256_mul_ps(_mm256_set1_ps(scale), shifted));
            }
        } else
#endif
#if defined(__SSE2__)
        if constexpr (std::is_base_of_v<xsimd::sse2, Arch> && width == 4 && !std::is_same_v<Stored, float16>) {
            // SSE2 has no sign/zero-extending loads: interleave with zeros (or
            // with the value itself and shift back arithmetically).
            const __m128i zero = _mm_setzero_si128();
            if constexpr (std::is_same_v<Stored, bfloat16>) {
                return batch(_mm_castsi128_ps(_mm_unpacklo_epi16(zero, _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)))));
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
                return batch(_mm_mul_ps(_mm_set1_ps(scale), shifted));
            }
        } else
#endif
        {
            if constexpr (std::is_same_v<Arch, scalar_arch>) {
                return at(i);
            } else {
                alignas(64) float values[width];
                for (std::size_t k = 0; k < width; ++k) values[k] = at(i + k);
                return batch::load_aligned(values);
            }
        }
    }
};

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace numgap::kernels::detail
