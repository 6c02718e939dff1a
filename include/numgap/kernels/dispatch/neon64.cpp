// Fused kernels for AArch64 NEON; no extra flags needed on aarch64.
#include <numgap/kernels/dispatch/dispatch_arch.hpp>

#if !XSIMD_WITH_NEON64
#error "numgap: dispatch/neon64.cpp targets AArch64."
#endif

NUMGAP_DEFINE_ARCH_KERNELS(xsimd::neon64)
