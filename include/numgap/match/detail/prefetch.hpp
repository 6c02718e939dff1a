#pragma once
// numgap::detail::prefetch_last_element(range) / prefetch_range_object(range):
// ask the CPU to start loading the last element of a contiguous range, or the
// range object itself, that a loop will read a few iterations later.
//
// Why: matching a million-node graph walks per-node containers (names,
// output keys, debug handles) that each live in their own heap block. Read
// one node at a time, every block is a cache miss the loop waits for;
// touched a dozen nodes ahead, the misses overlap. Only a hint: no effect on
// results; a no-op for ranges that are not contiguous or are returned by
// value (callers skip computing those twice: it would cost more than the
// miss) and on compilers without __builtin_prefetch. O(1), never throws.
#include <cstddef>
#include <memory>
#include <ranges>
#include <type_traits>

#include <numgap/core/prefetch.hpp>

namespace numgap::detail {


// The range object itself (for a graph that keeps per-node containers in a
// node struct: that struct), so that a later prefetch_last_element does not
// wait for it. Issued about twice as far ahead.
template <class Range>
void prefetch_range_object(Range&& range) noexcept {
    if constexpr (std::is_lvalue_reference_v<Range>) prefetch(std::addressof(range));
}

template <class Range>
void prefetch_last_element(Range&& range) noexcept {
    if constexpr (std::is_lvalue_reference_v<Range> && std::ranges::contiguous_range<Range> &&
                  std::ranges::sized_range<Range>) {
        const auto size = std::ranges::size(range);
        if (size != 0) prefetch(std::ranges::data(range) + (size - 1));
    }
}

} // namespace numgap::detail
