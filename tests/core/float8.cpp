// float8_e4m3fn / float8_e5m2 / float8_e8m0fnu: every one of the 256 codes of
// each format decodes exactly to the value an independent decoder computes
// from the bit fields (long double, ldexp; not to_float's float16 path), with
// the sign of zero, the NaN and Inf codes and the largest finite values
// checked by name.
#include <numgap/core/float8.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

#include <doctest/doctest.h>

#include "bit_field_oracle.hpp"

namespace {

using numgap_test::decode_fields;

constexpr long double not_a_number = std::numeric_limits<long double>::quiet_NaN();
constexpr long double infinity = std::numeric_limits<long double>::infinity();

long double decode_e4m3fn(unsigned code) {
    if ((code & 0x7fu) == 0x7fu) return not_a_number; // the only NaN codes; no Inf
    return decode_fields(code, 4, 3);
}

long double decode_e5m2(unsigned code) {
    if ((code & 0x7cu) == 0x7cu) {
        if (code & 0x03u) return not_a_number;
        return code & 0x80u ? -infinity : infinity;
    }
    return decode_fields(code, 5, 2);
}

long double decode_e8m0(unsigned code) {
    if (code == 0xffu) return not_a_number;
    return std::ldexp(1.0L, int(code) - 127);
}

template <class Stored>
void check_every_code(long double (*oracle)(unsigned), int expected_nan_codes) {
    int nan_codes = 0;
    for (unsigned code = 0; code < 256; ++code) {
        const float got = numgap::to_float(Stored{std::uint8_t(code)});
        const long double expected = oracle(code);
        if (std::isnan(expected)) {
            ++nan_codes;
            if (!std::isnan(got)) FAIL_CHECK("code " << code << " should be NaN, gave " << got);
            continue;
        }
        if ((long double)got != expected || std::signbit(got) != std::signbit(expected))
            FAIL_CHECK("code " << code << " gave " << got << ", expected " << double(expected));
    }
    CHECK(nan_codes == expected_nan_codes);
}

} // namespace

TEST_SUITE("core") {
TEST_CASE("to_float(float8_e4m3fn) is exact for all 256 codes") {
    check_every_code<numgap::float8_e4m3fn>(decode_e4m3fn, 2);
    using numgap::float8_e4m3fn, numgap::to_float;
    CHECK(to_float(float8_e4m3fn{0x7e}) == 448.0f);  // largest finite
    CHECK(to_float(float8_e4m3fn{0xfe}) == -448.0f);
    CHECK(to_float(float8_e4m3fn{0x01}) == 0x1p-9f); // smallest subnormal
    CHECK(to_float(float8_e4m3fn{0x08}) == 0x1p-6f); // smallest normal
    CHECK(to_float(float8_e4m3fn{0x38}) == 1.0f);
    CHECK(std::isnan(to_float(float8_e4m3fn{0x7f})));
    CHECK(std::isnan(to_float(float8_e4m3fn{0xff})));
    CHECK(to_float(float8_e4m3fn{0x78}) == 256.0f); // exponent 15 is finite here
    CHECK(!std::signbit(to_float(float8_e4m3fn{0x00})));
    CHECK(std::signbit(to_float(float8_e4m3fn{0x80})));
    CHECK(to_float(float8_e4m3fn{0x80}) == 0.0f);
}

TEST_CASE("to_float(float8_e5m2) is exact for all 256 codes") {
    check_every_code<numgap::float8_e5m2>(decode_e5m2, 6);
    using numgap::float8_e5m2, numgap::to_float;
    CHECK(to_float(float8_e5m2{0x7b}) == 57344.0f); // largest finite
    CHECK(to_float(float8_e5m2{0x01}) == 0x1p-16f); // smallest subnormal
    CHECK(to_float(float8_e5m2{0x3c}) == 1.0f);
    CHECK(to_float(float8_e5m2{0x7c}) == INFINITY);
    CHECK(to_float(float8_e5m2{0xfc}) == -INFINITY);
    for (const unsigned nan : {0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff}) CHECK(std::isnan(to_float(float8_e5m2{std::uint8_t(nan)})));
    CHECK(std::signbit(to_float(float8_e5m2{0x80})));
}

TEST_CASE("to_float(float8_e8m0fnu) is 2^(e-127) for all 256 codes, 0xFF NaN") {
    check_every_code<numgap::float8_e8m0fnu>(decode_e8m0, 1);
    using numgap::float8_e8m0fnu, numgap::to_float;
    CHECK(to_float(float8_e8m0fnu{127}) == 1.0f);
    CHECK(to_float(float8_e8m0fnu{0x00}) == 0x1p-127f); // no zero: the subnormal 2^-127
    CHECK(to_float(float8_e8m0fnu{0xfe}) == 0x1p+127f);
    CHECK(std::isnan(to_float(float8_e8m0fnu{0xff})));
    for (unsigned code = 0; code < 255; ++code) CHECK_FALSE(std::signbit(to_float(float8_e8m0fnu{std::uint8_t(code)})));
}

TEST_CASE("the float8 storage types carry their dtype") {
    static_assert(numgap::dtype_of<numgap::float8_e4m3fn>::value == numgap::dtype::float8_e4m3fn);
    static_assert(numgap::dtype_of<numgap::float8_e5m2>::value == numgap::dtype::float8_e5m2);
    static_assert(numgap::dtype_of<numgap::float8_e8m0fnu>::value == numgap::dtype::float8_e8m0fnu);
    static_assert(sizeof(numgap::float8_e4m3fn) == 1 && sizeof(numgap::float8_e8m0fnu) == 1);
    // The decoders are constexpr, like half.hpp's.
    static_assert(numgap::to_float(numgap::float8_e4m3fn{0x40}) == 2.0f);
    static_assert(numgap::to_float(numgap::float8_e5m2{0xc0}) == -2.0f);
    static_assert(numgap::to_float(numgap::float8_e8m0fnu{126}) == 0.5f);
    CHECK(numgap::size_of(numgap::dtype_of<numgap::float8_e5m2>::value) == sizeof(numgap::float8_e5m2));
}
}
