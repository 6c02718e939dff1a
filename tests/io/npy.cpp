// Pins down .npy reading (every supported dtype, layouts, header versions,
// every rejected input with a message naming the file and reason) and writing
// (byte-identical to NumPy, round trips, gathering of strided views).
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <numgap/io/mapped_file.hpp>
#include <numgap/io/npy.hpp>

#include "temp_directory.hpp"

using numgap::dtype;
using numgap::io::npy_header;
using numgap::io::parse_npy_header;
using numgap_test::contains;
using numgap_test::error_of;

namespace {

struct opened {
    numgap::io::mapped_file file;
    npy_header header;
    numgap::tensor_view view;
};

opened open_fixture(const std::string& name, std::optional<dtype> declared = std::nullopt) {
    opened result;
    result.file = numgap::io::mapped_file::open(numgap_test::fixture("npy/" + name));
    result.header = parse_npy_header(result.file.bytes(), result.file.path().string(), declared);
    result.view = numgap::io::npy_view(result.file.bytes(), result.header);
    return result;
}

template <class T>
T npy_element(const numgap::tensor_view& view, std::int64_t flat_offset_in_elements) {
    T value;
    std::memcpy(&value, static_cast<const std::byte*>(view.data()) + flat_offset_in_elements * std::int64_t(sizeof(T)),
                sizeof(T));
    return value;
}

// A .npy image with the given header dict text and `data_bytes` zero bytes of data.
std::vector<std::byte> npy_image(const std::string& dict, std::size_t data_bytes, int major = 1) {
    std::string text = "\x93NUMPY";
    text += char(major);
    text += '\0';
    std::string header = dict + "\n";
    if (major == 1) {
        text += char(header.size() & 0xff);
        text += char(header.size() >> 8);
    } else {
        for (int i = 0; i < 4; ++i) text += char((header.size() >> (8 * i)) & 0xff);
    }
    text += header;
    text.append(data_bytes, '\0');
    return numgap_test::to_bytes(text);
}

std::string npy_parse_error(const std::string& dict, std::size_t data_bytes = 0) {
    const std::vector<std::byte> image = npy_image(dict, data_bytes);
    return error_of([&] { (void)parse_npy_header(image, "probe.npy"); });
}

} // namespace

