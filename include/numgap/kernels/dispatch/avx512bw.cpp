// Fused kernels for AVX-512 (F, CD, DQ, BW); compile with
// -mavx512f -mavx512cd -mavx512dq -mavx512bw -mavx2 -mfma.
// GCC 12's _mm512_max_ps passes _mm512_undefined_ps() as the unused merge
// source, which -W(maybe-)uninitialized reports as a false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <numgap/kernels/dispatch_arch.hpp>

#if !XSIMD_WITH_AVX512BW
#error "numgap: compile dispatch/avx512bw.cpp with -mavx512f -mavx512cd -mavx512dq -mavx512bw -mavx2 -mfma."
#endif

NUMGAP_DEFINE_ARCH_KERNELS(xsimd::avx512bw)
