// Pins down the JSON writer: the keys the issue requires, numbers that read
// back to the same double, non-finite values as "inf"/"-inf"/"nan", null
// first_divergence when nothing fails, and escaping of node names.
#include <doctest/doctest.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <numgap/report/analyze_report.hpp>
#include <numgap/io/json.hpp>
#include <numgap/report/json.hpp>

#include "sample_report.hpp"

namespace {
// The raw token after each occurrence of `"key":` (a number, a quoted string, null...).
std::vector<std::string> tokens_after(const std::string& json, const std::string& key) {
    std::vector<std::string> tokens;
    const std::string needle = "\"" + key + "\":";
    for (std::size_t at = json.find(needle); at != std::string::npos; at = json.find(needle, at + 1)) {
        std::size_t begin = at + needle.size();
        std::size_t end = begin;
        if (json[begin] == '"') {
            end = json.find('"', begin + 1) + 1;
        } else {
            while (end < json.size() && std::strchr(",}]\n", json[end]) == nullptr) ++end;
        }
        tokens.push_back(json.substr(begin, end - begin));
    }
    return tokens;
}

double read_number(const std::string& token) {
    if (token == "\"nan\"") return std::numeric_limits<double>::quiet_NaN();
    if (token == "\"inf\"") return std::numeric_limits<double>::infinity();
    if (token == "\"-inf\"") return -std::numeric_limits<double>::infinity();
    double value = 0;
    const auto result = std::from_chars(token.data(), token.data() + token.size(), value);
    REQUIRE_MESSAGE(result.ptr == token.data() + token.size(), "not a JSON number: " << token);
    return value;
}
} // namespace

TEST_SUITE("report") {
TEST_CASE("json: written in chunks, the text is the same as to_json's, and write_json streams it to the file") {
    auto report = numgap::test::chain_report(3000, {100, 2000});
    numgap::analyze_report(report);
    std::string chunk, streamed;
    std::size_t flushes = 0;
    numgap::detail::write_json_text(report, chunk, [&](std::string& text) {
        streamed += text;
        text.clear();
        ++flushes;
    }, 4096);
    streamed += chunk;
    const std::string whole = numgap::to_json(report);
    CHECK(flushes > 10);
    CHECK(streamed == whole);
    CHECK(numgap::io::parse_json(whole, "report.json").find("groups")->as_array().size() == 3000);
    const auto path = std::filesystem::temp_directory_path() / "numgap_test_streamed_report.json";
    numgap::write_json(report, path);
    std::ifstream file(path, std::ios::binary);
    std::stringstream content;
    content << file.rdbuf();
    CHECK(content.str() == whole);
    std::filesystem::remove(path);
}

TEST_CASE("json: summary and group keys required by the issue are present") {
    using numgap::group_status;
    auto report = numgap::test::make_report(
        {{"conv2", group_status::pass}, {"norm2", group_status::fail}, {"add", group_status::fail}});
    numgap::analyze_report(report);
    const std::string json = numgap::to_json(report);
    for (const char* key : {"summary", "groups", "passed", "failed", "unmatched_ref",
                            "unmatched_target", "first_divergence", "origins", "ref_nodes",
                            "target_nodes", "ref_tensor", "target_tensor", "kind", "strategy",
                            "shape", "metrics", "value", "threshold", "passed", "status"})
        CHECK_MESSAGE(json.find("\"" + std::string(key) + "\":") != std::string::npos, key);
    CHECK(tokens_after(json, "first_divergence") == std::vector<std::string>{"\"norm2\""});
    CHECK(json.find("\"origins\":[\"norm2\"]") != std::string::npos);
    CHECK(tokens_after(json, "groups").front() == "3");
    CHECK(tokens_after(json, "failed").front() == "2");
    CHECK(json.find("\"shape\":[1,8,4,4]") != std::string::npos);
    CHECK(tokens_after(json, "status") ==
          std::vector<std::string>{"\"pass\"", "\"fail\"", "\"fail\""});
}

TEST_CASE("json: metric values and thresholds read back to the same double, non-finite as strings") {
    auto report = numgap::test::make_report({{"conv1", numgap::group_status::fail}});
    const double values[] = {0.1,
                             1.0 / 3.0,
                             0.99999999999999989,
                             5e-324,
                             2.2250738585072014e-308,
                             1.7976931348623157e308,
                             -123456.789e-17,
                             std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity()};
    for (double value : values) {
        numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.metrics[0].value = value; });
        numgap::test::edit_row(report.groups, 0,
                               [&](numgap::group_report& row) { row.metrics[1].rule->value = value; });
        const std::string json = numgap::to_json(report);
        const auto value_tokens = tokens_after(json, "value");
        const auto threshold_tokens = tokens_after(json, "threshold");
        REQUIRE(value_tokens.size() == 2);
        REQUIRE(threshold_tokens.size() == 2);
        const double read_value = read_number(value_tokens[0]);
        const double read_threshold = read_number(threshold_tokens[1]);
        if (std::isnan(value)) {
            CHECK(value_tokens[0] == "\"nan\"");
            CHECK(std::isnan(read_threshold));
        } else {
            CHECK(read_value == value);
            CHECK(read_threshold == value);
        }
    }
}

