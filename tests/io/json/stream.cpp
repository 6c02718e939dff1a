// Pins down json_stream: members and elements visited one at a time, values
// parsed in place with their line and column in the whole document, and the
// same errors as parse_json for what it reads.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/io/json/parser.hpp>
#include <numgap/io/json/stream.hpp>

TEST_SUITE("io") {

namespace {
// The error's message, or empty when none is thrown.
std::string message_of_or_empty(auto&& read) {
    try {
        read();
    } catch (const numgap::error& failure) {
        return failure.what();
    }
    return {};
}

std::string message_of(auto&& read) {
    try {
        read();
    } catch (const numgap::error& failure) {
        return failure.what();
    }
    FAIL("no error");
    return {};
}
} // namespace

TEST_CASE("json_stream: walks an object and an array piecewise, values located in the whole document") {
    const std::string text = "\xef\xbb\xbf{\"nodes\": [\n  {\"name\": \"a\"},\n  {\"name\": \"b\", \"x\": [1, 2]}\n],\n"
                             " \"meta\": {\"k\": 1}}\n";
    numgap::io::detail::json_stream stream(text, "g.json");
    REQUIRE(stream.peek_significant() == '{');
    std::vector<std::string> keys, names;
    std::vector<int> lines, columns;
    stream.read_object(1, true, [&](const std::string& key) {
        keys.push_back(key);
        if (key == "nodes") {
            REQUIRE(stream.peek_significant() == '[');
            stream.read_array(2, [&] {
                const numgap::io::json_value node = stream.read_value(2);
                names.push_back(node.find("name")->as_string());
                lines.push_back(node.line());
                columns.push_back(node.column());
            });
        } else {
            CHECK(stream.read_value(1).find("k")->as_integer() == 1);
        }
    });
    stream.finish();
    CHECK(keys == std::vector<std::string>{"nodes", "meta"});
    CHECK(names == std::vector<std::string>{"a", "b"});
    CHECK(lines == std::vector<int>{2, 3});
    CHECK(columns == std::vector<int>{3, 3});
}

TEST_CASE("json_stream: errors read like parse_json's, duplicates only where asked") {
    const auto streamed = [](const std::string& text, bool check_duplicates) {
        return message_of([&] {
            numgap::io::detail::json_stream stream(text, "g.json");
            stream.read_object(1, check_duplicates, [&](const std::string&) { (void)stream.read_value(1); });
            stream.finish();
        });
    };
    const auto tree = [](const std::string& text) {
        return message_of([&] { (void)numgap::io::parse_json(text, "g.json"); });
    };
    for (const std::string bad : {"{\"a\": [1, 2,]}", "{\"a\": 1 \"b\": 2}", "{\"a\": 1}\nx", "{\"a\": \"\\q\"}",
                                  "{\"a\": 1,\n \"a\": 2}", "{\"a\" 1}", "{\"a\": tru}"}) {
        CAPTURE(bad);
        CHECK(streamed(bad, true) == tree(bad));
    }
    CHECK(message_of([] { numgap::io::detail::json_stream stream("  ", "g.json"); }) ==
          tree("  "));
    // Without the check a repeated key is the caller's to find.
    numgap::io::detail::json_stream stream("{\"a\": 1, \"a\": 2}", "g.json");
    int members = 0;
    stream.read_object(1, false, [&](const std::string&) {
        (void)stream.read_value(1);
        ++members;
    });
    CHECK(members == 2);
}

TEST_CASE("json_stream: bound_ahead counts openers from the position on, capped by the bytes left") {
    const std::string text = "{\"a\": [{\"x\": 1}, {\"y\": \"{\"}], \"b\": {}}";
    numgap::io::detail::json_stream stream(text, "g.json");
    CHECK(stream.bound_ahead('{', 1) == 5); // the string's '{' counts: a bound, not a count
    CHECK(stream.bound_ahead('[', 1) == 1);
    CHECK(stream.bound_ahead('{', 10) == text.size() / 10);
    CHECK(stream.bound_ahead('{', 0) == 5);
    CHECK(stream.bound_ahead('(', 1) == 0);
    stream.read_object(1, true, [&](const std::string& key) {
        if (key == "b") CHECK(stream.bound_ahead('{', 1) == 1); // only what is left
        (void)stream.read_value(1);
    });
    CHECK(stream.bound_ahead('{', 1) == 0);
}

TEST_CASE("json_stream: read_plain_integer reads what read_value reads as an integer, else nothing") {
    // Each element read both ways: plain digits give read_value's integer;
    // anything else is left for read_value, whose result or error stands.
    const std::vector<std::string> elements = {"0",
                                               "7",
                                               "16",
                                               " 42",
                                               "\n 3",
                                               "123456789012345678",
                                               "1234567890123456789",
                                               "99999999999999999999",
                                               "007",
                                               "-1",
                                               "-0",
                                               "1.5",
                                               "1e3",
                                               "2E1",
                                               "0.0",
                                               "\"5\"",
                                               "true",
                                               "[1]",
                                               "12x",
                                               "1 2"};
    for (const std::string& element : elements) {
        CAPTURE(element);
        const std::string text = "[" + element + "]";
        const auto read = [&](bool plain_first, std::string& error, std::string& value) {
            numgap::io::detail::json_stream stream(text, "h.json");
            error = message_of_or_empty([&] {
                stream.read_array(1, [&] {
                    if (plain_first)
                        if (const auto plain = stream.read_plain_integer()) {
                            value = "integer " + std::to_string(*plain);
                            return;
                        }
                    const numgap::io::json_value tree = stream.read_value(1);
                    value = tree.is_integer() ? "integer " + std::to_string(tree.as_integer())
                                              : std::string(numgap::io::json_value::describe(tree.type()));
                });
                stream.finish();
            });
        };
        std::string plain_error, plain_value, tree_error, tree_value;
        read(true, plain_error, plain_value);
        read(false, tree_error, tree_value);
        CHECK(plain_error == tree_error);
        CHECK(plain_value == tree_value);
    }
}

TEST_CASE("json_stream: the expected-size hint of read_object changes no result") {
    // 3, 9 and 200 keys (both sides of the few-keys switch), a duplicate at
    // the end or none, hints of 0, too few, exact, too many and absurd.
    for (const int count : {3, 9, 200}) {
        for (const bool duplicate : {false, true}) {
            std::string text = "{";
            for (int i = 0; i < count; ++i)
                text += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": " + std::to_string(i);
            if (duplicate) text += ", \"k1\": 0";
            text += "}";
            std::string expected;
            int expected_members = -1;
            for (const std::size_t hint :
                 {std::size_t(0), std::size_t(2), std::size_t(count), std::size_t(10 * count), std::size_t(1) << 40}) {
                CAPTURE(count);
                CAPTURE(duplicate);
                CAPTURE(hint);
                int members = 0;
                const std::string message = message_of_or_empty([&] {
                    numgap::io::detail::json_stream stream(text, "g.json");
                    stream.read_object(
                        1, true,
                        [&](const std::string&) {
                            (void)stream.read_value(1);
                            ++members;
                        },
                        hint);
                    stream.finish();
                });
                if (expected_members < 0) {
                    expected = message;
                    expected_members = members;
                }
                CHECK(message == expected);
                CHECK(members == expected_members);
                CHECK(message.empty() != duplicate);
            }
        }
    }
}

} // TEST_SUITE("io")
