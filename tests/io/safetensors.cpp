// Pins down safetensors reading: the header rules of io/safetensors.hpp on
// files written byte by byte here from the format description (every dtype
// numgap computes with, empty and scalar tensors, metadata, misaligned data,
// and hostile headers, each refused naming the file and the key or offset),
// and safetensors runs through run_directory: one file detected by content, a
// folder, a sharded set with its index, the graph.json overlay, and a .npy
// reference against bf16 and f16 targets through compare_runs.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>

#include <numgap/compare/compare_runs.hpp>
#include <numgap/core/float8.hpp>
#include <numgap/core/float_mx.hpp>
#include <numgap/graph/basic_graph.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/open_run_source.hpp>
#include <numgap/io/run_directory.hpp>
#include <numgap/io/safetensors.hpp>
#include <numgap/io/safetensors_run.hpp>
#include <numgap/metric/metric_set.hpp>

#include "end_to_end.hpp"
#include "safetensors_builder.hpp"
#include "temp_directory.hpp"

using numgap::dtype;
using numgap::io::run_directory;
using numgap_test::contains;
using numgap_test::error_of;
using numgap_test::bytes_of;
using numgap_test::file_bytes;
using numgap_test::length_prefix;
using numgap_test::safetensors_file;
using numgap_test::tensor_bytes;

