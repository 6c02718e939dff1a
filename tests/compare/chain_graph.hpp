#pragma once
// Test support for tests/compare: a chain graph (each node reads the one
// before), one output tensor per node keyed like the node, op "op_<name>".
#include <string>
#include <vector>

#include <numgap/graph/basic_graph.hpp>

namespace numgap_test {

inline numgap::basic_graph chain_graph(const std::vector<std::string>& names) {
    numgap::basic_graph graph;
    for (std::size_t i = 0; i < names.size(); ++i)
        graph.add_node(names[i], "op_" + names[i], i ? std::vector<std::size_t>{i - 1} : std::vector<std::size_t>{});
    return graph;
}

} // namespace numgap_test
