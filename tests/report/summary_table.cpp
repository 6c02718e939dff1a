// Pins down the CLI summary table: worst groups first (errors, origins, other
// failures, missing, passes), the first divergence and origins called out,
// row limit with a count of the rest.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <numgap/report/analyze_report.hpp>
#include <numgap/report/summary_table.hpp>

#include "sample_report.hpp"

TEST_SUITE("report") {
TEST_CASE("summary_table: worst first, first divergence and origins called out") {
    using numgap::group_status;
    auto report = numgap::test::make_report({{"conv1", group_status::pass},
                                             {"norm2", group_status::fail},
                                             {"add", group_status::fail},
                                             {"relu1", group_status::missing},
                                             {"conv2", group_status::error}});
    numgap::test::edit_row(report.groups, 2, [&](numgap::group_report& row) {
        row.metrics[0].value = 0.1;
    }); // add is worse than norm2 but not the origin
    numgap::test::edit_row(report.groups, 4, [&](numgap::group_report& row) { row.message = "shape mismatch"; });
    numgap::analyze_report(report);
    const std::string table = numgap::format_summary_table(report);
    const auto pos = [&](const std::string& text) { return table.find(text); };
    // The row of `status` whose reference column is `node`.
    const auto row = [&](const std::string& status, const std::string& node) {
        const std::size_t at = table.find("\n" + status + " ");
        REQUIRE_MESSAGE(at != std::string::npos, status);
        std::size_t line = at;
        while ((line = table.find("\n" + status + " ", line)) != std::string::npos) {
            const std::size_t end = table.find('\n', line + 1);
            const std::string text = table.substr(line + 1, end - line - 1);
            if (text.find(" " + node + " ") != std::string::npos) return line;
            line = end;
        }
        FAIL("no " << status << " row for " << node);
        return std::string::npos;
    };
    CHECK(row("error", "conv2") < row("fail", "norm2"));
    CHECK(row("fail", "norm2") < row("fail", "add"));
    CHECK(row("fail", "add") < row("missing", "relu1"));
    CHECK(row("missing", "relu1") < row("pass", "conv1"));
    CHECK(pos("<- first divergence, error origin") != std::string::npos);
    CHECK(pos("shape mismatch") != std::string::npos);
    CHECK(pos("5 groups: 1 passed, 2 failed, 1 missing, 1 errors") != std::string::npos);
    CHECK(pos("first divergence: norm2 (group_norm)") != std::string::npos);
    CHECK(pos("error origins: norm2\n") != std::string::npos);
}

TEST_CASE("summary_table: among non-origin failures the worse value of a >= metric comes first") {
    using numgap::group_status;
    auto report = numgap::test::make_report({{"norm1", group_status::fail},
                                             {"conv2", group_status::fail},
                                             {"norm2", group_status::fail}});
    numgap::test::edit_row(report.groups, 1, [&](numgap::group_report& row) { row.metrics[0].value = 0.9; });
    numgap::test::edit_row(report.groups, 2, [&](numgap::group_report& row) { row.metrics[0].value = 0.2; });
    numgap::analyze_report(report); // norm1 is the only origin (relu1 is looked through)
    const std::string table = numgap::format_summary_table(report);
    CHECK(table.find("norm1") < table.find("norm2"));
    CHECK(table.find("norm2") < table.find("conv2"));
}

TEST_CASE("summary_table: rows beyond max_rows are counted, not dropped silently") {
    auto report = numgap::test::make_report({{"x", numgap::group_status::pass},
                                             {"conv1", numgap::group_status::pass},
                                             {"norm1", numgap::group_status::pass}});
    numgap::analyze_report(report);
    numgap::summary_table_options options;
    options.max_rows = 2;
    const std::string table = numgap::format_summary_table(report, options);
    CHECK(table.find("... 1 more groups") != std::string::npos);
    CHECK(table.find("first divergence: none") != std::string::npos);
    CHECK(table.find("error origins: none") != std::string::npos);
}

TEST_CASE("summary_table: the rows shown are the worst max_rows of the whole ordering, ties in report order") {
    using numgap::group_status;
    // A chain of 300 nodes with random statuses and cosines (many ties).
    std::mt19937 random(7);
    numgap::comparison_report report;
    report.metric_names = {"cosine", "mse"};
    const group_status statuses[] = {group_status::pass, group_status::fail, group_status::missing, group_status::error,
                                     group_status::unmatched};
    for (std::size_t i = 0; i < 300; ++i) {
        report.reference_graph.push_back({"n" + std::to_string(i), "op", {}});
        if (i > 0) report.reference_graph.back().producers.push_back(i - 1);
        const double cosine = 0.5 + 0.1 * double(random() % 4);
        report.groups.push_back(numgap::test::make_group({"n" + std::to_string(i)}, statuses[random() % 5], cosine));
    }
    numgap::analyze_report(report);
    // The order the table promises, as one stable sort of every row.
    std::vector<std::size_t> expected;
    for (std::size_t g = 0; g < report.groups.size(); ++g)
        if (report.groups[g].status != group_status::unmatched) expected.push_back(g);
    std::stable_sort(expected.begin(), expected.end(), [&](std::size_t a, std::size_t b) {
        const auto& x = report.groups[a];
        const auto& y = report.groups[b];
        const int severity_x = numgap::detail::severity(x.status, x.error_origin);
        const int severity_y = numgap::detail::severity(y.status, y.error_origin);
        if (severity_x != severity_y) return severity_x < severity_y;
        if (x.status == group_status::fail) {
            const auto failed = [](const numgap::group_report& g) {
                return std::count_if(g.metrics.begin(), g.metrics.end(), [](const auto& m) { return !m.passed; });
            };
            if (failed(x) != failed(y)) return failed(x) > failed(y);
            const double badness_x = numgap::detail::badness(report.groups, a, "cosine");
            const double badness_y = numgap::detail::badness(report.groups, b, "cosine");
            if (badness_x != badness_y) return badness_x > badness_y;
        }
        return x.order < y.order;
    });
    for (const std::size_t max_rows :
         {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(100), std::size_t(1000)}) {
        numgap::summary_table_options options;
        options.max_rows = max_rows;
        const std::string table = numgap::format_summary_table(report, options);
        // The reference column of each row, between the dashes and the first line that is no row.
        std::vector<std::string> shown;
        std::size_t at = table.find("-\n");
        for (std::size_t line = at + 2; line < table.size();) {
            const std::size_t end = table.find('\n', line);
            const std::string text = table.substr(line, end - line);
            if (text.empty() || text.starts_with("...")) break;
            const std::size_t name = text.find(" n");
            shown.push_back(text.substr(name + 1, text.find(' ', name + 1) - name - 1));
            line = end + 1;
        }
        INFO("max_rows " << max_rows);
        REQUIRE(shown.size() == std::min(max_rows, expected.size()));
        for (std::size_t r = 0; r < shown.size(); ++r)
            CHECK(shown[r] == report.groups[expected[r]].reference_nodes.back());
        if (max_rows < expected.size())
            CHECK(table.find("... " + std::to_string(expected.size() - max_rows) + " more groups") !=
                  std::string::npos);
    }
}

TEST_CASE("summary_table: error origins beyond max_listed_names are counted and point to the reports") {
    std::vector<std::size_t> failing;
    for (std::size_t i = 5; i < 5 + 2 * 30; i += 2) failing.push_back(i); // 30 origins, a pass between each
    auto report = numgap::test::chain_report(200, failing);
    numgap::analyze_report(report);
    REQUIRE(report.summary.origins.size() == 30);
    const std::string table = numgap::format_summary_table(report);
    const std::size_t line = table.find("error origins: node5, node7, ");
    REQUIRE(line != std::string::npos);
    const std::string origins = table.substr(line, table.find('\n', line) - line);
    CHECK(origins.find("node41, node43") != std::string::npos); // the 19th and 20th
    CHECK(origins.find("node45") == std::string::npos);  // the 21st
    CHECK(origins.find("node43 ... and 10 more (see --csv/--json)") != std::string::npos);
    numgap::summary_table_options all;
    all.max_listed_names = 30;
    CHECK(numgap::format_summary_table(report, all).find("node63\n") != std::string::npos);
    CHECK(numgap::format_summary_table(report, all).find("more (see") == std::string::npos);
}

TEST_CASE("summary_table: names with control characters, bidi overrides and invalid UTF-8 are escaped") {
    using numgap::group_status;
    auto report = numgap::test::make_report({{"conv1", group_status::fail}, {"norm1", group_status::pass}});
    const std::string hostile = "x\x1b]0;pwned\x07\r\xe2\x80\xae\xff";
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.reference_nodes = {hostile}; });
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.target_nodes = {hostile}; });
    report.reference_graph[1].name = hostile; // conv1
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.op = "op\x1b[2J"; });
    numgap::test::edit_row(report.groups, 0,
                           [&](numgap::group_report& row) { row.message = "tensor '\x1b[1m' is odd\n"; });
    report.metric_names = {"cosine\x9b", "mse"};
    numgap::test::edit_row(report.groups, 0,
                           [&](numgap::group_report& row) { row.metrics[0].name = report.metric_names[0]; });
    numgap::test::edit_row(report.groups, 1,
                           [&](numgap::group_report& row) { row.metrics[0].name = report.metric_names[0]; });
    numgap::analyze_report(report);
    report.summary.first_divergence = hostile;
    report.summary.origins = {hostile};
    const std::string table = numgap::format_summary_table(report);
    for (std::size_t i = 0; i < table.size(); ++i) {
        const auto byte = static_cast<unsigned char>(table[i]);
        CHECK_MESSAGE((byte >= 0x20 || byte == '\n'), "control byte ", int(byte), " at ", i);
        CHECK(byte != 0x7f);
    }
    CHECK(table.find("x\\x1b]0;pwned\\x07\\x0d\\u202e\\xff") != std::string::npos);
    CHECK(table.find("op\\x1b[2J") != std::string::npos);
    CHECK(table.find("first divergence: x\\x1b]0;pwned") != std::string::npos);
    CHECK(table.find("error origins: x\\x1b]0;pwned") != std::string::npos);
    CHECK(table.find("cosine\\x9b") != std::string::npos);
}