namespace {

std::span<const std::byte> as_bytes(const std::string& text) {
    return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

template <class T>
T at(const numgap::tensor_view& view, std::int64_t element) {
    T value;
    std::memcpy(&value, static_cast<const std::byte*>(view.data()) + element * std::int64_t(sizeof(T)), sizeof(T));
    return value;
}

// The error parsing `file` gives, which must name the file.
std::string header_error(const std::string& file) {
    const std::string message =
        error_of([&] { (void)numgap::io::parse_safetensors_header(as_bytes(file), "hostile.safetensors"); });
    CHECK(contains(message, "hostile.safetensors"));
    return message;
}

// The whole error, to check its kind and location.
numgap::error header_failure(const std::string& file) {
    const auto failure = numgap_test::caught_error(
        [&] { (void)numgap::io::parse_safetensors_header(as_bytes(file), "hostile.safetensors"); });
    REQUIRE(failure.has_value());
    CHECK(failure->where().file == "hostile.safetensors");
    return *failure;
}

std::string entry(const std::string& key, const std::string& type, const std::string& shape, std::uint64_t begin,
                  std::uint64_t end) {
    return "\"" + key + "\":{\"dtype\":\"" + type + "\",\"shape\":" + shape + ",\"data_offsets\":[" +
           std::to_string(begin) + "," + std::to_string(end) + "]}";
}

} // namespace

TEST_SUITE("io") {
TEST_CASE("safetensors: every dtype numgap computes with is read in place with its shape and values") {
    const std::vector<tensor_bytes> tensors = {
        {"f32", "F32", "[2,2]", bytes_of<float>({1.5f, -2.0f, 0.25f, 8.0f})},
        {"f64", "F64", "[2]", bytes_of<double>({0.125, -3.5})},
        {"f16", "F16", "[3]", bytes_of<std::uint16_t>({0x3C00, 0xC000, 0x3E00})},
        {"bf16", "BF16", "[3]", bytes_of<std::uint16_t>({0x3F80, 0xC000, 0x3FC0})},
        {"i8", "I8", "[2]", bytes_of<std::int8_t>({-7, 9})},
        {"u8", "U8", "[2]", bytes_of<std::uint8_t>({200, 3})},
        {"i16", "I16", "[2]", bytes_of<std::int16_t>({-300, 301})},
        {"u16", "U16", "[2]", bytes_of<std::uint16_t>({60000, 1})},
        {"i32", "I32", "[1,2]", bytes_of<std::int32_t>({-100000, 7})},
        {"bool", "BOOL", "[3]", bytes_of<std::uint8_t>({1, 0, 1})},
    };
    // Header padded to a multiple of 8 so that every tensor here is aligned.
    const std::string file = safetensors_file(tensors, "", 1000);
    const auto index = numgap::io::parse_safetensors_header(as_bytes(file), "all.safetensors");
    REQUIRE(index.entries.size() == tensors.size());
    CHECK(index.data_start == 1008);
    const auto view = [&](const std::string& key) {
        return numgap::io::safetensors_view(as_bytes(file), *index.find(key), "all.safetensors");
    };
    CHECK(view("f32").type() == dtype::float32);
    CHECK(view("f32").shape().size() == 2);
    CHECK(at<float>(view("f32"), 3) == 8.0f);
    CHECK(view("f32").data() == file.data() + 1008); // no copy
    CHECK(at<double>(view("f64"), 1) == -3.5);
    CHECK(view("f16").type() == dtype::float16);
    CHECK(at<std::uint16_t>(view("f16"), 1) == 0xC000);
    CHECK(view("bf16").type() == dtype::bfloat16);
    CHECK(at<std::uint16_t>(view("bf16"), 2) == 0x3FC0);
    CHECK(view("i8").type() == dtype::int8);
    CHECK(at<std::int8_t>(view("i8"), 0) == -7);
    CHECK(view("u8").type() == dtype::uint8);
    CHECK(at<std::uint8_t>(view("u8"), 0) == 200);
    CHECK(view("i16").type() == dtype::int16);
    CHECK(at<std::int16_t>(view("i16"), 0) == -300);
    CHECK(view("u16").type() == dtype::uint16);
    CHECK(at<std::uint16_t>(view("u16"), 0) == 60000);
    CHECK(view("i32").type() == dtype::int32);
    CHECK(at<std::int32_t>(view("i32"), 0) == -100000);
    CHECK(view("bool").type() == dtype::boolean);
    CHECK(view("bool").size() == 3);
}

TEST_CASE("safetensors: empty and scalar tensors, metadata, and an empty file of no tensors") {
    const std::string file = safetensors_file(
        {{"empty", "F32", "[0,4]", {}}, {"scalar", "F32", "[]", bytes_of<float>({42.0f})}},
        R"({"format":"pt","note":"caf\u00e9"})");
    const auto index = numgap::io::parse_safetensors_header(as_bytes(file), "f.safetensors");
    REQUIRE(index.entries.size() == 2);
    REQUIRE(index.metadata.size() == 2);
    CHECK(index.metadata[0] == std::pair<std::string, std::string>("format", "pt"));
    CHECK(index.metadata[1].second == "caf\xc3\xa9");
    const auto empty = numgap::io::safetensors_view(as_bytes(file), index.entries[0], "f.safetensors");
    CHECK(empty.size() == 0);
    CHECK(empty.rank() == 2);
    const auto scalar = numgap::io::safetensors_view(as_bytes(file), index.entries[1], "f.safetensors");
    CHECK(scalar.rank() == 0);
    CHECK(at<float>(scalar, 0) == 42.0f);
    CHECK(numgap::io::parse_safetensors_header(as_bytes(file_bytes("{}")), "none").entries.empty());
}

TEST_CASE("safetensors: a dtype numgap lacks fails only when that key is loaded, naming dtype, key and file") {
    const std::string file = safetensors_file({{"ok", "F32", "[1]", bytes_of<float>({1.0f})},
                                               {"wide", "I64", "[1]", bytes_of<std::int64_t>({5})},
                                               {"nibbles", "F6_E2M3", "[4]", bytes_of<std::uint8_t>({1, 2, 3})}});
    const auto index = numgap::io::parse_safetensors_header(as_bytes(file), "odd.safetensors");
    REQUIRE(index.entries.size() == 3);
    CHECK_FALSE(index.find("nibbles")->type);
    const std::string message =
        error_of([&] { (void)numgap::io::safetensors_view(as_bytes(file), *index.find("nibbles"), "odd.safetensors"); });
    CHECK(contains(message, "unsupported dtype F6_E2M3 in key 'nibbles' of file 'odd.safetensors'"));
    const auto unsupported = numgap_test::caught_error(
        [&] { (void)numgap::io::safetensors_view(as_bytes(file), *index.find("nibbles"), "odd.safetensors"); });
    REQUIRE(unsupported.has_value());
    CHECK(unsupported->kind() == numgap::error_kind::dtype);
    CHECK(unsupported->where().file == "odd.safetensors");
    CHECK(unsupported->where().item == "nibbles");
    CHECK(contains(error_of([&] { (void)numgap::io::safetensors_view(as_bytes(file), *index.find("wide"), "o"); }),
                   "unsupported dtype I64 in key 'wide'"));

    numgap_test::temp_directory run;
    run.write("odd.safetensors", file);
    const run_directory dir = run_directory::open(run.path());
    CHECK(dir.keys() == std::vector<std::string>{"nibbles", "ok", "wide"});
    CHECK(at<float>(dir.load("ok").view(), 0) == 1.0f);
    CHECK(contains(error_of([&] { (void)dir.load("nibbles"); }), "unsupported dtype F6_E2M3 in key 'nibbles'"));
}

TEST_CASE("safetensors: F4 reads as packed float4_e2m1fn, two codes a byte, low nibble first") {
    const std::string file = safetensors_file({{"fp4", "F4", "[2,2]", bytes_of<std::uint8_t>({0x2f, 0x07})},
                                               {"odd", "F4", "[3]", bytes_of<std::uint8_t>({0x21, 0x03})}});
    // An odd count is half a byte short of whole: refused by the size check.
    CHECK(contains(error_of([&] { (void)numgap::io::parse_safetensors_header(as_bytes(file), "f4.safetensors"); }),
                   "12 bits, not whole"));
    const std::string even = safetensors_file({{"fp4", "F4", "[2,2]", bytes_of<std::uint8_t>({0x2f, 0x07})}});
    const auto index = numgap::io::parse_safetensors_header(as_bytes(even), "f4.safetensors");
    const auto view = numgap::io::safetensors_view(as_bytes(even), index.entries[0], "f4.safetensors");
    CHECK(view.type() == dtype::float4_e2m1fn);
    CHECK(view.size() == 4);
    const auto* bytes = static_cast<const std::uint8_t*>(view.data());
    CHECK(numgap::to_float(numgap::float4_e2m1fn{std::uint8_t(bytes[0] & 0xf)}) == -6.0f); // element 0: low nibble
    CHECK(numgap::to_float(numgap::float4_e2m1fn{std::uint8_t(bytes[0] >> 4)}) == 1.0f);
    CHECK(contains(error_of([&] {
                       const std::string six = safetensors_file({{"f6", "F6_E3M2", "[4]", bytes_of<std::uint8_t>({1, 2, 3})}});
                       (void)numgap::io::safetensors_view(as_bytes(six), numgap::io::parse_safetensors_header(as_bytes(six), "s").entries[0], "s");
                   }),
                   "store them one a byte as U8"));
}

TEST_CASE("safetensors: F8_E4M3, F8_E5M2 and F8_E8M0 read as the float8 dtypes") {
    const std::string file = safetensors_file({{"e4m3", "F8_E4M3", "[2]", bytes_of<std::uint8_t>({0x38, 0xfe})},
                                               {"e5m2", "F8_E5M2", "[2]", bytes_of<std::uint8_t>({0x3c, 0x7c})},
                                               {"e8m0", "F8_E8M0", "[1]", bytes_of<std::uint8_t>({128})}});
    const auto index = numgap::io::parse_safetensors_header(as_bytes(file), "fp8.safetensors");
    const auto view_of = [&](const char* key) {
        return numgap::io::safetensors_view(as_bytes(file), *index.find(key), "fp8.safetensors");
    };
    CHECK(view_of("e4m3").type() == numgap::dtype::float8_e4m3fn);
    CHECK(numgap::to_float(at<numgap::float8_e4m3fn>(view_of("e4m3"), 1)) == -448.0f);
    CHECK(view_of("e5m2").type() == numgap::dtype::float8_e5m2);
    CHECK(numgap::to_float(at<numgap::float8_e5m2>(view_of("e5m2"), 0)) == 1.0f);
    CHECK(view_of("e8m0").type() == numgap::dtype::float8_e8m0fnu);
    CHECK(numgap::to_float(at<numgap::float8_e8m0fnu>(view_of("e8m0"), 0)) == 2.0f);
}

TEST_CASE("safetensors: hostile headers are refused with the file, the key and the offset or reason") {
    const std::string four_floats(16, '\0');
    const auto data16 = numgap_test::to_bytes(four_floats);
    CHECK(contains(header_error(std::string("\x10\x00\x00", 3)), "truncated: it has 3 bytes"));
    CHECK(contains(header_error(length_prefix(64) + "{}"), "ends past the end of the file"));
    CHECK(contains(header_error(length_prefix(std::uint64_t(1) << 62) + "{}"), "more than the limit of 100000000"));
    CHECK(contains(header_error(length_prefix(100'000'001) + "{}"), "more than the limit"));
    CHECK(contains(header_error(file_bytes("{\"a\":")), "header (at byte offset 8):1:6"));
    CHECK(contains(header_error(file_bytes("[1,2]")), "the header is an array, not a JSON object"));
    CHECK(contains(header_error(file_bytes("{" + entry("a", "F32", "[4]", 0, 16) + "," +
                                           entry("a", "F32", "[4]", 0, 16) + "}", data16)),
                   "duplicate key \"a\""));
    CHECK(contains(header_error(file_bytes("{" + entry("a", "F32", "[4]", 0, 32) + "}", data16)),
                   "key 'a': data_offsets [0, 32] reach past the 16 data bytes"));
    CHECK(contains(header_error(file_bytes("{" + entry("a", "F32", "[4]", 16, 0) + "}", data16)),
                   "key 'a': data_offsets [16, 0] end before they begin"));
    CHECK(contains(header_error(file_bytes("{" + entry("a", "F32", "[3]", 0, 16) + "}", data16)),
                   "key 'a': shape (3,) of F32 needs 12 bytes but data_offsets [0, 16] hold 16"));
    CHECK(contains(header_error(file_bytes("{" + entry("a", "F32", "[2]", 0, 8) + "," +
                                           entry("b", "F32", "[2]", 4, 12) + "}", data16)),
                   "key 'b' (bytes"));
    CHECK(contains(header_error(file_bytes("{" + entry("a", "F32", "[2]", 0, 8) + "," +
                                           entry("b", "F32", "[2]", 4, 12) + "}", data16)),
                   "overlaps key 'a'"));
    CHECK(contains(header_error(file_bytes("{" + entry("a", "F32", "[2]", 8, 16) + "}", data16)),
                   "leaving a hole after byte"));
    CHECK(contains(header_error(file_bytes("{" + entry("a", "F32", "[2]", 0, 8) + "}", data16)),
                   "8 bytes after the last tensor"));
    CHECK(contains(header_error(file_bytes("{" + entry("a", "F32", "[-1]", 0, 16) + "}", data16)),
                   "key 'a': a \"shape\" dimension is not a non-negative integer"));
    CHECK(contains(header_error(file_bytes("{" + entry("a", "F32", "[4294967296,4294967296]", 0, 16) + "}", data16)),
                   "key 'a': shape (4294967296, 4294967296) of F32 is absurd"));
    CHECK(contains(header_error(file_bytes("{" + entry("a", "F32", "[1152921504606846976]", 0, 16) + "}", data16)),
                   "is absurd"));
    CHECK(contains(header_error(file_bytes("{" + entry("a", "F32", "[99999999999999999999]", 0, 16) + "}", data16)),
                   "not a non-negative integer that fits 64 bits"));
    CHECK(contains(header_error(file_bytes("{" + entry("a", "Q7", "[4]", 0, 16) + "}", data16)),
                   "key 'a' has dtype \"Q7\", which the safetensors format does not define"));
    CHECK(contains(header_error(file_bytes("{" + entry("a", "F6_E2M3", "[3]", 0, 16) + "}", data16)),
                   "18 bits, not whole"));
    CHECK(contains(header_error(file_bytes(R"({"a":{"dtype":"F32","shape":[4]}})", data16)),
                   "key 'a' has no \"data_offsets\" array"));
    CHECK(contains(header_error(file_bytes(R"({"a":[1]})", data16)), "key 'a' is not an object"));
    CHECK(contains(header_error(file_bytes(R"({"__metadata__":{"n":1}})")),
                   "key '__metadata__': \"n\" is a number, not a string"));
    CHECK(contains(header_error(file_bytes("{\"\xff\":1}")), "invalid UTF-8"));
    // The header is read member by member: what follows the object, or a
    // value that is no object, is still checked as the whole document was.
    CHECK(contains(header_error(file_bytes("{} x")),
                   "header (at byte offset 8):1:4: unexpected text after the JSON value"));
    CHECK(contains(header_error(file_bytes("[1] x")), "unexpected text after the JSON value"));
    CHECK(contains(header_error(file_bytes("\"a\"")), "the header is a string, not a JSON object"));
    {
        // A duplicate among many keys, after the ones compared one by one.
        std::string many = "{", data;
        for (int k = 0; k < 12; ++k) {
            many += entry("k" + std::to_string(k), "F32", "[1]", std::uint64_t(4 * k), std::uint64_t(4 * k + 4)) + ",";
            data += std::string(4, '\0');
        }
        const auto data_bytes = numgap_test::to_bytes(data);
        CHECK(numgap::io::parse_safetensors_header(
                  as_bytes(file_bytes(many.substr(0, many.size() - 1) + "}", data_bytes)), "many.safetensors")
                  .entries.size() == 12);
        CHECK(contains(header_error(file_bytes(many + entry("k10", "F32", "[1]", 0, 4) + "}", data_bytes)),
                       "duplicate key \"k10\""));
    }

    {
        // Entries are read member by member; the checks run once the entry
        // is read whole, so member order never changes the outcome, and a
        // syntax error anywhere in an entry wins over a wrong value before it.
        for (const char* header : {R"({"a":{"data_offsets":[0,16],"shape":[4],"dtype":"F32","x":{"y":[1]}}})",
                                   R"({"a":{"shape":[4],"extra":null,"data_offsets":[0,16],"dtype":"F32"}})"})
            CHECK(numgap::io::parse_safetensors_header(as_bytes(file_bytes(header, data16)), "ordered")
                      .entries.at(0)
                      .shape == std::vector<std::int64_t>{4});
        CHECK(contains(header_error(file_bytes(R"({"a":{"shape":"4","data_offsets":[0],"dtype":7}})", data16)),
                       "key 'a' has no string \"dtype\""));
        CHECK(contains(header_error(file_bytes(R"({"a":{"data_offsets":[0],"shape":{},"dtype":"F32"}})", data16)),
                       "key 'a' has no \"shape\" array"));
        CHECK(contains(header_error(file_bytes(R"({"a":{"data_offsets":[0,1,2],"shape":[4],"dtype":"F32"}})", data16)),
                       "key 'a' has no \"data_offsets\" array of two integers"));
        CHECK(contains(header_error(file_bytes(R"({"a":{"data_offsets":[0,-16],"shape":[-4],"dtype":"F32"}})", data16)),
                       "key 'a': a \"shape\" dimension is not a non-negative integer"));
        CHECK(contains(header_error(file_bytes(R"({"a":{"data_offsets":[0,"16"],"shape":[4],"dtype":"F32"}})", data16)),
                       "key 'a': data_offsets[1] is not a non-negative integer"));
        CHECK(contains(header_error(file_bytes(R"({"a":{"dtype":7,"shape":[4],"data_offsets":[0,16],}})", data16)),
                       "expected a string key in object"));
        CHECK(contains(header_error(file_bytes(
                           R"({"a":{"dtype":"F32","dtype":"F16","shape":[4],"data_offsets":[0,16]}})", data16)),
                       "duplicate key \"dtype\" in object"));
        CHECK(contains(header_error(file_bytes(R"({"a":{"dtype":"F32","shape":[[4]],"data_offsets":[0,16]}})", data16)),
                       "a \"shape\" dimension is not a non-negative integer"));
    }

    // Kinds and locations a program can act on.
    const numgap::error truncated = header_failure(std::string("\x10\x00\x00", 3));
    CHECK(truncated.kind() == numgap::error_kind::format);
    CHECK(truncated.where().offset == 0);
    CHECK(header_failure(length_prefix(std::uint64_t(1) << 62) + "{}").kind() == numgap::error_kind::limit);
    const numgap::error past_end = header_failure(file_bytes("{" + entry("a", "F32", "[4]", 0, 32) + "}", data16));
    CHECK(past_end.kind() == numgap::error_kind::format);
    CHECK(past_end.where().item == "a");
    const std::string misfit = file_bytes("{" + entry("a", "F32", "[3]", 0, 16) + "}", data16);
    const numgap::error wrong_size = header_failure(misfit);
    CHECK(wrong_size.kind() == numgap::error_kind::shape);
    CHECK(wrong_size.where().item == "a");
    CHECK(wrong_size.where().offset == misfit.size() - 16); // the entry's first data byte
    const numgap::error overlap = header_failure(
        file_bytes("{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 4, 12) + "}", data16));
    CHECK(overlap.kind() == numgap::error_kind::schema);
    CHECK(overlap.where().item == "b");
    CHECK(header_failure(file_bytes("{" + entry("a", "F32", "[4294967296,4294967296]", 0, 16) + "}", data16)).kind() ==
          numgap::error_kind::limit);
    const numgap::error undefined = header_failure(file_bytes("{" + entry("a", "Q7", "[4]", 0, 16) + "}", data16));
    CHECK(undefined.kind() == numgap::error_kind::dtype);
    CHECK(undefined.where().item == "a");
    CHECK(header_failure(file_bytes(R"({"a":[1]})", data16)).kind() == numgap::error_kind::schema);
}

TEST_CASE("safetensors runs: each key's compact record gives what the parsed index gives, and the same errors") {
    // Keys out of order, every kind of shape (scalar, empty, rank 3), a dtype
    // numgap lacks, packed F4, and a second file: what a run keeps of each key
    // (safetensors_tensors' record: key, dtype, shape, byte range) must be
    // exactly the index's entry, and its view the index's view.
    const std::string first = safetensors_file({{"zeta", "F32", "[2,2]", bytes_of<float>({1.5f, -2.0f, 0.25f, 8.0f})},
                                                {"alpha", "F64", "[]", bytes_of<double>({0.125})},
                                                {"empty", "BF16", "[3,0,2]", {}},
                                                {"wide", "I64", "[1]", bytes_of<std::int64_t>({5})},
                                                {"nibbles", "F4", "[1,2,2]", bytes_of<std::uint8_t>({0x21, 0x43})},
                                                {"a.b/c d", "U8", "[3]", bytes_of<std::uint8_t>({200, 3, 9})}},
                                               R"({"format":"pt"})");
    const std::string second = safetensors_file({{"beta", "I32", "[1,2]", bytes_of<std::int32_t>({-100000, 7})}});
    numgap_test::temp_directory run;
    numgap::io::safetensors_tensors tensors;
    for (const auto& [name, content] : {std::pair<std::string, std::string>{"one.safetensors", first},
                                        std::pair<std::string, std::string>{"sub/two.safetensors", second}}) {
        const auto path = run.write(name, content);
        tensors.add(name, numgap::io::file_descriptor(::open(path.c_str(), O_RDONLY | O_CLOEXEC)), path);
    }
    REQUIRE(tensors.size() == 7);
    CHECK(tensors.total_bytes() == first.size() + second.size());
    std::size_t checked = 0;
    for (const auto& file : {std::pair<std::string, std::string>{"one.safetensors", first},
                             std::pair<std::string, std::string>{"sub/two.safetensors", second}}) {
        // Named copies, not structured bindings: clang 14 cannot capture those in a lambda.
        const std::string& name = file.first;
        const std::string& content = file.second;
        const auto index = numgap::io::parse_safetensors_header(as_bytes(content), name);
        for (const numgap::io::safetensors_entry& entry : index.entries) {
            CAPTURE(entry.key);
            const auto where = tensors.find(entry.key);
            REQUIRE(where.has_value());
            CHECK(where->source->name == name);
            CHECK(where->key == entry.key);
            CHECK(where->dtype_name == entry.dtype_name);
            CHECK(where->type == entry.type);
            CHECK(std::vector<std::int64_t>(where->shape.begin(), where->shape.end()) == entry.shape);
            CHECK(where->begin == entry.begin);
            CHECK(where->end == entry.end);
            if (entry.type) {
                const numgap::tensor_view mine = where->view(),
                                          parsed = numgap::io::safetensors_view(as_bytes(content), entry, name);
                CHECK(mine.type() == parsed.type());
                CHECK(mine.rank() == parsed.rank());
                CHECK(mine.size() == parsed.size());
                CHECK(std::memcmp(mine.data(), where->source->mapping->data() + entry.begin, entry.end - entry.begin) ==
                      0);
            } else {
                CHECK(error_of([&] { (void)where->view(); }) ==
                      error_of([&] { (void)numgap::io::safetensors_view(as_bytes(content), entry, name); }));
            }
            ++checked;
        }
    }
    CHECK(checked == 7);
    CHECK_FALSE(tensors.find("missing").has_value());
    CHECK_FALSE(tensors.find("alph").has_value());
    // Positions: sorted by key, and a position hint that does not fit is searched past.
    const std::vector<std::uint32_t> sorted = tensors.sorted_positions();
    std::vector<std::string> keys;
    for (const std::uint32_t position : sorted) keys.emplace_back(tensors.at(position).key);
    CHECK(keys == std::vector<std::string>{"a.b/c d", "alpha", "beta", "empty", "nibbles", "wide", "zeta"});
    CHECK(tensors.find("beta", sorted[0])->key == "beta");
    CHECK(tensors.find("beta", 1000)->key == "beta");
    CHECK_FALSE(tensors.find("gamma", sorted[2]).has_value());
    CHECK(at<float>(tensors.find("zeta")->view(), 3) == 8.0f);
    CHECK(at<double>(tensors.find("alpha")->view(), 0) == 0.125);

    // A header of many pages, handed back once read: every key still reads
    // its own data, the ones whose data share the header's last page included.
    std::vector<tensor_bytes> many;
    for (int k = 0; k < 3000; ++k)
        many.push_back(
            {"layer." + std::to_string(k) + ".weight", "F32", "[2]", bytes_of<float>({float(k), float(-k)})});
    const std::string large = safetensors_file(many);
    REQUIRE(large.size() > 16 * 4096);
    {
        const auto path = run.write("large.safetensors", large);
        numgap::io::safetensors_tensors big;
        big.add("large.safetensors", numgap::io::file_descriptor(::open(path.c_str(), O_RDONLY | O_CLOEXEC)), path);
        REQUIRE(big.size() == 3000);
        for (int k = 0; k < 3000; k += 7) {
            const auto where = big.find("layer." + std::to_string(k) + ".weight");
            REQUIRE(where.has_value());
            CHECK(at<float>(where->view(), 0) == float(k));
            CHECK(at<float>(where->view(), 1) == float(-k));
        }
    }

    // A shard whose weight map lists some keys out of header order: only
    // those are the run's, each at its own place; a failed add (a key
    // already claimed) leaves the run as it was.
    {
        const auto shard =
            run.write("shard.safetensors", safetensors_file({{"p", "F32", "[1]", bytes_of<float>({1})},
                                                             {"q", "F32", "[2]", bytes_of<float>({2, 2.5f})},
                                                             {"r", "F32", "[1]", bytes_of<float>({3})},
                                                             {"s", "I32", "[1]", bytes_of<std::int32_t>({4})}}));
        const auto open_shard = [&] {
            return numgap::io::file_descriptor(::open(shard.c_str(), O_RDONLY | O_CLOEXEC));
        };
        numgap::io::safetensors_tensors listed;
        listed.add("shard.safetensors", open_shard(), shard, {"s", "q"});
        REQUIRE(listed.size() == 2);
        CHECK_FALSE(listed.find("p").has_value());
        CHECK_FALSE(listed.find("r").has_value());
        CHECK(at<std::int32_t>(listed.find("s")->view(), 0) == 4);
        CHECK(at<float>(listed.find("q")->view(), 1) == 2.5f);
        std::vector<std::string> listed_keys;
        for (const std::uint32_t position : listed.sorted_positions())
            listed_keys.emplace_back(listed.at(position).key);
        CHECK(listed_keys == std::vector<std::string>{"q", "s"});
        const std::uint64_t bytes_before = listed.total_bytes();
        const std::string again = error_of([&] { listed.add("copy.safetensors", open_shard(), shard, {"r", "q"}); });
        CHECK(contains(again, "key 'q' is in both safetensors files 'shard.safetensors' and 'copy.safetensors'"));
        CHECK(contains(error_of([&] {
                           listed.add("copy.safetensors", open_shard(), shard, {"r", "x"});
                       }),
                       "names key 'x' in 'copy.safetensors'"));
        CHECK(listed.size() == 2);
        CHECK(listed.total_bytes() == bytes_before);
        CHECK_FALSE(listed.find("r").has_value());
        CHECK(at<float>(listed.find("q")->view(), 0) == 2.0f);
        // ... and the run still takes files after it.
        listed.add("more.safetensors", open_shard(), shard, {"r", "p"});
        CHECK(listed.size() == 4);
        CHECK(at<float>(listed.find("r")->view(), 0) == 3.0f);
        CHECK(listed.find("r")->source->name == "more.safetensors");
    }

    // Hostile files: adding one to a run fails with parse_safetensors_header's own message.
    const auto data16 = numgap_test::to_bytes(std::string(16, '\0'));
    const std::vector<std::string> hostile = {
        std::string("\x10\x00\x00", 3),
        length_prefix(64) + "{}",
        length_prefix(std::uint64_t(1) << 62) + "{}",
        file_bytes("[1,2]"),
        file_bytes("{" + entry("a", "F32", "[4]", 0, 16) + "," + entry("a", "F32", "[4]", 0, 16) + "}", data16),
        file_bytes("{" + entry("a", "F32", "[4]", 0, 32) + "}", data16),
        file_bytes("{" + entry("a", "F32", "[3]", 0, 16) + "}", data16),
        file_bytes("{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 4, 12) + "}", data16),
        file_bytes("{" + entry("b", "F32", "[2]", 4, 12) + "," + entry("a", "F32", "[2]", 0, 8) + "}", data16),
        file_bytes("{" + entry("a", "F32", "[2]", 8, 16) + "}", data16),
        file_bytes("{" + entry("a", "F32", "[2]", 0, 8) + "}", data16),
        file_bytes("{" + entry("a", "F32", "[4294967296,4294967296]", 0, 16) + "}", data16),
        file_bytes("{" + entry("a", "Q7", "[4]", 0, 16) + "}", data16),
        file_bytes(R"({"__metadata__":{"n":1}})"),
    };
    for (const std::string& content : hostile) {
        CAPTURE(content);
        const auto path = run.write("hostile.safetensors", content);
        numgap::io::safetensors_tensors fresh;
        const auto added = numgap_test::caught_error([&] {
            fresh.add("hostile.safetensors", numgap::io::file_descriptor(::open(path.c_str(), O_RDONLY | O_CLOEXEC)),
                      "hostile.safetensors");
        });
        REQUIRE(added.has_value());
        const auto parsed = numgap_test::caught_error(
            [&] { (void)numgap::io::parse_safetensors_header(as_bytes(content), "hostile.safetensors"); });
        REQUIRE(parsed.has_value());
        CHECK(std::string(added->what()) == parsed->what());
        CHECK(added->kind() == parsed->kind());
        CHECK(added->where().file == parsed->where().file);
        CHECK(added->where().item == parsed->where().item);
        CHECK(added->where().offset == parsed->where().offset);
    }
}

TEST_CASE("safetensors: misaligned data is read right: mapped view as is, run_directory copies that tensor") {
    // A 9-byte-aligned data start: header of 9 bytes padded -> data at 17 bytes... any odd start.
    std::string file = safetensors_file({{"x", "F32", "[3]", bytes_of<float>({1.0f, 2.5f, -4.0f})}});
    const auto index = numgap::io::parse_safetensors_header(as_bytes(file), "m");
    if (index.data_start % 4 == 0) file = safetensors_file({{"x", "F32", "[3]", bytes_of<float>({1.0f, 2.5f, -4.0f})}},
                                                           "", index.data_start - 8 + 1);
    REQUIRE(numgap::io::parse_safetensors_header(as_bytes(file), "m").data_start % 4 != 0);
    numgap_test::temp_directory run;
    run.write("m.safetensors", file);
    const run_directory dir = run_directory::open(run / "m.safetensors");
    const auto tensor = dir.load("x");
    CHECK(reinterpret_cast<std::uintptr_t>(tensor.view().data()) % 4 == 0);
    CHECK(at<float>(tensor.view(), 0) == 1.0f);
    CHECK(at<float>(tensor.view(), 1) == 2.5f);
    CHECK(at<float>(tensor.view(), 2) == -4.0f);
}

TEST_CASE("safetensors runs: one file by content, a folder, duplicate keys, and the graph.json overlay") {
    numgap_test::temp_directory run;
    const std::string first = safetensors_file({{"round_0.layer_0.kv", "F32", "[2]", bytes_of<float>({1, 2})},
                                                {"logits", "F32", "[1]", bytes_of<float>({3})}});
    // Named .bin: content, not the extension, makes it a safetensors run.
    run.write("single/dump.bin", first);
    const run_directory single = run_directory::open(run / "single/dump.bin");
    CHECK(single.keys() == std::vector<std::string>{"logits", "round_0.layer_0.kv"});
    CHECK(single.load("logits").file() == (run / "single/dump.bin").string());
    CHECK(single.total_bytes() == first.size());
    // Structural matching gets the shapes from the header, without loading.
    CHECK(single.stored_shape("round_0.layer_0.kv") == std::vector<std::int64_t>{2});
    CHECK(single.stored_shape("logits") == std::vector<std::int64_t>{1});
    CHECK(contains(error_of([&] { (void)single.load("absent"); }), "has no tensor 'absent' (no such safetensors key)"));
    run.write("single/huge.bin", length_prefix(std::uint64_t(1) << 62) + "{}");
    CHECK(contains(error_of([&] { (void)run_directory::open(run / "single/huge.bin"); }),
                   "safetensors file '" + (run / "single/huge.bin").string() + "' declares a header of"));
    run.write("single/not_a_run.bin", "plain bytes, no header");
    CHECK(contains(error_of([&] { (void)run_directory::open(run / "single/not_a_run.bin"); }),
                   "is neither a directory nor an .npz file (nor a safetensors file"));

    run.write("folder/a.safetensors", first);
    run.write("folder/sub/b.safetensors", safetensors_file({{"q", "U8", "[4]", bytes_of<std::uint8_t>({0, 1, 2, 3})}}));
    numgap::io::write_npy(run / "folder/extra.npy", std::vector<float>{9}.data(), std::vector<std::int64_t>{1});
    run.write("folder/graph.json", R"({"tensors": {"q": {"scale": 0.5, "zero_point": 1}}})");
    const run_directory folder = run_directory::open(run / "folder");
    CHECK(folder.keys() == std::vector<std::string>{"extra", "logits", "q", "round_0.layer_0.kv"});
    const auto q = folder.load("q");
    CHECK(q.file() == "sub/b.safetensors");
    REQUIRE(q.view().is_quantized());
    CHECK(q.view().quant().scale == 0.5f);
    CHECK(q.view().name() == "q");

    run.write("folder/graph.json", R"({"tensors": {"q": {"dtype": "int8"}}})");
    CHECK(contains(error_of([&] { (void)run_directory::open(run / "folder").load("q"); }),
                   "graph.json gives dtype int8 but 'sub/b.safetensors' stores key 'q' as U8"));
    // Errors after the read name the file and the key (the text is built only then).
    run.write("folder/graph.json", R"({"tensors": {"q": {"shape": [5]}}})");
    const auto wrong_shape = numgap_test::caught_error([&] { (void)run_directory::open(run / "folder").load("q"); });
    REQUIRE(wrong_shape.has_value());
    CHECK(contains(wrong_shape->what(), "graph.json gives shape (5"));
    CHECK(contains(wrong_shape->what(), "but 'sub/b.safetensors' key 'q' stores shape (4"));
    CHECK(wrong_shape->where().item == "q");
    run.write("folder/graph.json", R"({"tensors": {"q": {"axis_order": [1, 0]}}})");
    CHECK(contains(error_of([&] { (void)run_directory::open(run / "folder").load("q"); }),
                   "graph.json gives axis_order of 2 entries but 'sub/b.safetensors' key 'q' has rank 1"));
    std::filesystem::remove(run / "folder/graph.json");

    run.write("folder/c.safetensors", safetensors_file({{"logits", "F32", "[1]", bytes_of<float>({4})}}));
    const std::string twice = error_of([&] { (void)run_directory::open(run / "folder"); });
    CHECK(contains(twice, "key 'logits' is in both safetensors files"));
    CHECK(contains(twice, "'a.safetensors'"));
    CHECK(contains(twice, "'c.safetensors'"));
    // The set of files itself says which key and file: a schema error.
    numgap::io::safetensors_tensors files;
    const auto add = [&](const char* name) {
        files.add(name, numgap::io::file_descriptor(::open((run / "folder" / name).c_str(), O_RDONLY | O_CLOEXEC)),
                  run / "folder" / name);
    };
    add("a.safetensors");
    const auto twice_failure = numgap_test::caught_error([&] { add("c.safetensors"); });
    REQUIRE(twice_failure.has_value());
    CHECK(twice_failure->kind() == numgap::error_kind::schema);
    CHECK(twice_failure->where().file == "c.safetensors");
    CHECK(twice_failure->where().item == "logits");
    std::filesystem::remove(run / "folder/c.safetensors");

    numgap::io::write_npy(run / "folder/q.npy", std::vector<float>{9}.data(), std::vector<std::int64_t>{1});
    CHECK(contains(error_of([&] { (void)run_directory::open(run / "folder"); }),
                   "tensor 'q' is both the file 'q.npy' and a key of 'sub/b.safetensors'"));
    std::filesystem::remove(run / "folder/q.npy");

    run.write("folder/broken.safetensors", file_bytes("{\"k\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,9]}}"));
    const std::string broken = error_of([&] { (void)run_directory::open(run / "folder"); });
    CHECK(contains(broken, "broken.safetensors"));
    CHECK(contains(broken, "key 'k'"));
}

TEST_CASE("safetensors runs: position_of agrees with the index in every lookup order, on several threads") {
    // position_of first tries the positions after this thread's last hit in
    // the same run: in file order, backwards, at random, skipping, with two
    // runs interleaved, absent keys between, a run destroyed and another
    // made (perhaps at its address), and on four threads at once, every
    // answer must be the key's own position.
    numgap_test::temp_directory run;
    const auto make = [&](const std::string& name, std::size_t count, const std::string& prefix) {
        std::vector<tensor_bytes> tensors;
        for (std::size_t i = 0; i < count; ++i)
            tensors.push_back({prefix + std::to_string(i), "F32", "[1]", bytes_of<float>({float(i)})});
        const auto path = run.write(name, safetensors_file(tensors));
        auto tensors_of_run = std::make_unique<numgap::io::safetensors_tensors>();
        tensors_of_run->add(name, numgap::io::file_descriptor(::open(path.c_str(), O_RDONLY | O_CLOEXEC)), path);
        return tensors_of_run;
    };
    const auto check_order = [](const numgap::io::safetensors_tensors& tensors, const std::vector<std::size_t>& order) {
        for (const std::size_t i : order) {
            const std::string_view key = tensors.key_at(std::uint32_t(i));
            REQUIRE(tensors.position_of(key) == std::optional<std::uint32_t>(std::uint32_t(i)));
            CHECK_FALSE(tensors.position_of(std::string(key) + "x").has_value());
        }
    };
    std::mt19937 random(7);
    for (int round = 0; round < 3; ++round) {
        const auto first = make("a.safetensors", 200, "k"), second = make("b.safetensors", 150, "k");
        std::vector<std::size_t> forward(200), skipping, shuffled;
        std::iota(forward.begin(), forward.end(), 0);
        for (std::size_t i = 0; i < 200; i += 1 + random() % 7) skipping.push_back(i);
        shuffled = forward;
        std::shuffle(shuffled.begin(), shuffled.end(), random);
        const std::vector<std::size_t> backward(forward.rbegin(), forward.rend());
        for (const std::vector<std::size_t>& order : {forward, backward, skipping, shuffled})
            check_order(*first, order);
        // Two runs taking turns, as a comparison does (keys in both: "k0".. "k149").
        for (std::uint32_t i = 0; i < 150; ++i) {
            REQUIRE(first->position_of("k" + std::to_string(i)) == std::optional<std::uint32_t>(i));
            REQUIRE(second->position_of("k" + std::to_string(i)) == std::optional<std::uint32_t>(i));
        }
        // Four threads, each over its own interleaving of both runs.
        std::vector<std::thread> threads;
        std::atomic<int> wrong{0};
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&, t] {
                for (std::size_t i = std::size_t(t); i < 150; i += 2)
                    for (const auto* tensors : {first.get(), second.get()})
                        if (tensors->position_of("k" + std::to_string(i)) != std::optional<std::uint32_t>(i)) ++wrong;
            });
        for (std::thread& thread : threads) thread.join();
        CHECK(wrong == 0);
    }
    // A run made after others were destroyed, its keys in another order than theirs.
    const auto last = make("c.safetensors", 60, "z");
    std::vector<std::size_t> all(60);
    std::iota(all.begin(), all.end(), 0);
    check_order(*last, all);
    CHECK_FALSE(last->position_of("k3").has_value());
}

TEST_CASE("safetensors runs: a header that repeats a key gets the error the checked reading gives") {
    // A run's file is read without a duplicate check of the JSON reader's
    // own (the run's key index finds a repeated key); on any failure the
    // checked reading runs, so the error is the one parse_safetensors_header
    // gives: the repeated key when it comes before a later fault.
    const std::string data(16, '\0');
    const auto data16 = numgap_test::to_bytes(data);
    numgap_test::temp_directory run;
    const auto reason_after_name = [](const std::string& message) {
        const std::size_t at = message.find(".safetensors");
        return at == std::string::npos ? message : message.substr(at + 12);
    };
    for (const std::string& header :
         {"{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("a", "F32", "[2]", 8, 16) +
              "}", // tiles: the index finds it
          "{" + entry("a", "F32", "[4]", 0, 16) + "," + entry("a", "F32", "[4]", 0, 16) + "}", // overlap too
          "{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("a", "F32", "[2]", 8, 16) + "," +
              entry("b", "Q7", "[1]", 16, 16) + "}", // a later unknown dtype
          "{\"__metadata__\":{},\"__metadata__\":{\"n\":\"1\"}," + entry("a", "F32", "[4]", 0, 16) +
              "}", // a repeat that makes no entry
          "{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 4, 12) + "}"}) { // no repeat
        CAPTURE(header);
        const std::string file = file_bytes(header, data16);
        run.write("repeated/x.safetensors", file);
        const std::string expected = reason_after_name(header_error(file));
        const std::string got = error_of([&] { (void)run_directory::open(run / "repeated"); });
        CHECK(contains(got, (run / "repeated/x.safetensors").string()));
        CHECK(reason_after_name(got) == expected);
    }
    // The first four are refused as a repeated key, the last as overlapping.
    run.write("repeated/x.safetensors",
              file_bytes("{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("a", "F32", "[2]", 8, 16) + "}", data16));
    CHECK(contains(error_of([&] { (void)run_directory::open(run / "repeated"); }), "duplicate key \"a\" in object"));
    // A key of an earlier file met first, a repeat later in the same header:
    // the repeat is the error, as the checked reading gives it.
    run.write("two/a.safetensors", file_bytes("{" + entry("k", "F32", "[4]", 0, 16) + "}", data16));
    const std::string repeats = "{" + entry("k", "F32", "[1]", 0, 4) + "," + entry("z", "F32", "[1]", 4, 8) + "," +
                                entry("z", "F32", "[2]", 8, 16) + "}";
    run.write("two/b.safetensors", file_bytes(repeats, data16));
    const std::string across = error_of([&] { (void)run_directory::open(run / "two"); });
    CHECK(contains(across, "b.safetensors"));
    CHECK(reason_after_name(across) == reason_after_name(header_error(file_bytes(repeats, data16))));
    CHECK(contains(across, "duplicate key \"z\" in object"));
    // Without the repeat, the key in both files is the error.
    run.write("two/b.safetensors",
              file_bytes("{" + entry("k", "F32", "[1]", 0, 4) + "," + entry("z", "F32", "[3]", 4, 16) + "}", data16));
    CHECK(contains(error_of([&] { (void)run_directory::open(run / "two"); }),
                   "key 'k' is in both safetensors files 'a.safetensors' and 'b.safetensors'"));
}

TEST_CASE("safetensors runs: keys without specs; a spec's source_slot is a hint only; try_load looks a key up once") {
    numgap_test::temp_directory run;
    run.write("folder/a.safetensors", safetensors_file({{"c", "F32", "[1]", bytes_of<float>({3})},
                                                        {"a", "F32", "[1]", bytes_of<float>({1})},
                                                        {"b", "F32", "[2]", bytes_of<float>({2, 2})}}));
    run.write("folder/sub/d.safetensors", safetensors_file({{"d", "F32", "[1]", bytes_of<float>({4})}}));
    const numgap::io::opened_run_source opened = numgap::io::open_run_source(run / "folder");
    // Container keys (run_source.hpp): no spec each; the source lists and finds them.
    CHECK(opened.manifest.tensors.empty());
    const numgap::io::run_source& source = *opened.source;
    const std::vector<std::uint32_t> slots = source.sorted_container_keys();
    REQUIRE(slots.size() == 4);
    std::vector<numgap::io::tensor_spec> specs(4);
    for (std::size_t i = 0; i < 4; ++i) {
        specs[i].key = std::string(source.container_key(slots[i]));
        specs[i].source_slot = slots[i];
        CHECK(source.find_container_key(specs[i].key) == slots[i]);
    }
    CHECK(specs[0].key + specs[1].key + specs[2].key + specs[3].key == "abcd"); // sorted by key
    CHECK_FALSE(source.find_container_key("zz"));
    CHECK_FALSE(source.find_container_key(""));
    const auto first_value = [](const numgap::io::loaded_tensor& tensor) { return at<float>(tensor.view(), 0); };
    for (const numgap::io::tensor_spec& spec : specs) {
        INFO(spec.key);
        const float expected = float(spec.key[0] - 'a' + 1);
        // The right slot, another key's, one past the end and none: the key decides.
        for (const std::uint32_t slot :
             {spec.source_slot, specs[(&spec - specs.data() + 1) % 4].source_slot, std::uint32_t(4),
              std::uint32_t(1000), numgap::io::tensor_spec::no_source_slot}) {
            numgap::io::tensor_spec hinted = spec;
            hinted.source_slot = slot;
            CHECK(first_value(opened.source->load(hinted)) == expected);
            CHECK(opened.source->stored_shape(hinted) == std::vector<std::int64_t>{spec.key == "b" ? 2 : 1});
        }
    }
    // A spec naming a key the run lacks, with a slot that exists, is not
    // served the slot's tensor.
    numgap::io::tensor_spec stranger = specs[0];
    stranger.key = "zz";
    CHECK_FALSE(opened.source->stored_shape(stranger));

    const run_directory folder = run_directory::open(run / "folder");
    CHECK(folder.keys() == std::vector<std::string>{"a", "b", "c", "d"});
    CHECK(folder.find_tensor("a") == nullptr); // no spec: graph.json does not describe it
    CHECK(folder.contains("a"));
    CHECK_FALSE(folder.contains("absent"));
    CHECK(folder.stored_shape("b") == std::vector<std::int64_t>{2});
    CHECK_FALSE(folder.stored_shape("absent"));
    CHECK_FALSE(folder.try_load("absent"));
    CHECK_FALSE(folder.try_load_like("absent", folder.load("a").view()));
    const std::optional<numgap::io::loaded_tensor> b = folder.try_load("b");
    REQUIRE(b);
    CHECK(b->view().size() == 2);
    CHECK(first_value(*b) == 2);
    const std::optional<numgap::io::loaded_tensor> d = folder.try_load_like("d", b->view());
    REQUIRE(d);
    CHECK(first_value(*d) == 4);
    CHECK(d->file() == "sub/d.safetensors");
    // Only absence is nullopt: a tensor that is there but cannot be read still throws.
    run.write("folder/graph.json", R"({"tensors": {"a": {"dtype": "int8"}}})");
    const run_directory typed = run_directory::open(run / "folder");
    CHECK(typed.find_tensor("a")->file.empty()); // also when graph.json describes the key
    CHECK(typed.find_tensor("a")->source_slot != numgap::io::tensor_spec::no_source_slot);
    CHECK(contains(error_of([&] { (void)typed.try_load("a"); }), "graph.json gives dtype int8"));
    // keys() merges the specs (a described key, a file) with the container keys, each once, sorted.
    numgap::io::write_npy(run / "folder/bb.npy", std::vector<float>{5}.data(), std::vector<std::int64_t>{1});
    run.write("folder/graph.json", R"({"tensors": {"c": {"shape": [1]}, "e": {"dtype": "float32"}}})");
    const run_directory mixed = run_directory::open(run / "folder");
    CHECK(mixed.keys() == std::vector<std::string>{"a", "b", "bb", "c", "d"}); // "e" was not dumped
    CHECK(mixed.manifest().tensors.size() == 2);                               // "bb" and "c"
    CHECK(first_value(mixed.load("bb")) == 5);
    CHECK(first_value(mixed.load("c")) == 3);
    CHECK(first_value(mixed.load("d")) == 4);
    CHECK(contains(error_of([&] { (void)mixed.load("e"); }), "has no tensor 'e'"));
    // A container key without a spec serves as another tensor's block scales.
    run.write("folder/q.safetensors",
              safetensors_file({{"q", "I8", "[2, 4]", bytes_of<std::int8_t>({1, 2, 3, 4, 5, 6, 7, 8})},
                                {"q_scales", "F32", "[2, 2]", bytes_of<float>({0.5f, 1, 2, 4})}}));
    run.write("folder/graph.json", R"({"tensors": {"q": {"block": {"size": 2, "axis": -1, "scales": "q_scales"}}}})");
    const run_directory blocked = run_directory::open(run / "folder");
    CHECK(blocked.find_tensor("q_scales") == nullptr);
    const numgap::io::loaded_tensor q = blocked.load("q");
    REQUIRE(q.view().quant().per_block());
    CHECK(std::vector<float>(q.view().quant().scales.begin(), q.view().quant().scales.end()) ==
          std::vector<float>{0.5f, 1, 2, 4});
}

TEST_CASE("safetensors runs: a sharded set through its index.json, confined to the index's folder") {
    numgap_test::temp_directory run;
    run.write("model/model-00001-of-00002.safetensors",
              safetensors_file({{"a", "F32", "[1]", bytes_of<float>({1})}, {"b", "F32", "[1]", bytes_of<float>({2})}}));
    run.write("model/model-00002-of-00002.safetensors", safetensors_file({{"c", "F32", "[1]", bytes_of<float>({3})}}));
    run.write("model/model.safetensors.index.json",
              R"({"metadata": {"total_size": 12}, "weight_map": {"a": "model-00001-of-00002.safetensors",
                  "c": "model-00002-of-00002.safetensors", "b": "model-00001-of-00002.safetensors"}})");
    const run_directory sharded = run_directory::open(run / "model/model.safetensors.index.json");
    CHECK(sharded.keys() == std::vector<std::string>{"a", "b", "c"});
    CHECK(at<float>(sharded.load("c").view(), 0) == 3.0f);
    CHECK(sharded.load("c").file() == "model-00002-of-00002.safetensors");

