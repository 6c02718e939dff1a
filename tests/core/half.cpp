// float16 / bfloat16: exact widening to float32 (every one of the 65536 bit
// patterns for float16, against an independent decoder), round-to-nearest-
// even narrowing, and the edge values (signed zero, subnormals, the largest
// finite, overflow to Inf, NaN stays NaN).
#include <numgap/core/half.hpp>

#include <bit>
#include <cmath>
#include <cstdint>

#include <doctest/doctest.h>

namespace {

// binary16 decoded by its definition, independent of to_float's bit tricks.
double decode_float16(std::uint16_t bits) {
    const int sign = bits >> 15, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
    double magnitude;
    if (exponent == 0x1f) magnitude = mantissa ? std::nan("") : INFINITY;
    else if (exponent == 0) magnitude = std::ldexp(double(mantissa), -24);
    else magnitude = std::ldexp(double(mantissa | 0x400), exponent - 25);
    return sign ? -magnitude : magnitude;
}

} // namespace

TEST_SUITE("core") {
TEST_CASE("to_float(float16) is exact for every bit pattern") {
    for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
        const float got = numgap::to_float(numgap::float16{std::uint16_t(bits)});
        const double expected = decode_float16(std::uint16_t(bits));
        if (std::isnan(expected)) {
            CHECK(std::isnan(got));
            continue;
        }
        if (double(got) != expected) FAIL_CHECK("float16 bits " << bits << " gave " << got << ", expected " << expected);
        CHECK(std::signbit(got) == std::signbit(expected));
    }
}

TEST_CASE("to_float16 rounds to nearest even and round-trips every finite float16") {
    for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
        if ((bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu)) continue; // NaN payloads need not survive
        const numgap::float16 value{std::uint16_t(bits)};
        if (numgap::to_float16(numgap::to_float(value)).bits != bits) FAIL_CHECK("float16 bits " << bits);
    }
    CHECK(numgap::to_float16(65504.0f).bits == 0x7bff);           // largest finite
    CHECK(numgap::to_float16(65520.0f).bits == 0x7c00);           // halfway past it: to Inf
    CHECK(numgap::to_float16(1.0f + 0x1p-11f).bits == 0x3c00);    // tie, to even (down)
    CHECK(numgap::to_float16(1.0f + 3 * 0x1p-11f).bits == 0x3c02); // tie, to even (up)
    CHECK(numgap::to_float16(0x1p-24f).bits == 0x0001);           // smallest subnormal
    CHECK(numgap::to_float16(0x1p-26f).bits == 0x0000);           // below half of it: zero
    CHECK(numgap::to_float16(-0.0f).bits == 0x8000);
    CHECK(std::isnan(numgap::to_float(numgap::to_float16(NAN))));
    CHECK(numgap::to_float16(-INFINITY).bits == 0xfc00);
}

TEST_CASE("bfloat16 is the upper half of a float32, rounded to nearest even") {
    CHECK(numgap::to_float(numgap::bfloat16{0x3f80}) == 1.0f);
    CHECK(numgap::to_float(numgap::bfloat16{0xc000}) == -2.0f);
    CHECK(numgap::to_float(numgap::bfloat16{0x7f80}) == INFINITY);
    for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
        const float widened = numgap::to_float(numgap::bfloat16{std::uint16_t(bits)});
        CHECK_EQ(std::bit_cast<std::uint32_t>(widened), bits << 16);
        if (!std::isnan(widened) && numgap::to_bfloat16(widened).bits != bits) FAIL_CHECK("bfloat16 bits " << bits);
    }
    CHECK(numgap::to_bfloat16(std::bit_cast<float>(0x3f808000u)).bits == 0x3f80); // tie, to even (down)
    CHECK(numgap::to_bfloat16(std::bit_cast<float>(0x3f818000u)).bits == 0x3f82); // tie, to even (up)
    CHECK(numgap::to_bfloat16(std::bit_cast<float>(0x3f808001u)).bits == 0x3f81); // above the tie
    CHECK(std::isnan(numgap::to_float(numgap::to_bfloat16(std::bit_cast<float>(0x7f800001u))))); // NaN stays NaN
}

TEST_CASE("float16 and bfloat16 carry their dtype tags") {
    static_assert(numgap::dtype_of<numgap::float16>::value == numgap::dtype::float16);
    static_assert(numgap::dtype_of<numgap::bfloat16>::value == numgap::dtype::bfloat16);
    static_assert(numgap::to_float(numgap::float16{0x3c00}) == 1.0f); // usable in constant expressions
    CHECK(sizeof(numgap::float16) == 2);
    CHECK(sizeof(numgap::bfloat16) == 2);
}
}
