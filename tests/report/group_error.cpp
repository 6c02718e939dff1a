// Pins down error rows a program can act on: the kind and location of the
// numgap::error that stopped a group reach the row (compare_runs), the JSON
// report's "error" object and the CSV's error_* columns — end to end for a
// truncated .npy, and for a hand-built row with every location part.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <numgap/compare/compare_runs.hpp>
#include <numgap/graph/basic_graph.hpp>
#include <numgap/io/json/parser.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/match/match_by_name.hpp>
#include <numgap/metric/metric_set.hpp>
#include <numgap/report/csv.hpp>
#include <numgap/report/json.hpp>

#include "../io/temp_directory.hpp"
#include "sample_report.hpp"

TEST_SUITE("report") {

namespace {
// Reads each <key>.npy of a directory into memory and views it, as a callable
// tensor source; parse errors reach compare_runs untouched.
struct npy_folder {
    std::filesystem::path directory;
    std::map<std::string, std::vector<std::byte>>* bytes;
    std::optional<numgap::tensor_view> operator()(const std::string& key) const {
        const std::filesystem::path path = directory / (key + ".npy");
        std::ifstream file(path, std::ios::binary);
        const std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
        std::vector<std::byte>& stored = (*bytes)[key];
        stored.resize(text.size());
        for (std::size_t i = 0; i < text.size(); ++i) stored[i] = std::byte(static_cast<unsigned char>(text[i]));
        const numgap::io::npy_header header = numgap::io::parse_npy_header(stored, path.string());
        return numgap::io::npy_view(stored, header);
    }
};

const numgap::io::json_value& json_row(const numgap::io::json_value& report, const std::string& node) {
    for (const numgap::io::json_value& row : report.find("groups")->as_array()) {
        const auto& nodes = row.find("ref_nodes")->as_array();
        if (!nodes.empty() && nodes.back().as_string() == node) return row;
    }
    FAIL("no JSON row for " << node);
    return report;
}
} // namespace

TEST_CASE("a truncated npy gives an error row of kind format naming the file in json and csv") {
    numgap_test::temp_directory reference_dir, target_dir;
    const std::vector<float> values{1, 2, 3, 4, 5, 6, 7, 8};
    const std::vector<std::int64_t> shape{8};
    for (const char* key : {"a", "b"}) {
        numgap::io::write_npy(reference_dir / (std::string(key) + ".npy"), values.data(), shape);
        numgap::io::write_npy(target_dir / (std::string(key) + ".npy"), values.data(), shape);
    }
    const std::filesystem::path truncated = target_dir / "b.npy";
    std::filesystem::resize_file(truncated, std::filesystem::file_size(truncated) - 6);

    numgap::basic_graph graph;
    graph.add_node("a", "op", {});
    graph.add_node("b", "op", {0});
    std::map<std::string, std::vector<std::byte>> reference_bytes, target_bytes;
    numgap::compare_options options;
    options.threads = 1; // the sources keep their bytes in one unguarded map
    const auto report = numgap::compare_runs(graph, graph, numgap::match_by_name(graph, graph),
                                             npy_folder{reference_dir.path(), &reference_bytes},
                                             npy_folder{target_dir.path(), &target_bytes},
                                             numgap::metric_set::defaults(), options);

    std::optional<numgap::group_report> row;
    for (const auto& group : report.groups)
        if (group.reference_nodes == std::vector<std::string>{"b"}) row = group;
    REQUIRE(row);
    CHECK(row->status == numgap::group_status::error);
    REQUIRE(row->error_detail);
    CHECK(row->error_detail->kind == numgap::error_kind::format);
    CHECK(row->error_detail->where.file == truncated.string());

    const numgap::io::json_value json = numgap::io::parse_json(numgap::to_json(report), "report.json");
    const numgap::io::json_value* error = json_row(json, "b").find("error");
    REQUIRE(error != nullptr);
    REQUIRE(error->is_object());
    CHECK(error->find("kind")->as_string() == "format");
    CHECK(error->find("file")->as_string() == truncated.string());
    CHECK(error->find("offset")->as_integer() == std::int64_t(std::filesystem::file_size(truncated)));
    CHECK(json_row(json, "a").find("error")->is_null());

    const std::string csv = numgap::to_csv(report);
    CHECK(csv.find(",error_kind,error_file,error_item,error_offset,error_line,error_column\r\n") !=
          std::string::npos);
    CHECK(csv.find(",format," + truncated.string() + ",,") != std::string::npos);
}

TEST_CASE("every known location part of an error row is written and unknown ones are left out") {
    auto report = numgap::test::make_report({{"conv1", numgap::group_status::error}});
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.message = "graph.json:3:7: bad"; });
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) {
        row.error_detail = numgap::group_error{numgap::error_kind::schema,
                                               numgap::error_location{"=graph.json", "nodes[2]", 41, 3, 7}};
    });
    const std::string json = numgap::to_json(report);
    CHECK(json.find(R"("error":{"kind":"schema","file":"=graph.json","item":"nodes[2]","offset":41,"line":3,"column":7}})") !=
          std::string::npos);
    // A file name is a text cell: neutralised like every other one.
    CHECK(numgap::to_csv(report).find(",schema,\"'=graph.json\",nodes[2],41,3,7\r\n") != std::string::npos);

    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) {
        row.error_detail = numgap::group_error{numgap::error_kind::io, numgap::error_location::in_file("x.npy")};
    });
    CHECK(numgap::to_json(report).find(R"("error":{"kind":"io","file":"x.npy"}})") != std::string::npos);
    CHECK(numgap::to_csv(report).find(",io,x.npy,,,,\r\n") != std::string::npos);
}

} // TEST_SUITE
