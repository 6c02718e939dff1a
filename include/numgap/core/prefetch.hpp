#pragma once
// numgap::detail::prefetch(address) and prefetch_bytes(base, offset, bytes):
// ask the CPU to start loading memory that a loop will read a little later
// (one request per 64-byte line for a byte range). prefetch_far and
// prefetch_bytes_far ask for memory read later still, into the outer caches
// only (locality hint 1: x86 prefetcht2), so it does not push out of L1 what
// the loop reads first.
// Why: streaming kernels and the graph matchers both stall on memory the
// hardware prefetcher does not fetch early enough; see their call sites for
// what it bought there. Only a hint: no effect on results, and no fault for
// addresses past the end of an object — prefetch_bytes forms the address as
// an integer, so nothing out of bounds is ever a pointer. A no-op on
// compilers without __builtin_prefetch. O(bytes / 64), never throws.
#include <cstddef>
#include <cstdint>

#include <numgap/core/config.hpp>
#include <numgap/core/isa_namespace.hpp>

namespace numgap::detail {
// Per instruction set: the kernels' dispatch units call these (core/isa_namespace.hpp).
inline namespace NUMGAP_ISA_NAMESPACE {

// Always inlined: GCC 12 takes a call of these for one without side
// effects, and under a condition deleted it (with the band walk's prefetches).
NUMGAP_ALWAYS_INLINE void prefetch([[maybe_unused]] const void* address) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(address);
#endif
}

inline void prefetch_bytes(const void* base, std::size_t offset, std::size_t bytes) noexcept {
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(base) + offset;
    for (std::size_t line = 0; line < bytes; line += 64) prefetch(reinterpret_cast<const void*>(first + line));
}

NUMGAP_ALWAYS_INLINE void prefetch_far([[maybe_unused]] const void* address) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(address, 0, 1);
#endif
}

inline void prefetch_bytes_far(const void* base, std::size_t offset, std::size_t bytes) noexcept {
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(base) + offset;
    for (std::size_t line = 0; line < bytes; line += 64) prefetch_far(reinterpret_cast<const void*>(first + line));
}

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace numgap::detail
