// Pins down the CSV writer: RFC 4180 quoting (commas, quotes, CR/LF in names),
// CRLF records, exact metric column names, round-trip numbers, statuses.
#include <doctest/doctest.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/report/analyze_report.hpp>
#include <numgap/report/csv.hpp>

#include "sample_report.hpp"

namespace {
// A strict RFC 4180 reader: records end in CRLF; a quoted field may hold
// separators, CR, LF and doubled quotes.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
    std::vector<std::vector<std::string>> records(1);
    std::string field;
    bool quoted = false, was_quoted = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            REQUIRE_MESSAGE(field.empty(), "a quote inside an unquoted field");
            quoted = was_quoted = true;
        } else if (c == ',') {
            records.back().push_back(field);
            field.clear();
            was_quoted = false;
        } else if (c == '\r') {
            REQUIRE_MESSAGE((i + 1 < text.size() && text[i + 1] == '\n'), "a bare CR outside quotes");
            records.back().push_back(field);
            field.clear();
            was_quoted = false;
            ++i;
            records.emplace_back();
        } else {
            REQUIRE_MESSAGE(c != '\n', "a bare LF outside quotes");
            field += c;
        }
    }
    REQUIRE_FALSE(quoted);
    (void)was_quoted;
    REQUIRE(records.back().empty()); // text ends with CRLF
    records.pop_back();
    return records;
}
} // namespace

TEST_SUITE("report") {
TEST_CASE("csv: header has the fixed columns, one column per metric named exactly, then status") {
    auto report = numgap::test::make_report({{"conv1", numgap::group_status::pass}});
    report.metric_names = {"cosine", "mse", "snr_db(x,y)"};
    const auto rows = parse_csv(numgap::to_csv(report));
    REQUIRE(rows.size() == 2);
    const std::vector<std::string> expected = {
        "ref_node", "target_node", "ref_tensor", "target_tensor", "kind",  "strategy",
        "op",       "shape",       "dtype_ref",  "dtype_target",  "quant_ref", "quant_target",
        "count",    "cosine",      "mse",        "snr_db(x,y)",   "status", "error_origin",
        "message",  "confidence",  "ambiguous",  "ambiguous_with", "repair", "suspect",
        "error_kind", "error_file", "error_item", "error_offset", "error_line", "error_column"};
    CHECK(rows[0] == expected);
    CHECK(rows[1].size() == expected.size());
    CHECK(rows[1][7] == "1x8x4x4");
    CHECK(rows[1][16] == "pass");
    CHECK(rows[1][15].empty()); // metric not computed for this group
}

TEST_CASE("csv: names with commas, quotes, CR and LF survive a round trip") {
    numgap::comparison_report report;
    report.metric_names = {"cosine"};
    const std::string nasty = "block.0/attn,\"q\"\r\nproj";
    report.reference_graph = {{nasty, "matmul", {}}, {"b", "add", {0}}};
    auto group = numgap::test::make_group({nasty, "b"}, numgap::group_status::error);
    group.target_nodes = {"t,1", "t\"2"};
    group.message = "tensor 'x' has shape [1, 2] but\nthe other [2]";
    report.groups.push_back(group);
    const std::string text = numgap::to_csv(report);
    const auto rows = parse_csv(text);
    REQUIRE(rows.size() == 2);
    CHECK(rows[1][0] == nasty + "+b");
    CHECK(rows[1][1] == "t,1+t\"2");
    // message and status by column name: later columns follow message.
    const auto column = [&](const std::string& name) {
        return std::size_t(std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin());
    };
    CHECK(rows[1][column("message")] == group.message);
    CHECK(rows[1][column("status")] == "error");
    CHECK(text.find("\"block.0/attn,\"\"q\"\"") != std::string::npos);
}

TEST_CASE("csv: metric values are written so they read back to the same double") {
    auto report = numgap::test::make_report({{"conv1", numgap::group_status::fail}});
    const double values[] = {0.1, 1.0 / 3.0, 5e-324, 1.7976931348623157e308, -0.0};
    for (double value : values) {
        numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.metrics[0].value = value; });
        const auto rows = parse_csv(numgap::to_csv(report));
        const std::string& cell = rows[1][13];
        double read = 1;
        const auto result = std::from_chars(cell.data(), cell.data() + cell.size(), read);
        REQUIRE(result.ptr == cell.data() + cell.size());
        CHECK(read == value);
        CHECK(std::signbit(read) == std::signbit(value));
    }
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) {
        row.metrics[0].value = std::numeric_limits<double>::quiet_NaN();
    });
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) {
        row.metrics[1].value = -std::numeric_limits<double>::infinity();
    });
    auto rows = parse_csv(numgap::to_csv(report));
    CHECK(rows[1][13] == "nan");
    CHECK(rows[1][14] == "-inf");
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) {
        row.metrics[1].value = std::numeric_limits<double>::infinity();
    });
    rows = parse_csv(numgap::to_csv(report));
    CHECK(rows[1][14] == "inf");
}

