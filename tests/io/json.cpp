// Pins down the JSON parser (values, insertion order, exact integers, escapes,
// surrogate pairs, UTF-8, errors with file:line:column, depth limit) and the
// writers (escaping, invalid UTF-8 replacement, shortest round-trip numbers,
// non-finite numbers as strings).
#include <doctest/doctest.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <numgap/io/json.hpp>

#include "temp_directory.hpp"

using numgap::io::json_value;
using numgap::io::parse_json;
using numgap_test::contains;
using numgap_test::error_of;

namespace {
std::string json_error(const std::string& text) {
    return error_of([&] { (void)parse_json(text, "graph.json"); });
}
} // namespace

TEST_SUITE("io") {
TEST_CASE("json: parses every value kind and keeps member order") {
    const json_value root =
        parse_json(R"({"z": 1, "a": [true, false, null, "s", -2.5e1, {}], "m": {"k": []}})", "t.json");
    REQUIRE(root.is_object());
    const auto& members = root.as_object();
    REQUIRE(members.size() == 3);
    CHECK(members[0].key == "z");
    CHECK(members[1].key == "a");
    CHECK(members[2].key == "m");
    const auto& array = root.find("a")->as_array();
    REQUIRE(array.size() == 6);
    CHECK(array[0].as_bool());
    CHECK_FALSE(array[1].as_bool());
    CHECK(array[2].is_null());
    CHECK(array[3].as_string() == "s");
    CHECK(array[4].as_number() == -25.0);
    CHECK(array[5].is_object());
    CHECK(root.find("m")->find("k")->as_array().empty());
    CHECK(root.find("nope") == nullptr);
    CHECK(array[0].find("x") == nullptr);
}

TEST_CASE("json: numbers keep exact integers") {
    const json_value root = parse_json(
        "[42, 42.0, 1e2, -0, 9007199254740993, -9223372036854775808, 9223372036854775808, 0.1]", "n.json");
    const auto& n = root.as_array();
    CHECK(n[0].is_integer());
    CHECK(n[0].as_integer() == 42);
    CHECK_FALSE(n[1].is_integer());
    CHECK(n[1].as_number() == 42.0);
    CHECK_FALSE(n[2].is_integer());
    CHECK(n[3].is_integer());
    CHECK(n[4].as_integer() == 9007199254740993); // not representable as a double
    CHECK(n[5].as_integer() == std::numeric_limits<std::int64_t>::min());
    CHECK_FALSE(n[6].is_integer());
    CHECK(n[6].as_number() == 9223372036854775808.0);
    CHECK(n[7].as_number() == 0.1);
}

TEST_CASE("json: strings decode escapes surrogate pairs and utf8") {
    const json_value root =
        parse_json(R"(["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u4e2d", "\ud83d\ude00", "caf\u00c3", "é中😀"])", "s.json");
    const auto& s = root.as_array();
    CHECK(s[0].as_string() == "a\"b\\c/d\b\f\n\r\t");
    CHECK(s[1].as_string() == "\xc3\xa9\xe4\xb8\xad");
    CHECK(s[2].as_string() == "\xf0\x9f\x98\x80");
    CHECK(s[3].as_string() == "caf\xc3\x83");
    CHECK(s[4].as_string() == "é中😀");
}

TEST_CASE("json: values know their line and column") {
    const json_value root = parse_json("{\n  \"a\": [1,\n    2]\n}", "p.json");
    CHECK(root.line() == 1);
    CHECK(root.column() == 1);
    const json_value& array = *root.find("a");
    CHECK(array.line() == 2);
    CHECK(array.column() == 8);
    CHECK(array.as_array()[1].line() == 3);
    CHECK(array.as_array()[1].column() == 5);
}

TEST_CASE("json: errors carry file line column and reason") {
    CHECK(json_error("{\n  \"a\": 1\n  \"b\": 2\n}") == "graph.json:3:3: expected ',' or '}' after object member, found '\"'");
    CHECK(json_error("[1, 2,]") == "graph.json:1:7: expected a JSON value, found ']'");
    CHECK(json_error("[1 2]") == "graph.json:1:4: expected ',' or ']' after array element, found '2'");
    CHECK(json_error("") == "graph.json:1:1: expected a JSON value, found the end of the file");
    CHECK(json_error("{\"a\": 1} x") == "graph.json:1:10: unexpected text after the JSON value");
    CHECK(json_error("{1: 2}") == "graph.json:1:2: expected a string key in object, found '1'");
    CHECK(json_error("{\"a\" 2}") == "graph.json:1:6: expected ':' after object key, found '2'");
    CHECK(json_error("{\"a\": 1, \"a\": 2}") == "graph.json:1:10: duplicate key \"a\" in object");
    CHECK(contains(json_error("[01]"), "graph.json:1:3: number with a leading zero"));
    CHECK(contains(json_error("[1.]"), "expected a digit after the decimal point"));
    CHECK(contains(json_error("[1e]"), "expected a digit in the exponent"));
    CHECK(contains(json_error("[-]"), "expected a digit in number"));
    CHECK(contains(json_error("[+1]"), "expected a JSON value, found '+'"));
    CHECK(contains(json_error("[1e400]"), "graph.json:1:2: number 1e400 is out of the range of a double"));
    CHECK(contains(json_error("[\"abc"), "unterminated string"));
    CHECK(contains(json_error("[\"a\tb\"]"), "control character (byte 9) inside a string"));
    CHECK(contains(json_error("[\"\\x\"]"), "graph.json:1:3: invalid escape sequence"));
    CHECK(contains(json_error("[\"\\u12g4\"]"), "expected four hex digits after \\u"));
    CHECK(contains(json_error("[\"\\ude00\"]"), "graph.json:1:3: unpaired low surrogate"));
    CHECK(contains(json_error("[\"\\ud83d\"]"), "high surrogate \\u escape not followed by a low surrogate"));
    CHECK(contains(json_error("[\"\\ud83d\\u0041\"]"), "not followed by a low surrogate"));
    CHECK(contains(json_error("[\"\xc3\x28\"]"), "invalid UTF-8"));
    CHECK(contains(json_error("[\"\xed\xa0\x80\"]"), "invalid UTF-8")); // encoded surrogate
    CHECK(contains(json_error("[\"\xc0\xaf\"]"), "invalid UTF-8"));     // overlong
    CHECK(contains(json_error("[tru]"), "expected a JSON value, found 't'"));
}

TEST_CASE("json: strings mixing plain runs, escapes and UTF-8 read whole; errors point at the byte") {
    // Plain runs are copied at once: every kind of break in a run must end it
    // at the right byte, at the start, the middle and the end of a string.
    const std::string long_run(300, 'x');
    const json_value root =
        parse_json("[\"" + long_run + "\\n" + long_run + "\", \"\\t" + long_run + "\", \"" + long_run +
                       "\\u00e9\", \"\xc3\xa9" + long_run + "\xf0\x9f\x98\x80\", \"\", \"a\\\"b\\\\c\"]",
                   "s.json");
    const auto& items = root.as_array();
    REQUIRE(items.size() == 6);
    CHECK(items[0].as_string() == long_run + "\n" + long_run);
    CHECK(items[1].as_string() == "\t" + long_run);
    CHECK(items[2].as_string() == long_run + "\xc3\xa9");
    CHECK(items[3].as_string() == "\xc3\xa9" + long_run + "\xf0\x9f\x98\x80");
    CHECK(items[4].as_string().empty());
    CHECK(items[5].as_string() == "a\"b\\c");
    // The column is that of the offending byte, after a run of 300.
    CHECK(json_error("[\"" + long_run + "\x01\"]") ==
          "graph.json:1:303: control character (byte 1) inside a string; escape it");
    CHECK(contains(json_error("[\"" + long_run + "\\q\"]"), "graph.json:1:303: invalid escape sequence"));
    CHECK(contains(json_error("[\"" + long_run + "\xff\"]"), "graph.json:1:303: invalid UTF-8"));
    CHECK(contains(json_error("[\"" + long_run), "graph.json:1:303: unterminated string"));
}

TEST_CASE("json: nesting is limited") {
    const std::string ok = std::string(256, '[') + std::string(256, ']');
    CHECK(parse_json(ok, "deep.json").is_array());
    const std::string deep = std::string(257, '[') + std::string(257, ']');
    CHECK(contains(error_of([&] { (void)parse_json(deep, "deep.json"); }), "deep.json:1:257: nesting deeper than 256 levels"));
    const std::string hostile(1000000, '[');
    CHECK(contains(error_of([&] { (void)parse_json(hostile, "deep.json"); }), "nesting deeper"));
    CHECK(contains(error_of([&] { (void)parse_json("[[[]]]", "d.json", 2); }), "nesting deeper than 2 levels"));
}

TEST_CASE("json: skips a byte order mark") {
    CHECK(parse_json("\xef\xbb\xbf{\"a\": 1}", "bom.json").find("a")->as_integer() == 1);
}

TEST_CASE("write json string escapes and always emits valid json") {
    std::string out;
    numgap::io::write_json_string(out, std::string("q\"b\\n\n\x01\x7f é", 11));
    CHECK(out == "\"q\\\"b\\\\n\\n\\u0001\\u007f é\"");
    out.clear();
    numgap::io::write_json_string(out, "bad\xff\xc3");
    CHECK(out == "\"bad\\ufffd\\ufffd\"");
    // Round trip through the parser for every byte value.
    std::string all;
    for (int c = 1; c < 128; ++c) all += char(c);
    all += "😀";
    out.clear();
    numgap::io::write_json_string(out, all);
    CHECK(parse_json(out, "rt.json").as_string() == all);
}

TEST_CASE("write json number is shortest round trip and names non finite") {
    const auto text = [](double value) {
        std::string out;
        numgap::io::write_json_number(out, value);
        return out;
    };
    CHECK(text(0.1) == "0.1");
    CHECK(text(100.0) == "100");
    CHECK(text(-0.0) == "-0");
    CHECK(text(1e300) == "1e+300");
    CHECK(text(5e-324) == "5e-324");
    CHECK(text(std::numeric_limits<double>::infinity()) == "\"inf\"");
    CHECK(text(-std::numeric_limits<double>::infinity()) == "\"-inf\"");
    CHECK(text(std::nan("")) == "\"nan\"");
    double value = 1.0;
    for (int i = 0; i < 200; ++i) {
        value = value * -1.37 + 1e-3 / (i + 1);
        const json_value back = parse_json(text(value), "n.json");
        CHECK(back.as_number() == value);
    }
}

TEST_CASE("json: numbers too small for a double read as zero and too large stay errors") {
    const json_value root =
        parse_json("[1e-400, -1e-400, 4e-320, 0.00001e-320, 1000e-330, 5e-324, 0.001e311, 1E-99999999999999999999]",
                   "n.json");
    const auto& n = root.as_array();
    CHECK(n[0].as_number() == 0.0);
    CHECK_FALSE(std::signbit(n[0].as_number()));
    CHECK(n[1].as_number() == 0.0);
    CHECK(std::signbit(n[1].as_number()));
    CHECK(n[2].as_number() == 4e-320); // subnormals keep their nearest value
    CHECK(n[2].as_number() > 0.0);
    CHECK(n[3].as_number() == 0.0);
    CHECK(n[4].as_number() == 0.0);            // 1e-327
    CHECK(n[5].as_number() == std::numeric_limits<double>::denorm_min());
    CHECK(n[6].as_number() == 1e308);
    CHECK(n[7].as_number() == 0.0);
    CHECK_FALSE(n[0].is_integer());
    CHECK(contains(json_error("[1e400]"), "graph.json:1:2: number 1e400 is out of the range of a double"));
    CHECK(contains(json_error("[-0.0001e400]"), "number -0.0001e400 is out of the range of a double"));
    CHECK(contains(json_error("[1000e306]"), "number 1000e306 is out of the range of a double"));
    CHECK(contains(json_error("[1E99999999999999999999]"), "is out of the range of a double"));
}
} // TEST_SUITE("io")