TEST_CASE("summary_table: columns line up by displayed width for wide characters") {
    using numgap::group_status;
    auto report = numgap::test::make_report({{"conv1", group_status::pass}, {"norm1", group_status::pass}});
    numgap::test::edit_row(report.groups, 0,
                           [&](numgap::group_report& row) { row.reference_nodes = {"层层"}; }); // 4 columns, 6 bytes
    numgap::test::edit_row(report.groups, 1, [&](numgap::group_report& row) { row.reference_nodes = {"abcd"}; });
    const std::string table = numgap::format_summary_table(report);
    const auto column_of_target = [&](const std::string& reference, const std::string& target) {
        const std::size_t line = table.find(reference);
        REQUIRE(line != std::string::npos);
        return numgap::terminal_width(
            std::string_view(table).substr(table.rfind('\n', line) + 1, table.find(target, line) - table.rfind('\n', line) - 1));
    };
    CHECK(column_of_target("层层", "conv1") == column_of_target("abcd", "norm1"));
}

TEST_CASE("summary_table: the match column shows strategy, confidence, '?' and repairs, with a legend") {
    using numgap::group_status;
    auto report = numgap::test::make_report(
        {{"conv2", group_status::pass}, {"norm2", group_status::fail}, {"add", group_status::pass}});
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.strategy = "structure"; });
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.confidence = 0.62; });
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.ambiguous_with = {"t_a"}; });
    numgap::test::edit_row(report.groups, 0,
                           [&](numgap::group_report& row) { row.repair = numgap::repair_state::repaired_by_values; });
    numgap::test::edit_row(report.groups, 1, [&](numgap::group_report& row) { row.strategy = "structure"; });
    numgap::test::edit_row(report.groups, 1, [&](numgap::group_report& row) { row.confidence = 0.7; });
    numgap::test::edit_row(report.groups, 1, [&](numgap::group_report& row) { row.ambiguous_with = {"t_b"}; });
    numgap::analyze_report(report);
    const std::string table = numgap::format_summary_table(report);
    CHECK(table.find(" match ") != std::string::npos);
    CHECK(table.find("structure 0.62? repaired") != std::string::npos);
    CHECK(table.find("structure 0.7?") != std::string::npos);
    CHECK(table.find("<- suspect (ambiguous pairing)") != std::string::npos);
    CHECK(table.find("? = ambiguous pairing") != std::string::npos);
    CHECK(table.find("repaired = the tensors chose") != std::string::npos);
    CHECK(table.find("first divergence: none") != std::string::npos);
    CHECK(table.find("suspect (failing, ambiguous pairing not confirmed by the values): norm2") != std::string::npos);
    CHECK(table.find("repaired by values: 1 groups") != std::string::npos);

    // Without ambiguity, no legend and no suspect line.
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.ambiguous_with.clear(); });
    numgap::test::edit_row(report.groups, 0,
                           [&](numgap::group_report& row) { row.repair = numgap::repair_state::none; });
    numgap::test::edit_row(report.groups, 1, [&](numgap::group_report& row) { row.ambiguous_with.clear(); });
    numgap::analyze_report(report);
    const std::string sure = numgap::format_summary_table(report);
    CHECK(sure.find("? = ambiguous") == std::string::npos);
    CHECK(sure.find("suspect") == std::string::npos);
    CHECK(sure.find("first divergence: norm2") != std::string::npos);
}

