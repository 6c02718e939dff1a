#pragma once
// detail::lanes<Arch, T>: the handful of vector operations the fused kernels
// need, over xsimd batches for real architectures and over plain scalars for
// scalar_arch, so one kernel source serves every path.
// The per-instruction-set forms of fma, max, min and sum (AVX-512 writes
// them with intrinsics) and the register barriers live in kernels/isa/.
// Complexity: O(1) per call. Throws: nothing.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include <numgap/core/isa_namespace.hpp>
#include <numgap/kernels/isa.hpp>
#include <numgap/kernels/scalar_arch.hpp>

namespace numgap::kernels::detail {
inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

template <class Arch, class T>
struct lanes {
    using batch = xsimd::batch<T, Arch>;
    static constexpr std::size_t width = batch::size;
    // Registers decide how many independent accumulator sets fit: 32 vector
    // registers (AVX-512, NEON64) hold four sets of six sums plus temporaries,
    // 16 (SSE2, AVX2) two sets if they share one max accumulator (eleven
    // chains, enough to hide FMA latency; twelve spilled: fused_kernel.hpp).
    // 16 floats a vector (AVX-512) take two sets all the same: a step of two
    // vectors already gives each chain nine or more operations between its
    // updates (every core's FMA latency is at most four cycles), and a
    // chunk's end then reduces half as many vectors: f32 at 2^10 elements
    // 14% faster on AMD Zen 5 (0.096 -> 0.082 us), the same from 2^16 on.
    // (float64 keeps four: not measured, and two would flush within chunks.)
    static constexpr bool wide_register_file = isa::vector_registers(Arch{}) >= 32;
    static constexpr int accumulator_sets = !wide_register_file ? 2 : (std::is_same_v<T, float> && width == 16) ? 2 : 4;

    static batch load(const T* pointer) noexcept { return batch::load_unaligned(pointer); }
    static batch splat(T value) noexcept { return batch(value); }
    static batch fma(const batch& a, const batch& b, const batch& c) noexcept { return isa::multiply_add(Arch{}, a, b, c); }
    static batch abs(const batch& x) noexcept { return xsimd::abs(x); }
    static batch max(const batch& a, const batch& b) noexcept { return isa::lane_max(Arch{}, a, b); }
    static batch min(const batch& a, const batch& b) noexcept { return isa::lane_min(Arch{}, a, b); }
    template <class Mask>
    static batch select(const Mask& mask, const batch& a, const batch& b) noexcept {
        return xsimd::select(mask, a, b);
    }
    // Not x != x: xsimd's != on AVX-512 is an ordered compare, false for NaN.
    static auto is_nan(const batch& x) noexcept { return xsimd::isnan(x); }
    static void pin(batch& value) noexcept { keep_in_register(value); }
    static double sum(const batch& x) noexcept { return isa::reduce_sum(Arch{}, x); }
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
    static constexpr bool wide_register_file = true;
    static constexpr int accumulator_sets = 4;

    static batch load(const T* pointer) noexcept { return *pointer; }
    static batch splat(T value) noexcept { return value; }
    // Multiply and add kept apart (keep_rounded): whether GCC contracts
    // them into one fused instruction (by default wherever the target has
    // one: aarch64, x86 with -mfma) depended on the inlining context, so the
    // same values read in place and read converted gave sums one rounding
    // apart (float8 runs, aarch64). keep_rounded acts on x86-64 and aarch64
    // only; elsewhere contraction may still vary.
    static batch fma(T a, T b, T c) noexcept { return keep_rounded(T(a * b)) + c; }
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
