// Pins down the Model Explorer node data: every reference node of a compared
// group gets its group's value, uncompared nodes are absent, and the two
// thresholds put exactly the failing values in red for both rule directions.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <numgap/report/analyze_report.hpp>
#include <numgap/report/model_explorer.hpp>

#include "sample_report.hpp"

TEST_SUITE("report") {
TEST_CASE("model_explorer: results hold every node of compared groups, thresholds follow a >= rule") {
    using numgap::group_status;
    numgap::comparison_report report;
    report.metric_names = {"cosine", "mse"};
    report.reference_graph = numgap::test::residual_graph();
    report.groups.push_back(numgap::test::make_group({"conv1", "norm1"}, group_status::fail, 0.5));
    report.groups.push_back(numgap::test::make_group({"relu1"}, group_status::missing));
    report.groups.push_back(numgap::test::make_group({"conv2"}, group_status::pass, 0.999));
    numgap::analyze_report(report);
    const std::string json = numgap::to_model_explorer(report);
    CHECK(json.rfind("{\"results\":{", 0) == 0);
    CHECK(json.find("\"conv1\":{\"value\":0.5}") != std::string::npos);
    CHECK(json.find("\"norm1\":{\"value\":0.5}") != std::string::npos);
    CHECK(json.find("\"conv2\":{\"value\":0.999}") != std::string::npos);
    CHECK(json.find("\"relu1\"") == std::string::npos);
    // >= 0.99: the red bucket ends just below 0.99 so 0.99 itself is green.
    CHECK(json.find("\"thresholds\":[{\"value\":0.9899999999999999,\"bgColor\":\"#e53935\"},"
                    "{\"value\":1.7976931348623157e+308,\"bgColor\":\"#66bb6a\"}]") !=
          std::string::npos);
}

TEST_CASE("model_explorer: a <= rule makes values up to the threshold green; NaN is written as \"nan\"") {
    auto report = numgap::test::make_report({{"conv1", numgap::group_status::fail}});
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.metrics[1].value = std::nan(""); });
    numgap::analyze_report(report);
    const std::string json = numgap::to_model_explorer(report, "mse");
    CHECK(json.find("\"conv1\":{\"value\":\"nan\"}") != std::string::npos);
    CHECK(json.find("\"thresholds\":[{\"value\":0.001,\"bgColor\":\"#66bb6a\"},") != std::string::npos);
}
} // TEST_SUITE("report")