TEST_CASE("summary_table: the first unmatched reference nodes are named, escaped, with a count of the rest") {
    using numgap::group_status;
    auto report = numgap::test::make_report({{"x", group_status::pass}});
    const std::vector<std::string> unmatched = {"conv1", "norm1", "relu1", "conv2", "norm2\x1b[2J", "add", "out"};
    for (const std::string& name : unmatched) {
        report.groups.push_back(numgap::test::make_group({name}, group_status::unmatched));
        numgap::test::edit_row(report.groups, report.groups.size() - 1,
                               [&](numgap::group_report& row) { row.target_nodes.clear(); });
    }
    report.reference_graph[5].name = "norm2\x1b[2J";
    numgap::analyze_report(report);
    const std::string table = numgap::format_summary_table(report);
    CHECK_MESSAGE(table.find("unmatched reference nodes (not compared): conv1, norm1, relu1, conv2, norm2\\x1b[2J "
                             "... and 2 more\n") != std::string::npos,
                  table);
    CHECK(table.find("add") == std::string::npos); // only the first five are named
    CHECK(table.find('\x1b') == std::string::npos);

    numgap::summary_table_options all;
    all.max_unmatched_names = 10;
    CHECK(numgap::format_summary_table(report, all).find("norm2\\x1b[2J, add, out\n") != std::string::npos);
}

