// The replaced global operator new behind allocation_counter.hpp: malloc, and
// one count a call. The deletes are replaced too, so both sides agree.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include "allocation_counter.hpp"

namespace {
std::atomic<std::int64_t> allocation_calls{0};
}

std::int64_t numgap_test::allocations_so_far() noexcept { return allocation_calls.load(std::memory_order_relaxed); }

#if NUMGAP_TEST_COUNTS_ALLOCATIONS
void* operator new(std::size_t size) {
    allocation_calls.fetch_add(1, std::memory_order_relaxed);
    if (void* block = std::malloc(size == 0 ? 1 : size)) return block;
    throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t alignment) {
    allocation_calls.fetch_add(1, std::memory_order_relaxed);
    const std::size_t align = std::max(static_cast<std::size_t>(alignment), sizeof(void*));
    void* block = nullptr;
    if (posix_memalign(&block, align, size == 0 ? 1 : size) == 0) return block;
    throw std::bad_alloc();
}
void operator delete(void* block) noexcept { std::free(block); }
void operator delete(void* block, std::size_t) noexcept { std::free(block); }
void operator delete(void* block, std::align_val_t) noexcept { std::free(block); }
void operator delete(void* block, std::size_t, std::align_val_t) noexcept { std::free(block); }
#endif
