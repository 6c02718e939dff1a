#pragma once
// Register barriers: empty asm statements that end a floating-point
// expression or keep a vector in one register, with the operand constraint of
// the target (x86: "x"/"v", AArch64: "w"; no barrier elsewhere).
//   keep_rounded(value): compilers contract a multiply with a following add or
//     subtract into one fused instruction by default (GCC: -ffp-contract=fast),
//     and whether they do depends on the inlining context. An empty asm with
//     the value as a register operand ends the expression, so the value is
//     rounded where the source says: a dequantized element equals the same
//     element converted to memory first, and a scalar tail gives the same sums
//     in every instantiation.
//   keep_in_register(batch): GCC 12 folds loads into memory operands and then
//     re-loads the same batch for every use; an empty asm forces the value
//     into one register.
// Why here, in kernels/isa/: the constraints are per target, and this folder
// is the one place that knows targets (kernels/README.md).
// Complexity: O(1), no instructions emitted. Throws: nothing.
#include <numgap/core/isa_namespace.hpp>

namespace numgap::kernels::detail {
inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

template <class T>
T keep_rounded(T value) noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    asm("" : "+x"(value));
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
    asm("" : "+w"(value));
#endif
    return value;
}

template <class Batch>
void keep_in_register([[maybe_unused]] Batch& value) noexcept {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    asm("" : "+v"(value.data));
#endif
}

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace numgap::kernels::detail