    run.write("model/partial.index.json", R"({"weight_map": {"a": "model-00001-of-00002.safetensors"}})");
    CHECK(run_directory::open(run / "model/partial.index.json").keys() == std::vector<std::string>{"a"});
    // Only the listed keys of a shard are the run's, each read at its own
    // offset (a key after an unlisted one in the header included).
    run.write("model/later.index.json", R"({"weight_map": {"b": "model-00001-of-00002.safetensors",
                                                          "c": "model-00002-of-00002.safetensors"}})");
    const run_directory later = run_directory::open(run / "model/later.index.json");
    CHECK(later.keys() == std::vector<std::string>{"b", "c"});
    CHECK(at<float>(later.load("b").view(), 0) == 2.0f);
    CHECK(at<float>(later.load("c").view(), 0) == 3.0f);
    CHECK_FALSE(later.try_load("a").has_value());

    run.write("model/wrong.index.json", R"({"weight_map": {"z": "model-00002-of-00002.safetensors"}})");
    CHECK(contains(error_of([&] { (void)run_directory::open(run / "model/wrong.index.json"); }),
                   "names key 'z' in 'model-00002-of-00002.safetensors', but that file's header has no such key"));

    run.write("outside.safetensors", safetensors_file({{"o", "F32", "[1]", bytes_of<float>({1})}}));
    run.write("model/escape.index.json", R"({"weight_map": {"o": "../outside.safetensors"}})");
    const std::string escape = error_of([&] { (void)run_directory::open(run / "model/escape.index.json"); });
    CHECK(contains(escape, "shard '../outside.safetensors' is refused"));
    numgap::io::read_policy allow;
    allow.allowed_roots.push_back(run.path());
    CHECK(run_directory::open(run / "model/escape.index.json", allow).keys() == std::vector<std::string>{"o"});

    run.write("model/no_map.index.json", R"({"metadata": {}})");
    CHECK(contains(error_of([&] { (void)run_directory::open(run / "model/no_map.index.json"); }),
                   "no \"weight_map\" object"));
    const auto not_a_file = numgap_test::caught_error(
        [] { (void)numgap::io::parse_safetensors_weight_map("{\"weight_map\": {\"a\": 1}}", "m.index.json"); });
    REQUIRE(not_a_file.has_value());
    CHECK(not_a_file->kind() == numgap::error_kind::schema);
    CHECK(not_a_file->where().file == "m.index.json");
    CHECK(not_a_file->where().item == "a");
    CHECK(not_a_file->where().line == 1);
    CHECK(not_a_file->where().column == 22);
}

