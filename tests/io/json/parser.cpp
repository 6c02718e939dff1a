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

TEST_CASE("json duplicate keys are found however many keys an object has") {
    // The parser compares the first keys one by one and hands over to a hash
    // set beyond them: a duplicate on either side of that change, and across
    // it, is refused at the second occurrence; distinct keys are accepted.
    for (int keys = 1; keys <= 20; ++keys) {
        std::string text = "{";
        for (int k = 0; k < keys; ++k) text += (k ? ",\"k" : "\"k") + std::to_string(k) + "\":" + std::to_string(k);
        CAPTURE(keys);
        CHECK(numgap::io::parse_json(text + "}", "graph.json").as_object().size() == std::size_t(keys));
        for (int first = 0; first < keys; ++first) {
            const std::string duplicated = text + ",\"k" + std::to_string(first) + "\":0}";
            CAPTURE(first);
            const numgap::error failure = parse_error(duplicated);
            CHECK(failure.kind() == numgap::error_kind::format);
            CHECK(failure.where().column == text.size() + 2);
            CHECK(std::string(failure.what()).find("duplicate key \"k" + std::to_string(first) + "\"") !=
                  std::string::npos);
        }
    }
    // Keys longer than a short string's inline buffer, equal but for the last byte.
    const std::string long_key(40, 'x');
    const std::string distinct = "{\"" + long_key + "a\":1,\"" + long_key + "b\":2}";
    CHECK(numgap::io::parse_json(distinct, "graph.json").as_object().size() == 2);
    CHECK(parse_error("{\"" + long_key + "\":1,\"" + long_key + "\":2}").kind() == numgap::error_kind::format);
}

TEST_CASE("json nesting too deep is a limit error") {
    const numgap::error failure = parse_error("[[[]]]", 2);
    CHECK(failure.kind() == numgap::error_kind::limit);
    CHECK(failure.where().line == 1);
    CHECK(failure.where().column == 3);
}

} // TEST_SUITE
