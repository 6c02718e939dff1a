// Pins down what a program gets from a JSON parse error besides the message:
// kind `format` (or `limit` for nesting), the file and the 1-based line and
// byte column of the offending token.
#include <doctest/doctest.h>

#include <string>

#include <numgap/core/error.hpp>
#include <numgap/io/json/parser.hpp>

TEST_SUITE("io") {

namespace {
numgap::error parse_error(const std::string& text, int max_depth = 256) {
    try {
        (void)numgap::io::parse_json(text, "graph.json", max_depth);
    } catch (const numgap::error& failure) {
        return failure;
    }
    FAIL("parse_json accepted " << text);
    return numgap::error("unreachable");
}
} // namespace

TEST_CASE("json parse errors are format errors located at line and column") {
    const numgap::error failure = parse_error("{\n  \"a\": 1\n  \"b\": 2\n}");
    CHECK(failure.kind() == numgap::error_kind::format);
    CHECK(failure.where().file == "graph.json");
    CHECK(failure.where().line == 3);
    CHECK(failure.where().column == 3);
    CHECK_FALSE(failure.where().has_offset());
    CHECK(std::string(failure.what()) == "graph.json:3:3: expected ',' or '}' after object member, found '\"'");

    const numgap::error duplicate = parse_error("{\"a\": 1, \"a\": 2}");
    CHECK(duplicate.kind() == numgap::error_kind::format);
    CHECK(duplicate.where().line == 1);
    CHECK(duplicate.where().column == 10);
}

TEST_CASE("json nesting too deep is a limit error") {
    const numgap::error failure = parse_error("[[[]]]", 2);
    CHECK(failure.kind() == numgap::error_kind::limit);
    CHECK(failure.where().line == 1);
    CHECK(failure.where().column == 3);
}

} // TEST_SUITE
