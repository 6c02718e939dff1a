#pragma once
// The scalar operations the kernels use on single values — larger, smaller,
// magnitude, is_nan and the limits of a floating-point type as constants — declared per instruction set.
// Why not std::max, std::fabs, std::isnan, std::numeric_limits<T>::max() or a
// member function: each of those is one out-of-line symbol for the whole
// program at -O0/-Og, so a dispatch unit compiled with -mavx2 would share it
// with baseline code (core/isa_namespace.hpp). These compile to the same
// instructions and keep std's semantics: larger(a, b) is a < b ? b : a and
// smaller(a, b) is b < a ? b : a, so a NaN first argument is returned as
// std::max and std::min return it.
// Complexity: O(1). Throws: nothing.
#include <cstdint>
#include <limits>

#include <numgap/core/isa_namespace.hpp>

namespace numgap::kernels::detail {
inline namespace NUMGAP_ISA_NAMESPACE {

// Variables, not functions: never emitted as code.
template <class T>
inline constexpr T largest_finite = std::numeric_limits<T>::max();
template <class T>
inline constexpr T smallest_normal = std::numeric_limits<T>::min();

template <class T>
constexpr T larger(T a, T b) noexcept {
    return a < b ? b : a;
}

template <class T>
constexpr T smaller(T a, T b) noexcept {
    return b < a ? b : a;
}

template <class T>
T magnitude(T value) noexcept {
    if constexpr (sizeof(T) == sizeof(float))
        return __builtin_fabsf(value);
    else
        return __builtin_fabs(value);
}

template <class T>
bool is_nan(T value) noexcept {
    return __builtin_isnan(value);
}

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace numgap::kernels::detail