TEST_CASE("csv: every status is spelled as documented and error_origin is 1 only for origins") {
    using numgap::group_status;
    auto report = numgap::test::make_report({{"conv1", group_status::pass},
                                             {"norm1", group_status::fail},
                                             {"relu1", group_status::missing},
                                             {"conv2", group_status::error},
                                             {"norm2", group_status::unmatched}});
    numgap::analyze_report(report);
    const auto rows = parse_csv(numgap::to_csv(report));
    REQUIRE(rows.size() == 6);
    const char* statuses[] = {"pass", "fail", "missing", "error", "unmatched"};
    for (std::size_t i = 0; i < 5; ++i) {
        CHECK(rows[i + 1][15] == statuses[i]);
        CHECK(rows[i + 1][16] == (i == 1 ? "1" : "0"));
    }
}

TEST_CASE("csv: write_csv writes the file and names it when it cannot") {
    auto report = numgap::test::make_report({{"conv1", numgap::group_status::pass}});
    const auto path = std::filesystem::temp_directory_path() / "numgap_test_report.csv";
    numgap::write_csv(report, path);
    std::ifstream file(path, std::ios::binary);
    std::stringstream content;
    content << file.rdbuf();
    CHECK(content.str() == numgap::to_csv(report));
    std::filesystem::remove(path);
    CHECK_THROWS_WITH_AS(numgap::write_csv(report, "/nonexistent_dir_numgap/r.csv"),
                         doctest::Contains("'/nonexistent_dir_numgap/r.csv'"), numgap::error);
}

TEST_CASE("csv: written in chunks, the text is the same as to_csv's, and write_csv streams it to the file") {
    auto report = numgap::test::chain_report(3000, {100, 2000});
    numgap::analyze_report(report);
    std::string chunk, streamed;
    std::size_t flushes = 0;
    numgap::detail::write_csv_text(report, chunk, [&](std::string& text) {
        CHECK(text.size() >= 4096);
        streamed += text;
        text.clear();
        ++flushes;
    }, 4096);
    streamed += chunk;
    const std::string whole = numgap::to_csv(report);
    CHECK(flushes > 10);
    CHECK(streamed == whole);
    const auto path = std::filesystem::temp_directory_path() / "numgap_test_streamed_report.csv";
    numgap::write_csv(report, path);
    std::ifstream file(path, std::ios::binary);
    std::stringstream content;
    content << file.rdbuf();
    CHECK(content.str() == whole);
    std::filesystem::remove(path);
}

TEST_CASE("csv: text cells that a spreadsheet would read as a formula get a leading quote") {
    // OWASP "CSV Injection": =, +, -, @, TAB, CR (and NUL) as first character.
    const std::string triggers[] = {"=", "+", "-", "@", "\t", "\r", std::string(1, '\0')};
    for (const std::string& trigger : triggers) {
        CAPTURE(int(trigger[0]));
        const std::string formula = trigger + "HYPERLINK(\"http://x\",\"y\")";
        auto report = numgap::test::make_report({{"conv1", numgap::group_status::pass}});
        report.metric_names = {"cosine", trigger + "mse"};
        numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.reference_nodes = {formula}; });
        numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.target_nodes = {formula, "b"}; });
        numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.reference_tensor = formula; });
        numgap::test::edit_row(report.groups, 0,
                               [&](numgap::group_report& row) { row.op = trigger + "cmd|' /C calc'!A0"; });
        numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.message = formula; });
        numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.ambiguous_with = {formula}; });
        const std::string text = numgap::to_csv(report);
        const auto rows = parse_csv(text);
        REQUIRE(rows.size() == 2);
        const auto column = [&](std::string_view name) {
            return static_cast<std::size_t>(std::find(rows[0].begin(), rows[0].end(), name) - rows[0].begin());
        };
        REQUIRE(column("ambiguous_with") < rows[1].size());
        CHECK(rows[0][14] == "'" + trigger + "mse");
        CHECK(rows[1][0] == "'" + formula);
        CHECK(rows[1][1] == "'" + formula + "+b");
        CHECK(rows[1][2] == "'" + formula);
        CHECK(rows[1][6] == "'" + report.groups[0].op);
        CHECK(rows[1][column("message")] == "'" + formula);
        CHECK(rows[1][column("ambiguous_with")] == "'" + formula);
        // The neutralised cell is quoted, so the quote sits right after the field's opening quote.
        CHECK(text.find("\"'" + trigger) != std::string::npos);
    }
}

