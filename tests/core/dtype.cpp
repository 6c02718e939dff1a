// dtype: sizes, names, classification, parse_dtype's names and aliases
// (every canonical name parses back to its dtype), dtype_of for C++ types.
#include <numgap/core/dtype.hpp>

#include <cstdint>
#include <set>
#include <string_view>

#include <doctest/doctest.h>

TEST_SUITE("core") {
TEST_CASE("every dtype has a size, a distinct name that parses back, and one class") {
    std::set<std::string_view> names;
    for (const numgap::dtype type : numgap::all_dtypes) {
        CAPTURE(numgap::name_of(type));
        CHECK(numgap::size_of(type) != 0);
        CHECK(names.insert(numgap::name_of(type)).second);
        CHECK(numgap::parse_dtype(numgap::name_of(type)) == type);
        const int classes = int(numgap::is_integer(type)) + int(numgap::is_floating(type)) +
                            int(type == numgap::dtype::boolean);
        CHECK(classes == 1);
    }
    CHECK(names.size() == std::size(numgap::all_dtypes));
    CHECK(numgap::size_of(numgap::dtype::float64) == 8);
    CHECK(numgap::size_of(numgap::dtype::bfloat16) == 2);
    CHECK(numgap::size_of(numgap::dtype::boolean) == 1);
    CHECK(numgap::name_of(numgap::dtype::boolean) == "bool");
    CHECK(numgap::name_of(static_cast<numgap::dtype>(200)) == "unknown");
    CHECK(numgap::size_of(static_cast<numgap::dtype>(200)) == 0);
}

TEST_CASE("packed 4-bit dtypes: names, bits, storage rounded up to whole bytes") {
    using numgap::dtype;
    CHECK(numgap::parse_dtype("i4") == dtype::int4);
    CHECK(numgap::parse_dtype("u4") == dtype::uint4);
    CHECK(numgap::parse_dtype("uint4") == dtype::uint4);
    CHECK(numgap::is_integer(dtype::int4));
    CHECK(numgap::is_packed(dtype::uint4));
    CHECK_FALSE(numgap::is_packed(dtype::int8));
    CHECK(numgap::bits_of(dtype::int4) == 4);
    CHECK(numgap::bits_of(dtype::float16) == 16);
    CHECK(numgap::size_of(dtype::int4) == 1); // the storage unit, which holds two
    CHECK(numgap::storage_bytes(dtype::int4, 0) == 0);
    CHECK(numgap::storage_bytes(dtype::int4, 1) == 1);
    CHECK(numgap::storage_bytes(dtype::uint4, 7) == 4); // the spare nibble of the last byte
    CHECK(numgap::storage_bytes(dtype::uint4, 8) == 4);
    CHECK(numgap::storage_bytes(dtype::float32, 3) == 12);
}

TEST_CASE("parse_dtype accepts the common aliases and nothing else") {
    CHECK(numgap::parse_dtype("f32") == numgap::dtype::float32);
    CHECK(numgap::parse_dtype("fp16") == numgap::dtype::float16);
    CHECK(numgap::parse_dtype("half") == numgap::dtype::float16);
    CHECK(numgap::parse_dtype("bf16") == numgap::dtype::bfloat16);
    CHECK(numgap::parse_dtype("u8") == numgap::dtype::uint8);
    CHECK(numgap::parse_dtype("bool_") == numgap::dtype::boolean);
    CHECK(numgap::parse_dtype("double") == numgap::dtype::float64);
    for (const char* e4m3 : {"f8e4m3", "fp8_e4m3", "e4m3", "F8_E4M3"}) CHECK(numgap::parse_dtype(e4m3) == numgap::dtype::float8_e4m3fn);
    for (const char* e5m2 : {"f8e5m2", "fp8_e5m2", "e5m2", "F8_E5M2"}) CHECK(numgap::parse_dtype(e5m2) == numgap::dtype::float8_e5m2);
    CHECK(numgap::parse_dtype("e8m0") == numgap::dtype::float8_e8m0fnu);
    CHECK(numgap::parse_dtype("F8_E8M0") == numgap::dtype::float8_e8m0fnu);
    CHECK(numgap::size_of(numgap::dtype::float8_e4m3fn) == 1);
    CHECK(numgap::is_floating(numgap::dtype::float8_e8m0fnu));
    CHECK_FALSE(numgap::parse_dtype("float8").has_value()); // which float8 is ambiguous
    CHECK_FALSE(numgap::parse_dtype("Float32").has_value()); // names are case-sensitive
    CHECK_FALSE(numgap::parse_dtype("int64").has_value());   // not a dtype numgap reads
    CHECK_FALSE(numgap::parse_dtype("").has_value());
}

TEST_CASE("dtype_of maps C++ element types to their dtype") {
    static_assert(numgap::dtype_of<float>::value == numgap::dtype::float32);
    static_assert(numgap::dtype_of<double>::value == numgap::dtype::float64);
    static_assert(numgap::dtype_of<std::int8_t>::value == numgap::dtype::int8);
    static_assert(numgap::dtype_of<std::uint16_t>::value == numgap::dtype::uint16);
    static_assert(numgap::dtype_of<std::int32_t>::value == numgap::dtype::int32);
    static_assert(numgap::dtype_of<bool>::value == numgap::dtype::boolean);
    static_assert(numgap::known_element<std::uint8_t>);
    static_assert(!numgap::known_element<std::int64_t>);
    static_assert(!numgap::known_element<char*>);
    CHECK(numgap::size_of(numgap::dtype_of<std::int16_t>::value) == sizeof(std::int16_t));
}
}
