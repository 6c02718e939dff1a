// float4_e2m1fn / float6_e2m3fn / float6_e3m2fn (core/float_mx.hpp): every
// code of each format, and every byte for the formats stored one a byte,
// decodes exactly to the value an independent decoder computes from the bit
// fields (long double, ldexp), with the sign of zero, the largest and the
// smallest values checked by name; the ignored high bits are ignored.
#include <numgap/core/float_mx.hpp>

#include <cmath>
#include <cstdint>

#include <doctest/doctest.h>

#include "bit_field_oracle.hpp"

#include <numgap/core/dtype.hpp>

namespace {

using numgap_test::decode_fields;

template <class Stored>
void check_every_byte(int code_bits, int exponent_bits, int mantissa_bits) {
    for (unsigned byte = 0; byte < 256; ++byte) {
        const unsigned code = byte & ((1u << code_bits) - 1); // the rest ignored
        const float got = numgap::to_float(Stored{std::uint8_t(byte)});
        const long double expected = decode_fields(code, exponent_bits, mantissa_bits);
        if ((long double)got != expected || std::signbit(got) != std::signbit(expected))
            FAIL_CHECK("byte " << byte << " gave " << got << ", expected " << double(expected));
    }
}

} // namespace

TEST_SUITE("core") {
TEST_CASE("to_float(float4_e2m1fn) is exact for all 16 codes (every byte: the high nibble is ignored)") {
    check_every_byte<numgap::float4_e2m1fn>(4, 2, 1);
    using numgap::float4_e2m1fn, numgap::to_float;
    const float positives[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    for (unsigned code = 0; code < 8; ++code) {
        CHECK(to_float(float4_e2m1fn{std::uint8_t(code)}) == positives[code]);
        CHECK(to_float(float4_e2m1fn{std::uint8_t(code | 8)}) == -positives[code]);
    }
    CHECK(std::signbit(to_float(float4_e2m1fn{0x8})));  // -0
    CHECK(!std::signbit(to_float(float4_e2m1fn{0x0})));
    CHECK(to_float(float4_e2m1fn{0xf7}) == 6.0f); // bits 4-7 ignored
}

TEST_CASE("to_float(float6_e2m3fn) is exact for all 64 codes and ignores bits 6-7") {
    check_every_byte<numgap::float6_e2m3fn>(6, 2, 3);
    using numgap::float6_e2m3fn, numgap::to_float;
    CHECK(to_float(float6_e2m3fn{0x1f}) == 7.5f);   // largest
    CHECK(to_float(float6_e2m3fn{0x3f}) == -7.5f);
    CHECK(to_float(float6_e2m3fn{0x01}) == 0.125f); // smallest subnormal
    CHECK(to_float(float6_e2m3fn{0x08}) == 1.0f);   // smallest normal: 2^(1-1)
    CHECK(std::signbit(to_float(float6_e2m3fn{0x20})));
    CHECK(to_float(float6_e2m3fn{0xc8}) == 1.0f);   // bits 6-7 ignored
}

TEST_CASE("to_float(float6_e3m2fn) is exact for all 64 codes and ignores bits 6-7") {
    check_every_byte<numgap::float6_e3m2fn>(6, 3, 2);
    using numgap::float6_e3m2fn, numgap::to_float;
    CHECK(to_float(float6_e3m2fn{0x1f}) == 28.0f);   // largest: 1.75 * 2^4
    CHECK(to_float(float6_e3m2fn{0x3f}) == -28.0f);
    CHECK(to_float(float6_e3m2fn{0x01}) == 0.0625f); // smallest subnormal: 1/4 * 2^-2
    CHECK(to_float(float6_e3m2fn{0x04}) == 0.25f);   // smallest normal: 2^(1-3)
    CHECK(to_float(float6_e3m2fn{0x0c}) == 1.0f);    // exponent 3 = bias
    CHECK(std::signbit(to_float(float6_e3m2fn{0x20})));
}

TEST_CASE("MX element dtypes: names, sizes, packing and which dtypes take block scales") {
    using numgap::dtype;
    CHECK(numgap::is_packed(dtype::float4_e2m1fn));
    CHECK(numgap::storage_bytes(dtype::float4_e2m1fn, 33) == 17);
    CHECK(numgap::storage_bytes(dtype::float6_e2m3fn, 33) == 33);
    CHECK(numgap::bits_of(dtype::float6_e3m2fn) == 8); // stored one a byte
    for (const dtype type : {dtype::float4_e2m1fn, dtype::float6_e2m3fn, dtype::float6_e3m2fn}) {
        CHECK(numgap::is_floating(type));
        CHECK(numgap::is_mx_element(type));
        CHECK(numgap::parse_dtype(numgap::name_of(type)) == type);
    }
    CHECK(numgap::is_mx_element(dtype::float8_e4m3fn));
    CHECK(numgap::is_mx_element(dtype::float8_e5m2));
    CHECK(!numgap::is_mx_element(dtype::float8_e8m0fnu)); // the scale, not an element
    CHECK(!numgap::is_mx_element(dtype::int8));           // MXINT8 is int8 block quantization
    CHECK(numgap::parse_dtype("F4") == dtype::float4_e2m1fn);
    CHECK(numgap::parse_dtype("float4_e2m1fn_x2") == dtype::float4_e2m1fn);
    CHECK(numgap::parse_dtype("F6_E2M3") == dtype::float6_e2m3fn);
    CHECK(numgap::parse_dtype("F6_E3M2") == dtype::float6_e3m2fn);
    CHECK(numgap::parse_dtype("e3m2") == dtype::float6_e3m2fn);
}
}
