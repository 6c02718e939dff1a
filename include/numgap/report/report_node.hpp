#pragma once
// report_node: a snapshot of one reference-graph node kept inside the report.
//
// Why a snapshot: the analysis (first divergence, error origins) and the DOT
// writer need the reference graph's edges after the comparison, and the report
// must outlive the user's graph object and be buildable by hand in tests.
// `comparison_report::reference_graph` lists nodes in topological order and
// `producers` are indices into that list (each smaller than the node's own).
// Complexity: O(1). Throws: nothing.
#include <cstddef>
#include <string>
#include <vector>

namespace numgap {

struct report_node {
    std::string name;
    std::string op;
    std::vector<std::size_t> producers;
};

} // namespace numgap
