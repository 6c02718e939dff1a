#pragma once
// What the fused kernel reads one side from: load(i) gives the batch of
// elements i .. i + width - 1, at(i) element i, advanced(k) the source
// shifted by k elements, prefetch(i, n) asks the CPU to start loading
// elements i .. i + n - 1 (a hint: no effect on results, no fault past the
// end; a no-op for scalar_arch).
//   pointer_source<Arch, T>:       float32 or float64 values in memory; also
//     prefetch_far(i, n), the same hint for the outer caches only
//     (core/prefetch.hpp). pointer_source<Arch, T, false> asks for nothing
//     (both prefetches are no-ops): for streams the hardware prefetcher
//     serves better alone (kernel_table's block_f32_aligned_unprefetched).
//   widening_source<Arch, Stored>: float16, bfloat16, float8 e4m3fn / e5m2
//     or an 8/16-bit integer type, widened to float32 in registers; integers
//     are dequantized as scale * float(q - zero_point) (raw integers: scale
//     1, zero point 0). widening_source<Arch, Stored, false> does not
//     prefetch (kernel_table's run_f32_unprefetched).
// Every path yields exactly to_float(x) or that dequantized value, so a
// widened batch equals the portable conversion bit for bit, except a float16
// or float8_e5m2 NaN, which stays a NaN but may come out quiet (vcvtph2ps);
// no metric reads NaN payloads. The hardware widening is written per instruction set
// (isa::widen_to_float32 in kernels/isa/: AVX-512, AVX2 with F16C for
// float16, SSE2) and selected by the architecture tag and the translation
// unit's flags; any other architecture (NEON, plain AVX) fills a vector
// element by element (isa::widen_one, which at() uses too), scalar_arch
// reads at().
// Precondition: zero_point within +-2^24 (see stored_run.hpp).
// Complexity: O(1) per call. Throws: nothing.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include <numgap/core/float8.hpp>
#include <numgap/core/half.hpp>
#include <numgap/core/isa_namespace.hpp>
#include <numgap/core/prefetch.hpp>
#include <numgap/kernels/isa.hpp>
#include <numgap/kernels/scalar_arch.hpp>
#include <numgap/kernels/source/simd_lanes.hpp>

namespace numgap::kernels::detail {
inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

template <class Arch, class T, bool Prefetches = true>
struct pointer_source {
    using value_type = T;
    const T* data;

    auto load(std::size_t i) const noexcept { return lanes<Arch, T>::load(data + i); }
    T at(std::size_t i) const noexcept { return data[i]; }
    void prefetch(std::size_t i, std::size_t n) const noexcept {
        if constexpr (Prefetches && !std::is_same_v<Arch, scalar_arch>)
            numgap::detail::prefetch_bytes(data, i * sizeof(T), n * sizeof(T));
    }
    void prefetch_far(std::size_t i, std::size_t n) const noexcept {
        if constexpr (Prefetches && !std::is_same_v<Arch, scalar_arch>)
            numgap::detail::prefetch_bytes_far(data, i * sizeof(T), n * sizeof(T));
    }
    pointer_source advanced(std::size_t k) const noexcept { return {data + k}; }
};

template <class Arch, class Stored, bool Prefetches = true>
struct widening_source {
    static_assert(std::is_same_v<Stored, float16> || std::is_same_v<Stored, bfloat16> ||
                      std::is_same_v<Stored, float8_e4m3fn> || std::is_same_v<Stored, float8_e5m2> ||
                      std::is_same_v<Stored, std::int8_t> || std::is_same_v<Stored, std::uint8_t> ||
                      std::is_same_v<Stored, std::int16_t> || std::is_same_v<Stored, std::uint16_t>,
                  "widening_source reads 16-bit floats, float8 e4m3fn/e5m2 and 8/16-bit integers");
    using value_type = float;
    using batch = typename lanes<Arch, float>::batch;
    static constexpr std::size_t width = lanes<Arch, float>::width;

    const Stored* data;
    float scale = 1.0f;
    std::int32_t zero_point = 0;

    float at(std::size_t i) const noexcept { return isa::widen_one(data[i], scale, zero_point); }
    widening_source advanced(std::size_t k) const noexcept { return {data + k, scale, zero_point}; }
    void prefetch(std::size_t i, std::size_t n) const noexcept {
        if constexpr (Prefetches && !std::is_same_v<Arch, scalar_arch>)
            numgap::detail::prefetch_bytes(data, i * sizeof(Stored), n * sizeof(Stored));
    }

    batch load(std::size_t i) const noexcept {
        batch widened = widen(i);
        lanes<Arch, float>::pin(widened); // rounded, as keep_rounded
        return widened;
    }

private:
    batch widen(std::size_t i) const noexcept {
        if constexpr (std::is_same_v<Arch, scalar_arch>)
            return at(i);
        else
            return isa::widen_to_float32<Arch>(Arch{}, data + i, scale, zero_point);
    }
};

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace numgap::kernels::detail