TEST_SUITE("io") {
TEST_CASE("npy: reads every supported dtype with numpy values") {
    SUBCASE("float32 (3,4) holds i*0.5-2 in C order") {
        const opened f = open_fixture("f4.npy");
        CHECK(f.view.type() == dtype::float32);
        REQUIRE(f.view.rank() == 2);
        CHECK(f.view.shape(0) == 3);
        CHECK(f.view.shape(1) == 4);
        CHECK(f.view.stride(0) == 4);
        for (int i = 0; i < 12; ++i) CHECK(npy_element<float>(f.view, i) == float(i) * 0.5f - 2.0f);
        CHECK(f.header.data_offset % 64 == 0);
    }
    SUBCASE("float64") {
        const opened f = open_fixture("f8.npy");
        CHECK(f.view.type() == dtype::float64);
        for (int i = 0; i < 6; ++i) CHECK(npy_element<double>(f.view, i) == double(i) * 0.25 - 0.5);
    }
    SUBCASE("float16 bits decode to i*0.5-1") {
        const opened f = open_fixture("f2.npy");
        CHECK(f.view.type() == dtype::float16);
        for (int i = 0; i < 8; ++i)
            CHECK(numgap::to_float(npy_element<numgap::float16>(f.view, i)) == float(i) * 0.5f - 1.0f);
    }
    SUBCASE("int8, uint8, int16, uint16, int32 extremes") {
        const opened i1 = open_fixture("i1.npy");
        CHECK(i1.view.type() == dtype::int8);
        for (int i = 0; i < 8; ++i) CHECK(npy_element<std::int8_t>(i1.view, i) == i - 4);
        const opened u1 = open_fixture("u1.npy");
        CHECK(u1.view.type() == dtype::uint8);
        for (int i = 0; i < 6; ++i) CHECK(npy_element<std::uint8_t>(u1.view, i) == 250 + i);
        const opened i2 = open_fixture("i2.npy");
        CHECK(i2.view.type() == dtype::int16);
        CHECK(npy_element<std::int16_t>(i2.view, 0) == -32768);
        CHECK(npy_element<std::int16_t>(i2.view, 3) == 32767);
        const opened u2 = open_fixture("u2.npy");
        CHECK(u2.view.type() == dtype::uint16);
        CHECK(npy_element<std::uint16_t>(u2.view, 2) == 65535);
        const opened i4 = open_fixture("i4.npy");
        CHECK(i4.view.type() == dtype::int32);
        CHECK(npy_element<std::int32_t>(i4.view, 0) == INT32_MIN);
        CHECK(npy_element<std::int32_t>(i4.view, 3) == INT32_MAX);
    }
    SUBCASE("bool") {
        const opened f = open_fixture("b1.npy");
        CHECK(f.view.type() == dtype::boolean);
        CHECK(npy_element<std::uint8_t>(f.view, 0) == 1);
        CHECK(npy_element<std::uint8_t>(f.view, 1) == 0);
        CHECK(npy_element<std::uint8_t>(f.view, 2) == 1);
    }
    SUBCASE("'=' (native order) descr reads as little-endian") {
        const opened f = open_fixture("native_order.npy");
        CHECK(f.view.type() == dtype::float32);
        CHECK(npy_element<float>(f.view, 1) == -2.5f);
    }
}

TEST_CASE("npy: fortran order becomes reversed strides without copy") {
    const opened f = open_fixture("fortran.npy");
    CHECK(f.header.fortran_order);
    REQUIRE(f.view.rank() == 3);
    CHECK(f.view.stride(0) == 1);
    CHECK(f.view.stride(1) == 2);
    CHECK(f.view.stride(2) == 6);
    CHECK(f.view.data() == static_cast<const void*>(f.file.data() + f.header.data_offset));
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 4; ++k)
                CHECK(npy_element<float>(f.view, i * f.view.stride(0) + j * f.view.stride(1) + k * f.view.stride(2)) ==
                      float(i * 12 + j * 4 + k));
}

TEST_CASE("npy: zero dimensional and empty arrays") {
    const opened scalar = open_fixture("scalar.npy");
    CHECK(scalar.view.rank() == 0);
    CHECK(scalar.view.size() == 1);
    CHECK(npy_element<float>(scalar.view, 0) == 3.5f);
    const opened empty = open_fixture("empty.npy");
    CHECK(empty.view.rank() == 2);
    CHECK(empty.view.shape(0) == 0);
    CHECK(empty.view.shape(1) == 3);
    CHECK(empty.view.size() == 0);
    CHECK(empty.header.data_bytes == 0);
}

TEST_CASE("npy: header versions 2 and 3") {
    for (const char* name : {"v2.npy", "v3.npy"}) {
        const opened f = open_fixture(name);
        CHECK(f.header.major_version == (std::string(name) == "v2.npy" ? 2 : 3));
        REQUIRE(f.view.size() == 5);
        for (int i = 0; i < 5; ++i) CHECK(npy_element<float>(f.view, i) == float(i));
    }
    // Version 2 with a 4-byte length field built by hand.
    const std::vector<std::byte> image = npy_image("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", 4, 2);
    const npy_header header = parse_npy_header(image, "hand.npy");
    CHECK(header.type == dtype::int16);
    CHECK(header.data_bytes == 4);
}

