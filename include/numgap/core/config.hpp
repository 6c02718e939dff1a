#pragma once
// Build-wide switches. NUMGAP_ASSERT guards programming errors (broken
// invariants), never data errors: those throw numgap::error.
#include <cstdio>
#include <cstdlib>

#if !defined(NUMGAP_ENABLE_ASSERTS) && (!defined(NDEBUG) || defined(__SANITIZE_ADDRESS__))
#define NUMGAP_ENABLE_ASSERTS 1
#endif

#if defined(NUMGAP_ENABLE_ASSERTS) && NUMGAP_ENABLE_ASSERTS
#define NUMGAP_ASSERT(condition)                                                              \
    do {                                                                                      \
        if (!(condition)) {                                                                   \
            std::fprintf(stderr, "%s:%d: numgap assertion failed: %s\n", __FILE__, __LINE__, \
                         #condition);                                                         \
            std::abort();                                                                     \
        }                                                                                     \
    } while (false)
#else
#define NUMGAP_ASSERT(condition) ((void)0)
#endif

// Inlines a small function into a hot loop where GCC's size heuristics
// would keep the call (an out-of-line kernels::detail::isa::load_columns
// went through memory for its four vectors: a third of the NHWC band loop).
#if defined(__GNUC__) || defined(__clang__)
#define NUMGAP_ALWAYS_INLINE [[gnu::always_inline]] inline
#else
#define NUMGAP_ALWAYS_INLINE inline
#endif

namespace numgap {
// Largest tensor rank a view holds inline; views never allocate.
inline constexpr int max_rank = 8;
} // namespace numgap
