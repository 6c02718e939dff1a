#pragma once
// Test support for the readers' end-to-end tests: the chain graph x -> a -> b
// they compare over, the default metrics plus max_abs, and a metric's value
// in the group of one reference node of the report.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <numgap/graph/basic_graph.hpp>
#include <numgap/metric/metric_set.hpp>
#include <numgap/report/comparison_report.hpp>

namespace numgap_test {

inline numgap::basic_graph chain_x_a_b() {
    numgap::basic_graph graph;
    graph.add_node("x", "input", {});
    graph.add_node("a", "op_a", {0});
    graph.add_node("b", "op_b", {1});
    return graph;
}

inline numgap::metric_set defaults_and_max_abs() {
    numgap::metric_set metrics = numgap::metric_set::defaults();
    metrics.add(numgap::max_abs{});
    return metrics;
}

// The value of metric `name` of the group whose reference side is exactly
// `node`; fails the test (and returns -1) when there is none.
inline double metric_value(const numgap::comparison_report& report, const std::string& node, const std::string& name) {
    for (const auto& group : report.groups)
        if (group.reference_nodes == std::vector<std::string>{node} && group.find_metric(name))
            return group.find_metric(name)->value;
    FAIL("no " << name << " for " << node);
    return -1.0;
}

} // namespace numgap_test
