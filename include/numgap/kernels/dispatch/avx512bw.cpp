// Fused kernels for AVX-512 (F, CD, DQ, BW); compile with
// -mavx512f -mavx512cd -mavx512dq -mavx512bw -mavx2 -mfma.
#include <numgap/kernels/dispatch/dispatch_arch.hpp>

#if !XSIMD_WITH_AVX512BW
#error "numgap: compile dispatch/avx512bw.cpp with -mavx512f -mavx512cd -mavx512dq -mavx512bw -mavx2 -mfma."
#endif

NUMGAP_DEFINE_ARCH_KERNELS(xsimd::avx512bw)
