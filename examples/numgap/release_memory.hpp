#pragma once
// release_memory: destroys values the CLI no longer needs and hands the
// pages they held back to the system now, so that the next phase's peak does
// not stack on them.
//
// Why the second step: glibc keeps freed small blocks for reuse, and those
// a run's indexes and a graph's lists leave are scattered and mostly smaller
// than the report's arrays that come next, so without a trim they would
// count in the peak twice. glibc's malloc_trim returns the free pages of
// every arena (interior ones too); elsewhere the values are only destroyed.
#include <type_traits>
#include <utility>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace numgap_cli {

template <class... Values>
void release_memory(Values&&... values) {
    // Each moved into a temporary that dies at the end of the statement.
    (static_cast<void>(std::remove_cvref_t<Values>(std::move(values))), ...);
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

} // namespace numgap_cli