TEST_CASE("summary_table: a run where most dumped reference nodes are unmatched carries a warning line") {
    using numgap::group_status;
    auto report = numgap::test::make_report({{"x", group_status::pass}, {"conv1", group_status::pass}});
    for (const char* name : {"norm1", "relu1", "conv2"}) {
        report.groups.push_back(numgap::test::make_group({name}, group_status::unmatched));
        numgap::test::edit_row(report.groups, report.groups.size() - 1,
                               [&](numgap::group_report& row) { row.target_nodes.clear(); });
    }
    numgap::analyze_report(report); // make_group names a reference tensor: all three were dumped
    CHECK(report.summary.compared_reference == 2);
    CHECK(report.summary.unmatched_reference_dumped == 3);
    std::string table = numgap::format_summary_table(report);
    CHECK_MESSAGE(table.find("warning: only 2 of 5 reference nodes with dumped tensors were compared; 3 are "
                             "unmatched and were not compared") != std::string::npos,
                  table);
    CHECK(table.find("--match") != std::string::npos);
    CHECK(table.find("--map") != std::string::npos);
    CHECK(table.find("--name-rule") != std::string::npos);

    // Unmatched nodes that dumped nothing are no gap in what could be compared.
    for (std::size_t g = 0; g < report.groups.size(); ++g)
        if (report.groups.status(g) == group_status::unmatched)
            numgap::test::edit_row(report.groups, g, [](numgap::group_report& row) { row.reference_tensor.clear(); });
    numgap::analyze_report(report);
    CHECK(report.summary.unmatched_reference_dumped == 0);
    table = numgap::format_summary_table(report);
    CHECK(table.find("warning:") == std::string::npos);
    CHECK(table.find("unmatched reference nodes (not compared): norm1, relu1, conv2\n") != std::string::npos);
}
} // TEST_SUITE("report")