TEST_CASE("npy: refuses big endian and unsupported descrs naming file and descr") {
    const std::string big = error_of([] { (void)open_fixture("big_endian.npy"); });
    CHECK(contains(big, "big_endian.npy"));
    CHECK(contains(big, "big-endian"));
    CHECK(contains(big, "'>f4'"));
    const std::string wide = error_of([] { (void)open_fixture("int64.npy"); });
    CHECK(contains(wide, "int64.npy"));
    CHECK(contains(wide, "unsupported .npy dtype descr '<i8'"));
    CHECK(contains(npy_parse_error("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 4),
                   "structured dtype"));
    // One-byte types have no byte order; '>i1' is as good as '|i1'.
    CHECK(npy_parse_error("{'descr': '>i1', 'fortran_order': False, 'shape': (2,), }", 2) == "<no numgap::error>");
}

TEST_CASE("npy: opaque v2 is bfloat16 only when declared") {
    const std::string undeclared = error_of([] { (void)open_fixture("bf16_v2.npy"); });
    CHECK(contains(undeclared, "bf16_v2.npy"));
    CHECK(contains(undeclared, "'<V2'"));
    CHECK(contains(undeclared, "\"dtype\": \"bfloat16\""));
    const opened declared = open_fixture("bf16_v2.npy", dtype::bfloat16);
    CHECK(declared.view.type() == dtype::bfloat16);
    CHECK(numgap::to_float(npy_element<numgap::bfloat16>(declared.view, 0)) == 1.0f);
    CHECK(numgap::to_float(npy_element<numgap::bfloat16>(declared.view, 1)) == 2.0f);
    CHECK(numgap::to_float(npy_element<numgap::bfloat16>(declared.view, 2)) == -3.0f);
    // A declared type must agree with a non-opaque descr.
    const std::string mismatch = error_of([] { (void)open_fixture("f4.npy", dtype::uint8); });
    CHECK(contains(mismatch, "f4.npy"));
    CHECK(contains(mismatch, "declares dtype uint8 but the file stores float32"));
}

TEST_CASE("npy: opaque V1 is a float8 only when declared") {
    const auto header_of = [](const std::string& descr, std::optional<dtype> declared) {
        const std::vector<std::byte> image =
            npy_image("{'descr': '" + descr + "', 'fortran_order': False, 'shape': (3,), }", 3);
        return parse_npy_header(image, "fp8.npy", declared);
    };
    CHECK(header_of("|V1", dtype::float8_e4m3fn).type == dtype::float8_e4m3fn);
    CHECK(header_of("<V1", dtype::float8_e5m2).type == dtype::float8_e5m2);
    CHECK(header_of("|V1", dtype::float8_e8m0fnu).data_bytes == 3);
    const std::string undeclared = error_of([&] { (void)header_of("|V1", std::nullopt); });
    CHECK(contains(undeclared, "fp8.npy"));
    CHECK(contains(undeclared, "opaque 1-byte type"));
    CHECK(contains(undeclared, "\"dtype\": \"float8_e4m3fn\""));
    // The declared type must be as wide as the record.
    const std::string too_wide = error_of([&] { (void)header_of("|V1", dtype::bfloat16); });
    CHECK(contains(too_wide, "declares bfloat16, which is 2 bytes wide"));
    CHECK(contains(error_of([&] { (void)header_of("<V2", dtype::float8_e4m3fn); }), "opaque 2-byte type"));
    // ml_dtypes' float6 (one code a byte) reads as declared; float4_e2m1fn
    // (also one a byte there) as its uint8 codes, packed at load (io/loaded_tensor.hpp).
    CHECK(header_of("|V1", dtype::float6_e2m3fn).type == dtype::float6_e2m3fn);
    CHECK(header_of("|V1", dtype::float6_e3m2fn).data_bytes == 3);
    CHECK(header_of("|V1", dtype::float4_e2m1fn).type == dtype::uint8);
    CHECK(header_of("|V1", dtype::float4_e2m1fn).data_bytes == 3);
    CHECK(contains(undeclared, "float4_e2m1fn"));
    // '|u1' data declared float4_e2m1fn is a mismatch, not a silent reinterpretation.
    CHECK(contains(error_of([&] { (void)header_of("|u1", dtype::float4_e2m1fn); }),
                   "declares dtype float4_e2m1fn but the file stores uint8"));
}

TEST_CASE("npy: rejects malformed headers with the reason") {
    const auto image_error = [](std::vector<std::byte> image) {
        return error_of([&] { (void)parse_npy_header(image, "probe.npy"); });
    };
    CHECK(contains(image_error(numgap_test::to_bytes("\x93NUMP")), "too short"));
    CHECK(contains(image_error(numgap_test::to_bytes("PK\x03\x04 not an npy file")), "missing the \\x93NUMPY magic"));
    std::vector<std::byte> future = npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4);
    future[6] = std::byte(4);
    CHECK(contains(image_error(future), "unsupported .npy format version 4.0"));
    std::vector<std::byte> cut = npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 0);
    cut.resize(30);
    const std::string truncated_header = image_error(cut);
    CHECK(contains(truncated_header, "probe.npy"));
    CHECK(contains(truncated_header, "truncated .npy file: the header claims"));

    CHECK(contains(npy_parse_error("{'descr': '<f4', 'shape': (), }"), "missing the 'fortran_order' key"));
    CHECK(contains(npy_parse_error("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}"),
                   "unexpected key 'x'"));
    CHECK(contains(npy_parse_error("{'descr' '<f4', 'fortran_order': False, 'shape': (), }"), "expected ':'"));
    CHECK(contains(npy_parse_error("{'descr': '<f4', 'fortran_order': maybe, 'shape': (), }"), "True or False"));
    CHECK(contains(npy_parse_error("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (), }"),
                   "'descr' appears twice"));
    CHECK(contains(npy_parse_error("{'descr': '<f4', 'fortran_order': False, 'shape': (), } trailing"),
                   "unexpected text after the header dict"));
    CHECK(contains(npy_parse_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }"), "negative dimension"));
    CHECK(contains(npy_parse_error("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"),
                   "too large for 64 bits"));
    CHECK(contains(npy_parse_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }"),
                   "maximum rank 8"));
    CHECK(contains(npy_parse_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", 0), "probe.npy"));
    // Python 2 writers put an L after each dimension.
    CHECK(npy_parse_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 1L), }", 8) == "<no numgap::error>");
}

