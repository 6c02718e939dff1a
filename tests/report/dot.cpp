// Pins down the DOT writer: one node per reference node with generated ids,
// every edge, status colours (origin red, unmatched grey dashed), the chosen
// metric's value in the label, escaping of names, and the unknown-metric error.
#include <doctest/doctest.h>

#include <string>

#include <numgap/core/error.hpp>
#include <numgap/report/analyze_report.hpp>
#include <numgap/report/dot.hpp>

#include "sample_report.hpp"

namespace {
std::string line_of(const std::string& dot, const std::string& id) {
    const std::size_t at = dot.find("  " + id + " [");
    REQUIRE_MESSAGE(at != std::string::npos, id);
    return dot.substr(at, dot.find('\n', at) - at);
}
} // namespace

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

TEST_CASE("dot: an ambiguous pairing has a dashed border and says so; a repaired one says so too") {
    using numgap::group_status;
    auto report = numgap::test::make_report(
        {{"conv1", group_status::pass}, {"norm1", group_status::pass}, {"relu1", group_status::fail}});
    report.groups[1].ambiguous_with = {"t_other"};
    report.groups[1].repair = numgap::repair_state::repaired_by_values;
    report.groups[2].ambiguous_with = {"t_other"};
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
