// Pins down json_writer: commas and colons at every nesting level, line
// breaks after the comma, escaping and numbers through write_json_string /
// write_json_number, and that what it writes parses back to the same values.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <numgap/io/json/parser.hpp>
#include <numgap/io/json/writer.hpp>

TEST_SUITE("io") {

TEST_CASE("json writer puts commas and colons where they belong") {
    std::string out;
    numgap::io::json_writer json(out);
    json.begin_object();
    json.key("a").integer(1);
    json.key("b").begin_array().integer(-2).number(0.5).boolean(true).null().begin_object().end_object()
        .begin_array().end_array().end_array();
    json.key("c").begin_object().key("d").string("e").key("f").boolean(false).end_object();
    json.key("g").unsigned_integer(18446744073709551615u);
    json.end_object();
    CHECK(json.complete());
    CHECK(out == R"({"a":1,"b":[-2,0.5,true,null,{},[]],"c":{"d":"e","f":false},"g":18446744073709551615})");
}

TEST_CASE("json writer line break starts the next token after its comma") {
    std::string out;
    numgap::io::json_writer json(out);
    json.begin_object().key("x").integer(1).line_break().key("rows").begin_array();
    for (int row = 0; row < 2; ++row) json.line_break().begin_object().key("row").integer(row).end_object();
    json.line_break().end_array().end_object();
    CHECK(out == "{\"x\":1,\n\"rows\":[\n{\"row\":0},\n{\"row\":1}\n]}");
    CHECK(numgap::io::parse_json(out, "rows.json").find("rows")->as_array().size() == 2);
}

TEST_CASE("json writer escapes keys and strings and quotes non finite numbers") {
    std::string out;
    numgap::io::json_writer json(out);
    const std::string hostile("a\"b\\c\n\x01\x7f\xff", 9);
    json.begin_object().key(hostile).string(hostile);
    json.key("nan").number(std::numeric_limits<double>::quiet_NaN());
    json.key("inf").number(std::numeric_limits<double>::infinity());
    json.key("third").number(1.0 / 3.0);
    json.key("names").string_array(std::vector<std::string>{"p", "q"});
    json.end_object();
    CHECK(out == "{\"a\\\"b\\\\c\\n\\u0001\\u007f\\ufffd\":\"a\\\"b\\\\c\\n\\u0001\\u007f\\ufffd\","
                 "\"nan\":\"nan\",\"inf\":\"inf\",\"third\":0.3333333333333333,\"names\":[\"p\",\"q\"]}");
    const numgap::io::json_value root = numgap::io::parse_json(out, "hostile.json");
    CHECK(root.as_object().front().value.as_string() == "a\"b\\c\n\x01\x7f\xef\xbf\xbd");
    CHECK(root.find("third")->as_number() == 1.0 / 3.0);
}

TEST_CASE("json writer is incomplete until every begin has its end") {
    std::string out;
    numgap::io::json_writer json(out);
    CHECK_FALSE(json.complete());
    json.begin_array().begin_array();
    CHECK_FALSE(json.complete());
    json.end_array();
    CHECK_FALSE(json.complete());
    json.end_array();
    CHECK(json.complete());
    CHECK(out == "[[]]");
}

} // TEST_SUITE
