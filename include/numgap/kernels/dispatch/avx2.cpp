// Fused kernels for AVX2 with FMA3; compile with -mavx2 -mfma -mf16c
// (-mf16c: hardware float16 conversion; optional, see dispatch.hpp).
#include <numgap/kernels/dispatch/dispatch_arch.hpp>

#if !XSIMD_WITH_FMA3_AVX2
#error "numgap: compile dispatch/avx2.cpp with -mavx2 -mfma."
#endif

NUMGAP_DEFINE_ARCH_KERNELS(xsimd::fma3<xsimd::avx2>)
