#pragma once
// detail::lanes<Arch, T>: the handful of vector operations the fused kernels
// need, over xsimd batches for real architectures and over plain scalars for
// scalar_arch, so one kernel source serves every path.
// Why not plain xsimd::fma: xsimd 8.1's fma on AVX-512 batches is not emitted
// as a fused instruction by clang 14, so AVX-512 goes through the intrinsic.
// Why the AVX-512 max / min / sum below: GCC 12's plain AVX-512 intrinsics
// for these (and for conversions, shifts and unpacks) pass
// _mm512_undefined_*() as the unused merge source, which -Wall reports as
// "used uninitialized" (GCC bug 105593, fixed in GCC 13) in every program
// that includes numgap with -march=native; the zero-masking forms with a full
// mask emit the same instructions without it. numgap's other AVX-512 code
// uses the maskz forms for the same reason.
// Why pin(): GCC 12 folds loads into memory operands and then re-loads the same
// batch for every use; an empty asm forces the value into one register.
// Complexity: O(1) per call. Throws: nothing.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include <numgap/core/isa_namespace.hpp>
#include <numgap/kernels/scalar_arch.hpp>

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <immintrin.h>
#endif

namespace numgap::kernels::detail {
inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

// Compilers contract a multiply with a following add or subtract into one
// fused instruction by default (GCC: -ffp-contract=fast), and whether they do
// depends on the inlining context. An empty asm with the value as a register
// operand ends the expression, so the value is rounded where the source says:
// a dequantized element equals the same element converted to memory first,
// and a scalar tail gives the same sums in every instantiation.
template <class T>
T keep_rounded(T value) noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    asm("" : "+x"(value));
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
    asm("" : "+w"(value));
#endif
    return value;
}

template <class Arch, class T>
struct lanes {
    using batch = xsimd::batch<T, Arch>;
    static constexpr std::size_t width = batch::size;
    // Registers decide how many independent accumulator sets fit: 32 vector
    // registers (AVX-512, NEON64) hold four sets of six sums plus temporaries,
    // 16 (SSE2, AVX2) hold two without spilling; two sets of six distinct
    // sums are already twelve independent chains, enough to hide FMA latency.
    static constexpr int accumulator_sets =
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
        std::is_base_of_v<xsimd::avx512f, Arch> ? 4 : 2;
#else
        4;
#endif

    static batch load(const T* pointer) noexcept { return batch::load_unaligned(pointer); }
    static batch splat(T value) noexcept { return batch(value); }
    static batch fma(const batch& a, const batch& b, const batch& c) noexcept {
#if defined(__x86_64__) || defined(_M_X64)
        if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) {
            if constexpr (std::is_same_v<T, float>)
                return batch(_mm512_fmadd_ps(a, b, c));
            else
                return batch(_mm512_fmadd_pd(a, b, c));
        } else
#endif
            return xsimd::fma(a, b, c);
    }
    static batch abs(const batch& x) noexcept { return xsimd::abs(x); }
    static batch max(const batch& a, const batch& b) noexcept {
#if defined(__AVX512F__)
        if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) {
            if constexpr (std::is_same_v<T, float>)
                return batch(_mm512_maskz_max_ps(__mmask16(0xFFFF), a, b));
            else
                return batch(_mm512_maskz_max_pd(__mmask8(0xFF), a, b));
        } else
#endif
            return xsimd::max(a, b);
    }
    static batch min(const batch& a, const batch& b) noexcept {
#if defined(__AVX512F__)
        if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) {
            if constexpr (std::is_same_v<T, float>)
                return batch(_mm512_maskz_min_ps(__mmask16(0xFFFF), a, b));
            else
                return batch(_mm512_maskz_min_pd(__mmask8(0xFF), a, b));
        } else
#endif
            return xsimd::min(a, b);
    }
    template <class Mask>
    static batch select(const Mask& mask, const batch& a, const batch& b) noexcept {
        return xsimd::select(mask, a, b);
    }
    // Not x != x: xsimd's != on AVX-512 is an ordered compare, false for NaN.
    static auto is_nan(const batch& x) noexcept { return xsimd::isnan(x); }
    static void pin([[maybe_unused]] batch& value) noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
        asm("" : "+v"(value.data));
#endif
    }
    // Rounding in float here is bounded by log2(width) ulps of a chunk sum,
    // which the float64 accumulation across chunks keeps negligible.
    static double sum(const batch& x) noexcept {
#if defined(__AVX512F__)
        if constexpr (std::is_base_of_v<xsimd::avx512f, Arch>) {
            if constexpr (std::is_same_v<T, float>) {
                const __m512d bits = _mm512_castps_pd(x);
                const __m256 halves = _mm256_add_ps(_mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(__mmask8(0xF), bits, 0)),
                                                    _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(__mmask8(0xF), bits, 1)));
                __m128 quarter = _mm_add_ps(_mm256_castps256_ps128(halves), _mm256_extractf128_ps(halves, 1));
                quarter = _mm_add_ps(quarter, _mm_movehl_ps(quarter, quarter));
                quarter = _mm_add_ss(quarter, _mm_shuffle_ps(quarter, quarter, 1));
                return double(_mm_cvtss_f32(quarter));
            } else {
                const __m256d halves = _mm256_add_pd(_mm512_maskz_extractf64x4_pd(__mmask8(0xF), x, 0),
                                                     _mm512_maskz_extractf64x4_pd(__mmask8(0xF), x, 1));
                const __m128d quarter = _mm_add_pd(_mm256_castpd256_pd128(halves), _mm256_extractf128_pd(halves, 1));
                return _mm_cvtsd_f64(_mm_add_sd(quarter, _mm_unpackhi_pd(quarter, quarter)));
            }
        } else
#endif
            return double(xsimd::hadd(x));
    }
    static T maximum(const batch& x) noexcept {
        alignas(64) T values[width]; // not std::array: its members are shared symbols
        x.store_aligned(values);
        T best = values[0];
        for (std::size_t i = 1; i < width; ++i) best = values[i] > best ? values[i] : best;
        return best;
    }
    static T minimum(const batch& x) noexcept {
        alignas(64) T values[width]; // not std::array: its members are shared symbols
        x.store_aligned(values);
        T best = values[0];
        for (std::size_t i = 1; i < width; ++i) best = values[i] < best ? values[i] : best;
        return best;
    }
};

template <class T>
struct lanes<scalar_arch, T> {
    using batch = T;
    static constexpr std::size_t width = 1;
    static constexpr int accumulator_sets = 4;

    static batch load(const T* pointer) noexcept { return *pointer; }
    static batch splat(T value) noexcept { return value; }
    static batch fma(T a, T b, T c) noexcept { return a * b + c; }
    static batch abs(T x) noexcept { return std::fabs(x); }
    static batch max(T a, T b) noexcept { return a > b ? a : b; }
    static batch min(T a, T b) noexcept { return a < b ? a : b; }
    static batch select(bool mask, T a, T b) noexcept { return mask ? a : b; }
    static bool is_nan(T x) noexcept { return std::isnan(x); }
    static void pin(T&) noexcept {}
    static double sum(T x) noexcept { return double(x); }
    static T maximum(T x) noexcept { return x; }
    static T minimum(T x) noexcept { return x; }
};

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace numgap::kernels::detail
