#pragma once
// read_two_streams: reads two buffers once, concurrently, with the widest
// loads of an architecture, and returns the XOR of their 64-bit words (a byte
// tail is folded in little-endian, zero-padded). It does no arithmetic worth
// the name, so its speed is the memory-bandwidth ceiling the fused kernel is
// measured against (benchmarks/kernels.cpp).
// Why concurrently and in proportion: the fused pass consumes both inputs at
// once (4 bytes of reference per 1, 2 or 4 bytes of target), so a ceiling that
// streams one buffer after the other would measure different prefetcher
// behaviour. Why per architecture (through kernel_table): a ceiling measured
// with narrower loads than the kernel uses would be too low and flatter it.
// prefetch: whether it prefetches as the fused kernel does (2 KiB ahead in
// the larger stream); the benchmarks take the faster of the two forms, since
// which one reads faster depends on the CPU and on the buffers' alignment
// (Zen 5: without, 42 against 37 GB/s on 64-byte-aligned buffers at 2^26
// elements; with, on buffers 16 bytes off a line).
// Complexity: O(first_bytes + second_bytes), no allocation. Throws: nothing.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include <numgap/core/prefetch.hpp>

#include <numgap/core/isa_namespace.hpp>
#include <numgap/kernels/scalar_arch.hpp>
#include <numgap/kernels/source/scalar_math.hpp>

namespace numgap::kernels {

namespace detail {
inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp
inline std::uint64_t xor_words_scalar(const unsigned char* data, std::size_t bytes) noexcept {
    std::uint64_t folded = 0;
    std::size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        std::uint64_t word;
        std::memcpy(&word, data + i, 8);
        folded ^= word;
    }
    if (i < bytes) {
        std::uint64_t word = 0;
        for (std::size_t k = 0; i + k < bytes; ++k) word |= std::uint64_t(data[i + k]) << (8 * k);
        folded ^= word;
    }
    return folded;
}
} // namespace NUMGAP_ISA_NAMESPACE

template <bool Prefetch, class Arch>
std::uint64_t read_streams_loop(Arch, const void* first, std::size_t first_bytes, const void* second,
                                std::size_t second_bytes) noexcept {
    // Plain conditionals, not std::swap: see source/scalar_math.hpp.
    const bool second_is_larger = second_bytes > first_bytes;
    const auto* larger = static_cast<const unsigned char*>(second_is_larger ? second : first);
    const auto* smaller = static_cast<const unsigned char*>(second_is_larger ? first : second);
    const std::size_t larger_bytes = second_is_larger ? second_bytes : first_bytes;
    const std::size_t smaller_bytes = second_is_larger ? first_bytes : second_bytes;
    std::uint64_t folded = 0;
    std::size_t larger_done = 0, smaller_done = 0;
    if constexpr (!std::is_same_v<Arch, scalar_arch>) {
        using batch = xsimd::batch<std::uint64_t, Arch>;
        constexpr std::size_t vector_bytes = sizeof(batch);
        // Per step: `ratio` pairs of vectors from the larger stream for one
        // pair from the smaller, four independent XOR chains.
        const std::size_t ratio = smaller_bytes == 0 ? 0 : detail::larger<std::size_t>(1, larger_bytes / smaller_bytes);
        constexpr std::size_t prefetch_distance = 2048;
        // Outside the loop: GCC keeps a division there (it could trap), one
        // a step (2^16 elements in L2 read at 60% of a plain loop's speed).
        const std::size_t smaller_prefetch_distance = ratio == 0 ? 0 : prefetch_distance / ratio;
        batch a = batch(std::uint64_t(0)), b = a, c = a, d = a;
        auto load = [](const unsigned char* p) { return batch::load_unaligned(reinterpret_cast<const std::uint64_t*>(p)); };
        if (ratio > 0)
            while (smaller_done + 2 * vector_bytes <= smaller_bytes &&
                   larger_done + 2 * ratio * vector_bytes <= larger_bytes) {
                if constexpr (Prefetch) {
                    numgap::detail::prefetch_bytes(larger, larger_done + prefetch_distance, 2 * ratio * vector_bytes);
                    numgap::detail::prefetch_bytes(smaller, smaller_done + smaller_prefetch_distance, 2 * vector_bytes);
                }
                for (std::size_t k = 0; k < ratio; ++k) {
                    a ^= load(larger + larger_done);
                    b ^= load(larger + larger_done + vector_bytes);
                    larger_done += 2 * vector_bytes;
                }
                c ^= load(smaller + smaller_done);
                d ^= load(smaller + smaller_done + vector_bytes);
                smaller_done += 2 * vector_bytes;
            }
        for (; larger_done + 2 * vector_bytes <= larger_bytes; larger_done += 2 * vector_bytes) {
            a ^= load(larger + larger_done);
            b ^= load(larger + larger_done + vector_bytes);
        }
        for (; smaller_done + vector_bytes <= smaller_bytes; smaller_done += vector_bytes) c ^= load(smaller + smaller_done);
        alignas(64) std::uint64_t words[batch::size];
        ((a ^ b) ^ (c ^ d)).store_aligned(words);
        for (const std::uint64_t word : words) folded ^= word;
    }
    // Remaining bytes: a whole number of 8-byte words stays word-aligned
    // relative to each buffer's start, so the fold matches the scalar one.
    folded ^= detail::xor_words_scalar(larger + larger_done, larger_bytes - larger_done);
    folded ^= detail::xor_words_scalar(smaller + smaller_done, smaller_bytes - smaller_done);
    return folded;
}
} // namespace detail

template <class Arch>
std::uint64_t read_two_streams(Arch arch, const void* first, std::size_t first_bytes, const void* second,
                               std::size_t second_bytes, bool prefetch) noexcept {
    return prefetch ? detail::read_streams_loop<true>(arch, first, first_bytes, second, second_bytes)
                    : detail::read_streams_loop<false>(arch, first, first_bytes, second, second_bytes);
}

} // namespace numgap::kernels