TEST_CASE("safetensors runs: a .npy reference against bf16 and f16 safetensors targets through compare_runs") {
    numgap_test::temp_directory reference_dir, target_dir;
    // x, a, b exactly representable in bf16 and f16; x off by one unit in the last place of each.
    const std::vector<float> x = {1.0f, -2.0f, 1.5f}, a = {0.5f, 4.0f, -1.0f}, b = {1.0f, 2.0f, 3.0f};
    for (const auto& [key, values] : {std::pair{"x", x}, std::pair{"a", a}, std::pair{"b", b}})
        numgap::io::write_npy(reference_dir / (std::string(key) + ".npy"), values.data(),
                              std::vector<std::int64_t>{3});
    // b is negated in the target: the first divergence.
    target_dir.write("bf16.safetensors",
                     safetensors_file({{"x", "BF16", "[3]", bytes_of<std::uint16_t>({0x3F81, 0xC000, 0x3FC0})},
                                       {"a", "BF16", "[3]", bytes_of<std::uint16_t>({0x3F00, 0x4080, 0xBF80})},
                                       {"b", "BF16", "[3]", bytes_of<std::uint16_t>({0xBF80, 0xC000, 0xC040})}}));
    target_dir.write("f16/f16.safetensors",
                     safetensors_file({{"x", "F16", "[3]", bytes_of<std::uint16_t>({0x3C01, 0xC000, 0x3E00})},
                                       {"a", "F16", "[3]", bytes_of<std::uint16_t>({0x3800, 0x4400, 0xBC00})},
                                       {"b", "F16", "[3]", bytes_of<std::uint16_t>({0xBC00, 0xC000, 0xC200})}}));
    const numgap::metric_set metrics = numgap_test::defaults_and_max_abs();
    const numgap::basic_graph graph = numgap_test::chain_x_a_b();
    const run_directory reference = run_directory::open(reference_dir.path());
    // Not a structured binding: CAPTURE captures `file` in a lambda, which clang 14 refuses for bindings.
    for (const auto& target_file : {std::pair{"bf16.safetensors", 0.0078125}, std::pair{"f16/f16.safetensors", 0.0009765625}}) {
        const char* const file = target_file.first;
        const double ulp = target_file.second;
        CAPTURE(file);
        const run_directory target = run_directory::open(target_dir / file);
        const auto report = numgap::compare_runs(graph, graph, reference, target, metrics);
        REQUIRE(report.groups.size() == 3);
        const auto max_abs = [&](const std::string& node) { return numgap_test::metric_value(report, node, "max_abs"); };
        CHECK(max_abs("x") == ulp);
        CHECK(max_abs("a") == 0.0);
        CHECK(max_abs("b") == 6.0);
        CHECK(report.summary.failed >= 1);
        CHECK(report.summary.first_divergence == "b");
    }
}
} // TEST_SUITE("io")
