// Pins down the explicit-mapping file reader: JSON objects with string or
// array values, CSV with an optional header and RFC 4180 quoting, and errors
// that name the file with the line (and column and key for JSON).
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include <numgap/io/mapping_file.hpp>

#include "temp_directory.hpp"

using numgap_test::contains;
using numgap_test::error_of;
using pairs = std::vector<std::pair<std::string, std::string>>;

TEST_SUITE("io") {
TEST_CASE("mapping_file: a JSON object maps names; an array value maps one reference node to several") {
    const auto mapping = numgap::io::parse_mapping(R"( {"conv1": "/stem/Conv", "ln": ["mean_0", "rsqrt_3"]})",
                                                   "map.json");
    CHECK(mapping == pairs{{"conv1", "/stem/Conv"}, {"ln", "mean_0"}, {"ln", "rsqrt_3"}});
}

TEST_CASE("mapping_file: JSON errors name the file, line, column and key") {
    const std::string wrong_type = error_of([] { numgap::io::parse_mapping("{\"a\": \"x\",\n \"b\": 3}", "map.json"); });
    CHECK(contains(wrong_type, "map.json:2:7"));
    CHECK(contains(wrong_type, "key \"b\""));
    const std::string empty_array = error_of([] { numgap::io::parse_mapping(R"({"b": []})", "map.json"); });
    CHECK(contains(empty_array, "key \"b\": the array of target nodes is empty"));
    const std::string item = error_of([] { numgap::io::parse_mapping(R"({"b": ["t", 1]})", "map.json"); });
    CHECK(contains(item, "every target node must be a string"));
    const std::string syntax = error_of([] { numgap::io::parse_mapping("{\"a\": }", "map.json"); });
    CHECK(contains(syntax, "map.json:1:"));
    const auto located =
        numgap_test::caught_error([] { numgap::io::parse_mapping("{\"a\": \"x\",\n \"b\": 3}", "map.json"); });
    REQUIRE(located.has_value());
    CHECK(located->kind() == numgap::error_kind::schema);
    CHECK(located->where().file == "map.json");
    CHECK(located->where().item == "b");
    CHECK(located->where().line == 2);
    CHECK(located->where().column == 7);
}

TEST_CASE("mapping_file: CSV with an optional header, CRLF, blank lines and quoted names") {
    const auto with_header = numgap::io::parse_mapping(
        "Reference,Target\r\nconv1,/stem/Conv\r\n\r\n\"a,b\",\"say \"\"hi\"\"\"\r\nconv1,extra\n", "map.csv");
    CHECK(with_header == pairs{{"conv1", "/stem/Conv"}, {"a,b", "say \"hi\""}, {"conv1", "extra"}});
    const auto without_header = numgap::io::parse_mapping("ref_x,tgt_x\n", "map.csv");
    CHECK(without_header == pairs{{"ref_x", "tgt_x"}});
}

TEST_CASE("mapping_file: CSV errors name the file and the line") {
    const std::string three = error_of([] { numgap::io::parse_mapping("a,b\nc,d,e\n", "map.csv"); });
    CHECK(contains(three, "map.csv:2: expected two columns"));
    CHECK(contains(three, "found 3"));
    const std::string empty = error_of([] { numgap::io::parse_mapping("a,b\n\n,d\n", "map.csv"); });
    CHECK(contains(empty, "map.csv:3: the reference node name is empty"));
    const std::string open_quote = error_of([] { numgap::io::parse_mapping("\"a,b\n", "map.csv"); });
    CHECK(contains(open_quote, "map.csv:1: a quoted name is not closed"));
    const auto malformed = numgap_test::caught_error([] { numgap::io::parse_mapping("a,b\nc,d,e\n", "map.csv"); });
    REQUIRE(malformed.has_value());
    CHECK(malformed->kind() == numgap::error_kind::format);
    CHECK(malformed->where().file == "map.csv");
    CHECK(malformed->where().line == 2);
    const auto unnamed = numgap_test::caught_error([] { numgap::io::parse_mapping("a,b\n\n,d\n", "map.csv"); });
    REQUIRE(unnamed.has_value());
    CHECK(unnamed->kind() == numgap::error_kind::schema);
    CHECK(unnamed->where().line == 3);
}

TEST_CASE("mapping_file: read_mapping_file names a missing or empty file") {
    const numgap_test::temp_directory dir;
    CHECK(contains(error_of([&] { numgap::io::read_mapping_file(dir / "absent.csv"); }),
                   "cannot read the mapping file"));
    dir.write("empty.csv", "reference,target\n");
    CHECK(contains(error_of([&] { numgap::io::read_mapping_file(dir / "empty.csv"); }), "maps no node"));
    const auto absent = numgap_test::caught_error([&] { numgap::io::read_mapping_file(dir / "absent.csv"); });
    REQUIRE(absent.has_value());
    CHECK(absent->kind() == numgap::error_kind::io);
    CHECK(absent->where().file == (dir / "absent.csv").string());
    dir.write("ok.json", R"({"a": "b"})");
    CHECK(numgap::io::read_mapping_file(dir / "ok.json") == pairs{{"a", "b"}});
}
} // TEST_SUITE("io")