TEST_CASE("npy: checks data size against shape") {
    const std::string shorter = npy_parse_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20);
    CHECK(contains(shorter, "probe.npy"));
    CHECK(contains(shorter, "truncated"));
    CHECK(contains(shorter, "needs 24 bytes of data but the file has 20"));
    const std::string longer = npy_parse_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 25);
    CHECK(contains(longer, "has 1 bytes after the 24 bytes"));
    // Overflowing products, and products a zero dimension would hide from a naive check.
    const std::string absurd =
        npy_parse_error("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }");
    CHECK(contains(absurd, "absurd"));
    CHECK(contains(npy_parse_error("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387904, 8), }"),
                   "absurd"));
    // A shape bigger than the file, with no overflow: truncation with both byte counts.
    const std::string huge = npy_parse_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000,), }", 8);
    CHECK(contains(huge, "needs 4000000000 bytes of data but the file has 8"));
}

TEST_CASE("write npy is byte identical to numpy and round trips every dtype") {
    numgap_test::temp_directory scratch;
    const opened original = open_fixture("f4.npy");
    numgap::io::write_npy(scratch / "f4.npy", original.view);
    CHECK(numgap_test::read_bytes(scratch / "f4.npy") == numgap_test::read_bytes(numgap_test::fixture("npy/f4.npy")));

    for (const dtype type : numgap::all_dtypes) {
        CAPTURE(numgap::name_of(type));
        if (numgap::is_packed(type)) continue; // NumPy has no packed type: the next test case
        std::vector<std::byte> data(2 * 3 * numgap::size_of(type));
        for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::byte(i * 37 + 1);
        if (type == dtype::boolean)
            for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::byte(i % 2);
        const numgap::tensor_view view(data.data(), type, {2, 3});
        const auto file = scratch / (std::string(numgap::name_of(type)) + ".npy");
        numgap::io::write_npy(file, view);
        const auto mapped = numgap::io::mapped_file::open(file);
        // bfloat16 and the float8 types are stored as opaque records ('<V2', '|V1').
        const bool opaque = type == dtype::bfloat16 || (numgap::is_floating(type) && numgap::size_of(type) == 1);
        const std::optional<dtype> declared = opaque ? std::optional<dtype>(type) : std::nullopt;
        const npy_header header = parse_npy_header(mapped.bytes(), file.string(), declared);
        CHECK(header.type == type);
        CHECK(header.shape == std::vector<std::int64_t>{2, 3});
        CHECK(header.data_offset % 64 == 0);
        CHECK(std::memcmp(mapped.data() + header.data_offset, data.data(), data.size()) == 0);
        if (type == dtype::bfloat16) CHECK(header.descr == "<V2");
        if (opaque && type != dtype::bfloat16) CHECK(header.descr == "|V1");
    }
}

