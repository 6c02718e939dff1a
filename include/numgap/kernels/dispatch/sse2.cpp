// Fused kernels for SSE2, the x86-64 baseline; compile without extra flags.
#include <numgap/kernels/dispatch/dispatch_arch.hpp>

#if !XSIMD_WITH_SSE2
#error "numgap: dispatch/sse2.cpp targets x86-64 (SSE2)."
#endif

NUMGAP_DEFINE_ARCH_KERNELS(xsimd::sse2)
