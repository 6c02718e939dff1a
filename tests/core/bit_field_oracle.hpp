#pragma once
// The scalar oracle of the small float formats' tests (tests/core/float8.cpp,
// float_mx.cpp): a code's value decoded from its bit fields in long double
// with ldexp, independent of numgap::to_float's routes.
#include <cmath>

namespace numgap_test {

// Sign, then a biased exponent field of exponent_bits (bias 2^(bits-1) - 1)
// and a mantissa field of mantissa_bits; exponent 0 is subnormal. The caller
// decides which codes of the top exponent are NaN or Inf.
inline long double decode_fields(unsigned code, int exponent_bits, int mantissa_bits) {
    const int bias = (1 << (exponent_bits - 1)) - 1;
    const unsigned mantissa = code & ((1u << mantissa_bits) - 1);
    const int exponent = int((code >> mantissa_bits) & ((1u << exponent_bits) - 1));
    const long double magnitude =
        exponent == 0 ? std::ldexp((long double)mantissa, 1 - bias - mantissa_bits)
                      : std::ldexp((long double)(mantissa | (1u << mantissa_bits)), exponent - bias - mantissa_bits);
    return (code >> (exponent_bits + mantissa_bits)) & 1u ? -magnitude : magnitude;
}

} // namespace numgap_test