TEST_CASE("write npy writes packed int4 / uint4 unpacked, one element per byte, int4 sign-extended") {
    numgap_test::temp_directory scratch;
    const std::array<std::uint8_t, 3> packed{0x8f, 0x71, 0x0a}; // 5 elements: f 8 1 7 a (spare nibble 0)
    for (const dtype type : {dtype::int4, dtype::uint4}) {
        const auto file = scratch / (std::string(numgap::name_of(type)) + ".npy");
        numgap::io::write_npy(file, numgap::tensor_view(packed.data(), type, {5}));
        const auto mapped = numgap::io::mapped_file::open(file);
        const npy_header header = parse_npy_header(mapped.bytes(), file.string(), std::nullopt);
        CHECK(header.type == (type == dtype::int4 ? dtype::int8 : dtype::uint8));
        CHECK(header.shape == std::vector<std::int64_t>{5});
        const std::array<std::int8_t, 5> signed_values{-1, -8, 1, 7, -6};
        const std::array<std::uint8_t, 5> unsigned_values{15, 8, 1, 7, 10};
        CHECK(std::memcmp(mapped.data() + header.data_offset,
                          type == dtype::int4 ? static_cast<const void*>(signed_values.data()) : unsigned_values.data(),
                          5) == 0);
    }
}

TEST_CASE("write npy gathers strided views and handles scalars and empty") {
    numgap_test::temp_directory scratch;
    const std::array<std::int32_t, 6> values{0, 1, 2, 3, 4, 5};
    const std::array<std::int64_t, 2> transposed_shape{3, 2};
    const std::array<std::int64_t, 2> transposed_strides{1, 3};
    const numgap::tensor_view transposed(values.data(), transposed_shape, transposed_strides);
    numgap::io::write_npy(scratch / "t.npy", transposed);
    const auto mapped = numgap::io::mapped_file::open(scratch / "t.npy");
    const npy_header header = parse_npy_header(mapped.bytes(), "t.npy");
    const numgap::tensor_view back = numgap::io::npy_view(mapped.bytes(), header);
    const std::array<std::int32_t, 6> expected{0, 3, 1, 4, 2, 5};
    for (int i = 0; i < 6; ++i) CHECK(npy_element<std::int32_t>(back, i) == expected[std::size_t(i)]);

    const float scalar = 7.25f;
    numgap::io::write_npy(scratch / "s.npy", &scalar, {});
    const auto scalar_file = numgap::io::mapped_file::open(scratch / "s.npy");
    const npy_header scalar_header = parse_npy_header(scalar_file.bytes(), "s.npy");
    CHECK(scalar_header.shape.empty());
    CHECK(npy_element<float>(numgap::io::npy_view(scalar_file.bytes(), scalar_header), 0) == 7.25f);

    const std::array<std::int64_t, 2> empty_shape{0, 5};
    numgap::io::write_npy(scratch / "e.npy", static_cast<const float*>(nullptr), empty_shape);
    const auto empty_file = numgap::io::mapped_file::open(scratch / "e.npy");
    CHECK(parse_npy_header(empty_file.bytes(), "e.npy").shape == std::vector<std::int64_t>{0, 5});
}

TEST_CASE("write npy reports the path and os reason") {
    numgap_test::temp_directory scratch;
    const float value = 1.0f;
    const std::string message =
        error_of([&] { numgap::io::write_npy(scratch / "no/such/dir/x.npy", &value, std::array<std::int64_t, 1>{1}); });
    CHECK(contains(message, "no/such/dir/x.npy"));
    CHECK(contains(message, "No such file or directory"));
}
} // TEST_SUITE("io")
