#pragma once
// Test data for the float8 kernel paths: a code's value decoded from its bit
// fields by the rules of core/float8.hpp, with ldexp (independent of
// numgap::to_float's float16 route), and the sorted grid of finite values that
// rounds float32 data to the nearest code.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <numgap/core/dtype.hpp>
#include <numgap/core/float_mx.hpp>

namespace numgap_test {

// e4m3fn or e5m2 only (e8m0 has no sign or mantissa).
inline float float8_code_value(numgap::dtype type, std::uint8_t code) {
    const bool e4m3 = type == numgap::dtype::float8_e4m3fn;
    const int mantissa_bits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
    const int exponent = (code & 0x7f) >> mantissa_bits, mantissa = code & ((1 << mantissa_bits) - 1);
    float magnitude;
    if (e4m3 && (code & 0x7f) == 0x7f) magnitude = std::numeric_limits<float>::quiet_NaN();
    else if (!e4m3 && exponent == 31) magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    else if (exponent == 0) magnitude = std::ldexp(float(mantissa), 1 - bias - mantissa_bits);
    else magnitude = std::ldexp(float((1 << mantissa_bits) + mantissa), exponent - bias - mantissa_bits);
    return code & 0x80 ? -magnitude : magnitude;
}

// Every finite code with its value, sorted by value.
inline std::vector<std::pair<float, std::uint8_t>> float8_grid(numgap::dtype type) {
    std::vector<std::pair<float, std::uint8_t>> grid;
    for (unsigned code = 0; code < 256; ++code) {
        const float value = float8_code_value(type, std::uint8_t(code));
        if (std::isfinite(value)) grid.emplace_back(value, std::uint8_t(code));
    }
    std::sort(grid.begin(), grid.end());
    return grid;
}

// The same for the MX formats below one byte (float4_e2m1fn, float6_*), by
// numgap::to_float (pinned to the bit fields in tests/core/float_mx.cpp);
// negative zero left out, so +0 is the code of 0.
inline std::vector<std::pair<float, std::uint8_t>> mx_grid(numgap::dtype type) {
    std::vector<std::pair<float, std::uint8_t>> grid;
    const unsigned codes = type == numgap::dtype::float4_e2m1fn ? 16 : 64, sign = codes / 2;
    for (unsigned code = 0; code < codes; ++code) {
        if (code == sign) continue;
        const auto bits = std::uint8_t(code);
        const float value = type == numgap::dtype::float4_e2m1fn   ? numgap::to_float(numgap::float4_e2m1fn{bits})
                            : type == numgap::dtype::float6_e2m3fn ? numgap::to_float(numgap::float6_e2m3fn{bits})
                                                                   : numgap::to_float(numgap::float6_e3m2fn{bits});
        grid.emplace_back(value, bits);
    }
    std::sort(grid.begin(), grid.end());
    return grid;
}

// The code nearest to x (ties to the lower value; saturates at the ends).
inline std::pair<float, std::uint8_t> nearest_float8(const std::vector<std::pair<float, std::uint8_t>>& grid, float x) {
    auto above = std::lower_bound(grid.begin(), grid.end(), std::pair<float, std::uint8_t>{x, 0});
    if (above == grid.end() || (above != grid.begin() && x - std::prev(above)->first <= above->first - x)) --above;
    return *above;
}

} // namespace numgap_test
