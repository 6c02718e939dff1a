#pragma once
// NUMGAP_ISA_NAMESPACE: the name of an inline namespace that differs with the
// instruction sets the translation unit is compiled for (isa_avx512bw,
// isa_avx2_fma_f16c, isa_sse2, isa_neon, ...).
// Why: a program that compiles numgap's run-time dispatch units
// (kernels/dispatch/*.cpp) with -mavx2 or -mavx512* and its other code
// without gets, at -O0/-Og, out-of-line copies of every inline function both
// kinds of translation unit call. They share one mangled name, the linker
// keeps one copy, and a baseline caller may end up running the AVX copy on a
// CPU without AVX (an ODR violation). Free functions that kernels reach are
// declared inside `inline namespace NUMGAP_ISA_NAMESPACE`, so each instruction
// set gets its own symbols while callers keep writing numgap::to_float or
// detail::transpose_scalar. Types stay outside (they are shared by every
// translation unit); kernels/README.md lists the other rules.
// The name follows the widest extension the flags enable, with the
// extensions the dispatch units differ in (FMA, F16C, AVX-512 DQ/CD/BW)
// spelled out, so two translation units share these symbols only when their
// flags give the same instruction sets. Complexity: none. Throws: nothing.

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512CD__)
#define NUMGAP_ISA_NAMESPACE isa_avx512bw
#elif defined(__AVX512F__)
#define NUMGAP_ISA_NAMESPACE isa_avx512f
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define NUMGAP_ISA_NAMESPACE isa_avx2_fma_f16c
#elif defined(__AVX2__) && defined(__FMA__)
#define NUMGAP_ISA_NAMESPACE isa_avx2_fma
#elif defined(__AVX2__)
#define NUMGAP_ISA_NAMESPACE isa_avx2
#elif defined(__AVX__)
#define NUMGAP_ISA_NAMESPACE isa_avx
#elif defined(__SSE4_2__)
#define NUMGAP_ISA_NAMESPACE isa_sse4_2
#elif defined(__SSE4_1__)
#define NUMGAP_ISA_NAMESPACE isa_sse4_1
#elif defined(__SSSE3__)
#define NUMGAP_ISA_NAMESPACE isa_ssse3
#elif defined(__SSE3__)
#define NUMGAP_ISA_NAMESPACE isa_sse3
#elif defined(__SSE2__)
#define NUMGAP_ISA_NAMESPACE isa_sse2
#elif defined(__ARM_FEATURE_SVE)
#define NUMGAP_ISA_NAMESPACE isa_sve
#elif defined(__ARM_NEON) || defined(__ARM_NEON__)
#define NUMGAP_ISA_NAMESPACE isa_neon
#else
#define NUMGAP_ISA_NAMESPACE isa_generic
#endif
