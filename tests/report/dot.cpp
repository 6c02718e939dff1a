// Pins down the DOT writer: one node per reference node with generated ids,
// every edge, status colours (origin red, unmatched grey dashed), the chosen
// metric's value in the label, escaping of names, and the unknown-metric error.
#include <doctest/doctest.h>

#include <string>

#include <numgap/core/error.hpp>
#include <numgap/report/analyze_report.hpp>
#include <numgap/report/dot.hpp>
#include <numgap/report/terminal_text.hpp>

#include "sample_report.hpp"

namespace {
std::string line_of(const std::string& dot, const std::string& id) {
    const std::size_t at = dot.find("  " + id + " [");
    REQUIRE_MESSAGE(at != std::string::npos, id);
    return dot.substr(at, dot.find('\n', at) - at);
}
} // namespace

TEST_SUITE("report") {
TEST_CASE("dot: nodes are coloured by status and labelled with the first thresholded metric") {
    using numgap::group_status;
    auto report = numgap::test::make_report({{"x", group_status::pass},
                                             {"conv1", group_status::pass},
                                             {"norm1", group_status::fail},
                                             {"relu1", group_status::fail},
                                             {"conv2", group_status::missing},
                                             {"norm2", group_status::error}});
    numgap::analyze_report(report);
    const std::string dot = numgap::to_dot(report);
    CHECK(dot.rfind("digraph \"numgap\" {", 0) == 0);
    CHECK(line_of(dot, "n1").find("cosine = 0.99999") != std::string::npos);
    CHECK(line_of(dot, "n1").find("#c8e6c9") != std::string::npos);        // pass
    CHECK(line_of(dot, "n2").find("error origin") != std::string::npos);   // norm1
    CHECK(line_of(dot, "n2").find("#e53935") != std::string::npos);
    CHECK(line_of(dot, "n3").find("#ffcc80") != std::string::npos);        // propagated fail
    CHECK(line_of(dot, "n4").find("missing") != std::string::npos);
    CHECK(line_of(dot, "n5").find("#ce93d8") != std::string::npos);        // error
    CHECK(line_of(dot, "n6").find("unmatched") != std::string::npos);      // add: no group
    CHECK(line_of(dot, "n6").find("dashed") != std::string::npos);
    for (const char* edge : {"n0 -> n1;", "n3 -> n6;", "n5 -> n6;", "n6 -> n7;"})
        CHECK_MESSAGE(dot.find(edge) != std::string::npos, edge);
    CHECK(dot.find("cluster_legend") != std::string::npos);
}

TEST_CASE("dot: a requested metric is used; an unknown one is an error naming the choices") {
    auto report = numgap::test::make_report({{"conv1", numgap::group_status::fail}});
    numgap::analyze_report(report);
    numgap::dot_options options;
    options.metric = "mse";
    CHECK(line_of(numgap::to_dot(report, options), "n1").find("mse = 0.5") != std::string::npos);
    options.metric = "snr";
    CHECK_THROWS_WITH_AS(numgap::to_dot(report, options),
                         doctest::Contains("metric 'snr' is not in the report (its metrics are: cosine, mse)"),
                         numgap::error);
}

TEST_CASE("dot: names with quotes, backslashes and newlines cannot break out of the label") {
    numgap::comparison_report report;
    report.metric_names = {"cosine"};
    report.reference_graph = {{"evil\" -> pwn [color=red]; \\", "op\nx", {}}};
    numgap::analyze_report(report);
    const std::string dot = numgap::to_dot(report);
    CHECK(dot.find("evil\\\" -> pwn [color=red]; \\\\\\nop\\nx") != std::string::npos);
    CHECK(dot.find("\"evil\"") == std::string::npos);
}

TEST_CASE("dot: any name, every byte included, gives DOT with closed labels, valid UTF-8 and no control") {
    auto report = numgap::test::hostile_report();
    numgap::analyze_report(report);
    numgap::dot_options options;
    options.graph_name = std::string("g\"\0\x1b", 4);
    const std::string dot = numgap::to_dot(report, options);
    // Line by line (LF is the only control a DOT file holds): nothing that
    // terminal_text would escape, so no NUL, no control, no invalid UTF-8.
    for (std::size_t start = 0; start < dot.size();) {
        const std::size_t end = dot.find('\n', start);
        const std::string line = dot.substr(start, end - start);
        CHECK_MESSAGE(numgap::terminal_text(line) == line, line);
        start = end + 1;
    }
    // '&' only as "&amp;": Graphviz decodes entities in labels.
    for (std::size_t at = dot.find('&'); at != std::string::npos; at = dot.find('&', at + 1))
        CHECK(dot.compare(at, 5, "&amp;") == 0);
    // Each label ends at its own closing quote: the attributes after it are ours.
    for (std::size_t i = 0; i < report.reference_graph.size(); ++i) {
        const std::string line = line_of(dot, "n" + std::to_string(i));
        std::size_t at = line.find("[label=\"") + 8;
        while (line[at] != '"') at += line[at] == '\\' ? 2 : 1;
        CHECK(line.compare(at, 10, "\", style=\"") == 0);
    }
    CHECK(dot.find("digraph \"g\\\"\\\\x00\\\\x1b\" {") == 0);
    CHECK(dot.find("\\\\x00\\\\x01\\\\x02") != std::string::npos);           // visible, not raw
    CHECK(dot.find("gn\\\\u202e2 \xe5\xb1\x82 \\\\u009b31m") != std::string::npos); // printable UTF-8 kept
    CHECK(dot.find("&amp;#1;&amp;#x1b;") != std::string::npos);
    CHECK(dot.find("\\\\N\\\\G\\\\L\\\\l\\\\r\\\\") != std::string::npos);      // no Graphviz escapes
}

TEST_CASE("dot: an ambiguous pairing has a dashed border and says so; a repaired one says so too") {
    using numgap::group_status;
    auto report = numgap::test::make_report(
        {{"conv1", group_status::pass}, {"norm1", group_status::pass}, {"relu1", group_status::fail}});
    numgap::test::edit_row(report.groups, 1, [&](numgap::group_report& row) { row.ambiguous_with = {"t_other"}; });
    numgap::test::edit_row(report.groups, 1,
                           [&](numgap::group_report& row) { row.repair = numgap::repair_state::repaired_by_values; });
    numgap::test::edit_row(report.groups, 2, [&](numgap::group_report& row) { row.ambiguous_with = {"t_other"}; });
    numgap::analyze_report(report);
    const std::string dot = numgap::to_dot(report);
    CHECK(line_of(dot, "n1").find("ambiguous") == std::string::npos);
    CHECK(line_of(dot, "n1").find("dashed") == std::string::npos);
    CHECK(line_of(dot, "n2").find("\\nambiguous\\nrepaired by values") != std::string::npos);
    CHECK(line_of(dot, "n2").find("rounded,filled,dashed") != std::string::npos);
    CHECK(line_of(dot, "n3").find("ambiguous (suspect)") != std::string::npos);
    CHECK(line_of(dot, "n3").find("error origin") == std::string::npos);
    CHECK(dot.find("legend_ambiguous") != std::string::npos);
}

TEST_CASE("dot: above max_nodes only the first divergence's neighbourhood and the origins are drawn, and it says so") {
    auto report = numgap::test::chain_report(5000, {1200, 1201, 3000});
    numgap::analyze_report(report); // 1200 first divergence and origin, 1201 propagated, 3000 origin
    REQUIRE(report.summary.origins.size() == 2);
    const std::string dot = numgap::to_dot(report);
    // Radius 3 around node 1200 (1197..1203), origin 3000 with its producer and consumer.
    std::vector<std::size_t> drawn;
    for (std::size_t i = 0; i < 5000; ++i)
        if (dot.find("  n" + std::to_string(i) + " [") != std::string::npos) drawn.push_back(i);
    CHECK(drawn == std::vector<std::size_t>{1197, 1198, 1199, 1200, 1201, 1202, 1203, 2999, 3000, 3001});
    CHECK(dot.rfind("// numgap subgraph: 10 of 5000 reference nodes (the neighbourhood of the first divergence", 0) == 0);
    CHECK(dot.find("label=\"subgraph: 10 of 5000 reference nodes") != std::string::npos);
    CHECK(line_of(dot, "n1200").find("error origin") != std::string::npos);
    CHECK(line_of(dot, "n3000").find("error origin") != std::string::npos);
    // Edges only between drawn nodes.
    CHECK(dot.find("  n1196 -> n1197;") == std::string::npos);
    CHECK(dot.find("  n1197 -> n1198;") != std::string::npos);
    CHECK(dot.find("  n2999 -> n3000;") != std::string::npos);
    CHECK(dot.find("  n1203 -> n1204;") == std::string::npos);

    // A budget smaller than the neighbourhood is a hard bound, the divergence first.
    const std::string small = numgap::to_dot(report, {.metric = {}, .graph_name = "numgap", .max_nodes = 4});
    CHECK(small.find("subgraph: 4 of 5000") != std::string::npos);
    CHECK(small.find("  n1200 [") != std::string::npos);
    CHECK(small.find("  n3000 [") == std::string::npos);

    // Everything passing: the first max_nodes nodes in reference order.
    auto passing = numgap::test::chain_report(2500, {});
    numgap::analyze_report(passing);
    const std::string first = numgap::to_dot(passing);
    CHECK(first.find("subgraph: 2000 of 2500") != std::string::npos);
    CHECK(first.find("  n1999 [") != std::string::npos);
    CHECK(first.find("  n2000 [") == std::string::npos);

    // At max_nodes or below, the whole graph and no note.
    auto whole = numgap::test::chain_report(2000, {7});
    numgap::analyze_report(whole);
    const std::string all = numgap::to_dot(whole);
    CHECK(all.rfind("digraph", 0) == 0);
    CHECK(all.find("subgraph:") == std::string::npos);
    CHECK(all.find("  n1999 [") != std::string::npos);
}
} // TEST_SUITE("report")