TEST_CASE("json: nothing failing gives first_divergence null and empty origins; no rule gives threshold null") {
    auto report = numgap::test::make_report({{"conv1", numgap::group_status::pass}});
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.metrics[0].rule.reset(); });
    numgap::analyze_report(report);
    const std::string json = numgap::to_json(report);
    CHECK(tokens_after(json, "first_divergence") == std::vector<std::string>{"null"});
    CHECK(json.find("\"origins\":[]") != std::string::npos);
    CHECK(tokens_after(json, "threshold").front() == "null");
}

TEST_CASE("json: node names with quotes, backslashes and control characters are escaped") {
    numgap::comparison_report report;
    report.metric_names = {"cosine"};
    const std::string nasty = "a\"b\\c\nd\x01";
    report.reference_graph = {{nasty, "op", {}}};
    report.groups.push_back(numgap::test::make_group({nasty}, numgap::group_status::pass));
    numgap::analyze_report(report);
    const std::string json = numgap::to_json(report);
    CHECK(json.find("a\\\"b\\\\c\\nd\\u0001") != std::string::npos);
    CHECK(json.find('\x01') == std::string::npos);
}

TEST_CASE("json: the whole report parses as strict JSON and reads back to the same values") {
    using numgap::group_status;
    auto report = numgap::test::make_report(
        {{"conv2", group_status::pass}, {"norm2", group_status::fail}, {"add", group_status::missing}});
    numgap::test::edit_row(report.groups, 0,
                           [&](numgap::group_report& row) { row.metrics[0].value = 0.99999999999999989; });
    numgap::test::edit_row(report.groups, 1, [&](numgap::group_report& row) {
        row.metrics[1].value = std::numeric_limits<double>::infinity();
    });
    numgap::test::edit_row(report.groups, 2,
                           [&](numgap::group_report& row) { row.message = "target tensor 'add' was not dumped"; });
    numgap::analyze_report(report);
    const auto root = numgap::io::parse_json(numgap::to_json(report), "report.json");
    const auto* summary = root.find("summary");
    REQUIRE(summary != nullptr);
    CHECK(summary->find("failed")->as_number() == 1);
    CHECK(summary->find("missing")->as_number() == 1);
    CHECK(summary->find("first_divergence")->as_string() == "norm2");
    const auto& groups = root.find("groups")->as_array();
    REQUIRE(groups.size() == 3);
    CHECK(groups[0].find("metrics")->find("cosine")->find("value")->as_number() == 0.99999999999999989);
    CHECK(groups[1].find("metrics")->find("mse")->find("value")->as_string() == "inf");
    CHECK(groups[1].find("metrics")->find("mse")->find("comparison")->as_string() == "<=");
    CHECK(groups[1].find("error_origin")->as_bool());
    CHECK(groups[2].find("status")->as_string() == "missing");
    CHECK(groups[2].find("message")->as_string() == "target tensor 'add' was not dumped");
    CHECK(groups[2].find("metrics")->as_object().empty());
}

TEST_CASE("json: ambiguity, alternatives, repair state and suspects are fields of groups and summary") {
    using numgap::group_status;
    auto report = numgap::test::make_report({{"conv2", group_status::pass}, {"norm2", group_status::fail}});
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.ambiguous_with = {"t_a"}; });
    numgap::test::edit_row(report.groups, 0,
                           [&](numgap::group_report& row) { row.repair = numgap::repair_state::repaired_by_values; });
    numgap::test::edit_row(report.groups, 1, [&](numgap::group_report& row) { row.ambiguous_with = {"t_b", "t_c"}; });
    numgap::analyze_report(report);
    const auto root = numgap::io::parse_json(numgap::to_json(report), "report.json");
    const auto& groups = root.find("groups")->as_array();
    REQUIRE(groups.size() == 2);
    CHECK(groups[0].find("ambiguous")->as_bool());
    CHECK(groups[0].find("repair")->as_string() == "repaired_by_values");
    CHECK_FALSE(groups[0].find("suspect")->as_bool());
    REQUIRE(groups[1].find("ambiguous_with")->as_array().size() == 2);
    CHECK(groups[1].find("ambiguous_with")->as_array()[1].as_string() == "t_c");
    CHECK(groups[1].find("repair")->as_string() == "none");
    CHECK(groups[1].find("suspect")->as_bool());
    const auto* summary = root.find("summary");
    CHECK(summary->find("repaired")->as_number() == 1);
    REQUIRE(summary->find("suspects")->as_array().size() == 1);
    CHECK(summary->find("suspects")->as_array()[0].as_string() == "norm2");
    CHECK(summary->find("first_divergence")->is_null());
}

TEST_CASE("json: an unmatched row's confidence is null, a matched row's a number") {
    using numgap::group_status;
    auto report = numgap::test::make_report({{"conv2", group_status::pass}, {"norm2", group_status::unmatched}});
    numgap::test::edit_row(report.groups, 1, [&](numgap::group_report& row) { row.target_nodes.clear(); });
    numgap::test::edit_row(report.groups, 1, [&](numgap::group_report& row) {
        row.confidence.reset();
    }); // as compare_runs writes unmatched rows
    numgap::analyze_report(report);
    const auto root = numgap::io::parse_json(numgap::to_json(report), "report.json");
    const auto& groups = root.find("groups")->as_array();
    REQUIRE(groups.size() == 2);
    CHECK(groups[0].find("confidence")->as_number() == 1);
    REQUIRE(groups[1].find("confidence") != nullptr);
    CHECK(groups[1].find("confidence")->is_null());
}
} // TEST_SUITE("report")
