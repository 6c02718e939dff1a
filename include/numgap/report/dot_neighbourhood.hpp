#pragma once
// dot_neighbourhood: which reference nodes a DOT graph of a large run shows.
//
// Graphviz lays out a few thousand nodes in seconds but not a million (it
// crashed after 71 s on one), and nobody reads such a picture. Above
// `max_nodes` reference nodes, to_dot (dot.hpp) draws a bounded subgraph
// instead, chosen here in this order until `max_nodes` are taken:
//   1. the nodes of the first divergence's group and every node within
//      `radius` edges of them (producers and consumers, breadth first);
//   2. the nodes of each error origin's group, in reference order, with their
//      direct producers and consumers;
//   3. when the run has neither (everything passed), the first nodes in
//      reference (topological) order.
// Returns the chosen node indices (into report.reference_graph), sorted; all
// nodes when the graph has at most max_nodes.
// Complexity: O(N + E) time and memory. Throws: numgap::error when the
// report's reference graph is inconsistent (group_of_reference_nodes);
// std::bad_alloc.
#include <algorithm>
#include <cstddef>
#include <deque>
#include <numeric>
#include <utility>
#include <vector>

#include <numgap/report/analyze_report.hpp>
#include <numgap/report/comparison_report.hpp>

namespace numgap::detail {

inline std::vector<std::size_t> dot_neighbourhood(const comparison_report& report, std::size_t max_nodes,
                                                  std::size_t radius = 3) {
    const std::size_t n = report.reference_graph.size();
    std::vector<std::size_t> chosen;
    if (n <= max_nodes) {
        chosen.resize(n);
        std::iota(chosen.begin(), chosen.end(), std::size_t(0));
        return chosen;
    }
    // Consumers as one flat array (CSR): a vector per node costs 24 bytes and
    // an allocation each, at a million nodes.
    std::vector<std::size_t> consumer_start(n + 1, 0), consumers;
    for (const report_node& node : report.reference_graph)
        for (std::size_t producer : node.producers) ++consumer_start[producer + 1];
    std::partial_sum(consumer_start.begin(), consumer_start.end(), consumer_start.begin());
    consumers.resize(consumer_start.back());
    {
        std::vector<std::size_t> fill(consumer_start.begin(), consumer_start.end() - 1);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t producer : report.reference_graph[i].producers) consumers[fill[producer]++] = i;
    }

    std::vector<char> taken(n, 0);
    const auto take = [&](std::size_t node) {
        if (taken[node] || chosen.size() >= max_nodes) return false;
        taken[node] = 1;
        chosen.push_back(node);
        return true;
    };
    // Breadth first from `seeds` over edges in both directions, `depth` edges far.
    const auto grow = [&](const std::vector<std::size_t>& seeds, std::size_t depth) {
        std::deque<std::pair<std::size_t, std::size_t>> queue; // node, distance
        for (std::size_t seed : seeds) {
            take(seed);
            queue.emplace_back(seed, 0);
        }
        while (!queue.empty() && chosen.size() < max_nodes) {
            // Not a structured binding: clang 14 cannot capture one in the lambda below.
            const std::size_t node = queue.front().first, distance = queue.front().second;
            queue.pop_front();
            if (distance == depth) continue;
            const auto visit = [&](std::size_t next) {
                if (take(next)) queue.emplace_back(next, distance + 1);
            };
            for (std::size_t producer : report.reference_graph[node].producers) visit(producer);
            for (std::size_t c = consumer_start[node]; c < consumer_start[node + 1]; ++c) visit(consumers[c]);
        }
    };

    const std::vector<std::size_t> group_of = group_of_reference_nodes(report);
    const auto nodes_of_group = [&](std::size_t group) {
        std::vector<std::size_t> nodes;
        for (std::size_t i = 0; i < n; ++i)
            if (group_of[i] == group) nodes.push_back(i);
        return nodes;
    };
    if (report.summary.first_divergence_group) grow(nodes_of_group(*report.summary.first_divergence_group), radius);
    // Origins in reference order: one pass over the nodes, not one per origin.
    for (std::size_t i = 0; i < n && chosen.size() < max_nodes; ++i)
        if (group_of[i] != no_group && report.groups.error_origin(group_of[i]) && !taken[i]) grow({i}, 1);
    if (!report.summary.first_divergence_group)
        for (std::size_t i = 0; i < n && chosen.size() < max_nodes; ++i) take(i);
    std::sort(chosen.begin(), chosen.end());
    return chosen;
}

} // namespace numgap::detail