TEST_CASE("csv: a trigger that is not the first character, and numeric cells, are left alone") {
    auto report = numgap::test::make_report({{"conv1", numgap::group_status::fail}});
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.reference_nodes = {"a=b+c-d@e"}; });
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.metrics[0].value = -0.5; });
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) {
        row.metrics[1].value = -std::numeric_limits<double>::infinity();
    });
    const std::string text = numgap::to_csv(report);
    const auto rows = parse_csv(text);
    CHECK(rows[1][0] == "a=b+c-d@e");
    CHECK(rows[1][13] == "-0.5");
    CHECK(rows[1][14] == "-inf");
    CHECK(text.find(",-0.5,-inf,") != std::string::npos); // unquoted numbers
    CHECK(rows[1][12] == "128");
}

TEST_CASE("csv: a text cell holding ';' is quoted so a semicolon-separated reader keeps it whole") {
    auto report = numgap::test::make_report({{"conv1", numgap::group_status::pass}});
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.reference_nodes = {"a;=1+1"}; });
    const std::string text = numgap::to_csv(report);
    CHECK(text.find("\"a;=1+1\"") != std::string::npos);
    CHECK(parse_csv(text)[1][0] == "a;=1+1");
}

TEST_CASE("csv: confidence, ambiguity, alternatives, repair state and suspect are columns after message") {
    auto report = numgap::test::make_report(
        {{"conv2", numgap::group_status::pass}, {"norm2", numgap::group_status::fail}});
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.strategy = "structure"; });
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.confidence = 0.625; });
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.ambiguous_with = {"t_a", "t,b"}; });
    numgap::test::edit_row(report.groups, 0,
                           [&](numgap::group_report& row) { row.repair = numgap::repair_state::repaired_by_values; });
    numgap::test::edit_row(report.groups, 1, [&](numgap::group_report& row) { row.ambiguous_with = {"t_c"}; });
    numgap::analyze_report(report);
    const auto rows = parse_csv(numgap::to_csv(report));
    REQUIRE(rows.size() == 3);
    const std::size_t confidence = std::size_t(
        std::find(rows[0].begin(), rows[0].end(), "confidence") - rows[0].begin());
    REQUIRE(confidence + 5 < rows[0].size());
    CHECK(rows[0][confidence] == "confidence");
    CHECK(rows[1][confidence] == "0.625");
    CHECK(rows[1][confidence + 1] == "1");
    CHECK(rows[1][confidence + 2] == "t_a+t,b");
    CHECK(rows[1][confidence + 3] == "repaired_by_values");
    CHECK(rows[1][confidence + 4] == "0");
    CHECK(rows[2][confidence] == "1");
    CHECK(rows[2][confidence + 3] == "none");
    CHECK(rows[2][confidence + 4] == "1"); // failing, ambiguous, not confirmed
}

TEST_CASE("csv: an unmatched row has an empty confidence cell, a matched row a number") {
    auto report = numgap::test::make_report(
        {{"conv2", numgap::group_status::pass}, {"norm2", numgap::group_status::unmatched}});
    numgap::test::edit_row(report.groups, 1, [&](numgap::group_report& row) { row.target_nodes.clear(); });
    numgap::test::edit_row(report.groups, 1, [&](numgap::group_report& row) {
        row.confidence.reset();
    }); // as compare_runs writes unmatched rows
    numgap::analyze_report(report);
    const auto rows = parse_csv(numgap::to_csv(report));
    REQUIRE(rows.size() == 3);
    std::size_t confidence = 0;
    while (confidence < rows[0].size() && rows[0][confidence] != "confidence") ++confidence;
    REQUIRE(confidence < rows[0].size());
    CHECK(rows[1][confidence] == "1");
    CHECK(rows[2][confidence].empty());
}
} // TEST_SUITE("report")
