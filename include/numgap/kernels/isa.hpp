#pragma once
// The per-instruction-set operations the kernels call, one header per ISA
// family (kernels/isa/): generic.hpp (xsimd-only and scalar forms, always
// declared), x86_sse2.hpp, x86_avx2.hpp (AVX, AVX2, F16C) and x86_avx512.hpp,
// each declared only under the flags it needs. Every operation is an overload
// on the xsimd architecture tag, in namespace detail::isa inside the
// per-instruction-set inline namespace (core/isa_namespace.hpp): a kernel
// calls isa::operation(Arch{}, ...) and the most derived tag the translation
// unit declares wins. Raw intrinsics and ISA #ifs live only in this folder.
// NEON has no header: its kernels are xsimd code and take the generic forms.
// Complexity: none. Throws: nothing.
#include <numgap/kernels/isa/generic.hpp>
#include <numgap/kernels/isa/register_barrier.hpp>
#include <numgap/kernels/isa/x86_avx2.hpp>
#include <numgap/kernels/isa/x86_avx512.hpp>
#include <numgap/kernels/isa/x86_sse2.hpp>
