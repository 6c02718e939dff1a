#pragma once
// Counts the test binary's calls of the global operator new (replaced in
// allocation_counter.cpp), so a test can pin "allocates nothing". Under a
// sanitizer that brings its own operator new (address, thread, memory,
// hwaddress) the operator is left as it is (the sanitizer's checks matter
// more there) and counting_allocations is false.
#include <cstdint>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NUMGAP_TEST_COUNTS_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer) ||          \
    __has_feature(hwaddress_sanitizer)
#define NUMGAP_TEST_COUNTS_ALLOCATIONS 0
#endif
#endif
#ifndef NUMGAP_TEST_COUNTS_ALLOCATIONS
#define NUMGAP_TEST_COUNTS_ALLOCATIONS 1
#endif

namespace numgap_test {

inline constexpr bool counting_allocations = NUMGAP_TEST_COUNTS_ALLOCATIONS != 0;

// Calls of operator new so far, on every thread.
std::int64_t allocations_so_far() noexcept;

// How many times action() called operator new.
template <class Action>
std::int64_t allocations_of(Action&& action) {
    const std::int64_t before = allocations_so_far();
    action();
    return allocations_so_far() - before;
}

} // namespace numgap_test
