// Pins down io/polygraphy_json.hpp (and json_span_reader.hpp beneath it):
// RunResults files written here character by character in each encoding
// Polygraphy has used (LazyArray around ndarray, plain ndarray, the legacy
// type marker, an old runner->iterations object, latin-1 strings, outputs as
// members of the iteration), each parsed into runners, iterations and output
// spans and decoded back to the exact .npy bytes; and hostile files (bad
// base64, broken JSON, wrong types, duplicate outputs, deep nesting, npz
// payloads), each refused with an error naming the file and offset or output.
#include <doctest/doctest.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/io/polygraphy_json.hpp>

#include "polygraphy_builder.hpp"
#include "temp_directory.hpp"

using numgap::io::polygraphy_results;
using numgap_test::contains;
using numgap_test::error_of;

namespace {

std::span<const std::byte> bytes(const std::string& text) {
    return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

polygraphy_results parse(const std::string& text) { return numgap::io::parse_polygraphy_results(bytes(text), "out.json"); }

std::string decode(const std::string& text, const numgap::io::polygraphy_output& output) {
    std::unique_ptr<std::byte[]> storage;
    const auto decoded = numgap::io::decode_polygraphy_array(bytes(text), output, "out.json", "'out.json' output", storage);
    return std::string(reinterpret_cast<const char*>(decoded.data()), decoded.size());
}

// The error parsing `text` gives; it must name the file.
std::string parse_error(const std::string& text) {
    const std::string message = error_of([&] { (void)parse(text); });
    CHECK(contains(message, "'out.json'"));
    return message;
}

} // namespace

TEST_SUITE("io") {
TEST_CASE("polygraphy json: every encoding parses into runners, iterations and outputs that decode to the .npy bytes") {
    const std::string x = numgap_test::npy_of({1.0f, 2.0f, 3.0f}), y = numgap_test::npy_of({-1.5f}, {1, 1});
    using numgap_test::iteration_result;
    for (const auto& encode : {numgap_test::lazy_array, numgap_test::plain_array, numgap_test::legacy_array,
                               numgap_test::latin1_array}) {
        const std::string text = numgap_test::run_results(
            {{"onnxrt-runner-N0-07/01/25-10:00:00", {iteration_result({{"x", encode(x)}, {"y", encode(y)}}, "onnxrt"),
                                                     iteration_result({{"x", encode(y)}}, "onnxrt")}},
             {"trt-runner-N0-07/01/25-10:00:00", {iteration_result({{"y", encode(x)}}, "trt")}}});
        const polygraphy_results results = parse(text);
        REQUIRE(results.runners.size() == 2);
        CHECK(results.runners[0].name == "onnxrt-runner-N0-07/01/25-10:00:00");
        CHECK(results.runners[1].name == "trt-runner-N0-07/01/25-10:00:00");
        REQUIRE(results.runners[0].iterations.size() == 2);
        REQUIRE(results.runners[0].iterations[0].outputs.size() == 2);
        CHECK(results.runners[0].iterations[0].outputs[0].name == "x");
        CHECK(results.runners[0].iterations[0].outputs[1].name == "y");
        CHECK(decode(text, results.runners[0].iterations[0].outputs[0]) == x);
        CHECK(decode(text, results.runners[0].iterations[0].outputs[1]) == y);
        CHECK(decode(text, results.runners[0].iterations[1].outputs[0]) == y);
        CHECK(decode(text, results.runners[1].iterations[0].outputs[0]) == x);
    }
}

TEST_CASE("polygraphy json: the oldest layouts - runners as object members, outputs as iteration members") {
    const std::string x = numgap_test::npy_of({4.0f});
    const std::string text = R"({"runner-a": [{"x": )" + numgap_test::legacy_array(x) +
                             R"(, "runtime": 1e-3, "runner_name": "runner-a"}], "runner-b": [], )"
                             R"("__polygraphy_encoded_RunResults": "polygraphy_serialized_json_type"})";
    const polygraphy_results results = parse(text);
    REQUIRE(results.runners.size() == 2);
    CHECK(results.runners[0].name == "runner-a");
    REQUIRE(results.runners[0].iterations.size() == 1);
    REQUIRE(results.runners[0].iterations[0].outputs.size() == 1);
    CHECK(decode(text, results.runners[0].iterations[0].outputs[0]) == x);
    CHECK(results.runners[1].iterations.empty());
}

TEST_CASE("polygraphy json: hostile files are refused naming the file and the offset or output") {
    const std::string x = numgap_test::npy_of({1.0f});
    const auto one = [&](const std::string& array) {
        return numgap_test::run_results({{"r", {numgap_test::iteration_result({{"x", array}}, "r")}}});
    };
    CHECK(contains(parse_error("[]"), "expected a Polygraphy RunResults object"));
    CHECK(contains(parse_error("{}"), "no runner results"));
    CHECK(contains(parse_error(R"({"lst": 3})"), "the \"lst\" array of runners"));
    CHECK(contains(parse_error(R"({"lst": ["r"]})"), "a [runner name, iteration results] pair"));
    CHECK(contains(parse_error(R"({"lst": [[7, []]]})"), "expected a string"));
    CHECK(contains(parse_error(R"({"lst": [["r", {}]]})"), "list of iteration results of runner 'r'"));
    CHECK(contains(parse_error(R"({"lst": [["r", [{"outputs": {"x": 1}}]]]})"),
                   "output 'x' of runner 'r' is not an encoded array"));
    CHECK(contains(parse_error(R"({"lst": [["r", [{"outputs": {"x": {"array": 5}}}]]]})"), "not an encoded array"));
    CHECK(contains(parse_error(R"({"lst": [["r", [{"outputs": {"x": {"array": "QQ=="}, "x": {"array": "QQ=="}}}]]]})"),
                   "output 'x' twice"));
    const std::string truncated = one(numgap_test::lazy_array(x));
    CHECK(contains(parse_error(truncated.substr(0, truncated.size() / 2)), "at byte offset"));
    CHECK(contains(parse_error(truncated + "x"), "after the end of the JSON document"));
    CHECK(contains(parse_error(R"({"lst": [["r", [{"outputs": {"x": {"array": "a)" "\x01" R"("}}}]]]})"),
                   "control character"));
    CHECK(contains(parse_error(R"({"lst": [["r", [{"runtime": tru}]]]})"), "expected a value"));
    std::string deep = R"({"lst": [["r", [{"runtime": )";
    for (int i = 0; i < 100; ++i) deep += "[";
    CHECK(contains(parse_error(deep), "nested deeper than 64 levels"));

    // Bad payloads are found when decoded, naming the output and the offset.
    const auto decode_error = [&](const std::string& text) {
        const polygraphy_results results = parse(text);
        const std::string message = error_of([&] { (void)decode(text, results.runners[0].iterations[0].outputs[0]); });
        CHECK(contains(message, "'out.json' output"));
        return message;
    };
    CHECK(contains(decode_error(one(R"({"array": "QUJD*A=="})")), "invalid base64 at character 4"));
    CHECK(contains(decode_error(one(R"({"array": "QUJDRA="})")), "not a multiple of 4"));
    CHECK(contains(decode_error(one(R"({"array": "\u0100\u0093"})")), "neither base64 nor latin-1"));
    CHECK(contains(decode_error(one(numgap_test::plain_array("PK\x03\x04 an npz"))), "npz-encoded"));
    numgap::error failure("");
    try {
        (void)decode(one(R"({"array": "QUJD*A=="})"), parse(one(R"({"array": "QUJD*A=="})")).runners[0].iterations[0].outputs[0]);
    } catch (const numgap::error& thrown) {
        failure = thrown;
    }
    CHECK(failure.kind() == numgap::error_kind::format);
    CHECK(failure.where().file == "out.json");
    CHECK(failure.where().item == "x");
    CHECK(failure.where().has_offset());
}
}
