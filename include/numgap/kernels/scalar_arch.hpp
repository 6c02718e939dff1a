#pragma once
// scalar_arch: the architecture tag of numgap's scalar fallback kernels, and
// native_arch, the best xsimd architecture the current translation unit's
// compiler flags enable (scalar_arch when xsimd has none).
// Why: every kernel is a template over an architecture tag; the scalar tag
// lets the same kernel source run without SIMD so tests can pin the SIMD paths
// against it. Complexity: none (types only). Throws: nothing.
#include <type_traits>

#include <xsimd/xsimd.hpp>

namespace numgap::kernels {

struct scalar_arch {
    static constexpr const char* name() noexcept { return "scalar"; }
};

using native_arch = std::conditional_t<std::is_same_v<xsimd::default_arch, xsimd::unavailable>,
                                       scalar_arch, xsimd::default_arch>;

} // namespace numgap::kernels
