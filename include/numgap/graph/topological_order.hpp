#pragma once
// numgap::topological_order(g): the nodes of g ordered so that every node comes
// after all of its producers.
//
// The order is deterministic: the lexicographically smallest topological
// order by node index. In particular, when the index order is already
// topological (every graph built with basic_graph::add_node alone), the
// result is 0, 1, ..., n-1, which is detected in one O(N + E) pass, or in
// O(1) plus writing the order when the graph type vouches for it through an
// optional member `bool index_order_is_topological() const` (basic_graph
// does; a type offering it promises in-range producers whenever it says
// true).
// Otherwise Kahn's algorithm with a min-heap: O(N log N + E).
//
// Throws numgap::error when a producer index is out of range (naming the
// node) or when the graph has a cycle (naming the nodes on one cycle; a node
// listing itself as producer is a cycle of length one); its kind is graph and
// where().item that node's name. Never loops forever.
// An empty graph gives an empty order.
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <functional>
#include <queue>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/graph/concepts.hpp>

namespace numgap {
namespace detail {

template <class G>
std::string describe_node(const G& g, std::size_t node) {
    return "'" + std::string(std::string_view(numgap::node_name(g, node))) + "' (index " +
           std::to_string(node) + ")";
}

template <class G>
[[noreturn]] void throw_cycle(const G& g, const std::vector<std::size_t>& remaining_in_degree) {
    // Every node left over still has a producer that is left over, so walking
    // producers from any of them must revisit a node: that node is on a cycle.
    const std::size_t n = remaining_in_degree.size();
    std::size_t node = 0;
    while (remaining_in_degree[node] == 0) ++node;
    std::vector<std::size_t> step_of(n, static_cast<std::size_t>(-1));
    std::vector<std::size_t> walk;
    while (step_of[node] == static_cast<std::size_t>(-1)) {
        step_of[node] = walk.size();
        walk.push_back(node);
        for (auto producer : numgap::producers(g, node)) {
            if (remaining_in_degree[static_cast<std::size_t>(producer)] != 0) {
                node = static_cast<std::size_t>(producer);
                break;
            }
        }
    }
    // walk[step_of[node]..] is the cycle, in consumer -> producer direction.
    std::vector<std::size_t> cycle(walk.begin() + static_cast<std::ptrdiff_t>(step_of[node]), walk.end());
    std::reverse(cycle.begin(), cycle.end());
    std::string path;
    const std::size_t shown = std::min<std::size_t>(cycle.size(), 8);
    for (std::size_t i = 0; i < shown; ++i) path += describe_node(g, cycle[i]) + " -> ";
    path += cycle.size() > shown ? "... -> " + describe_node(g, cycle.front())
                                 : describe_node(g, cycle.front());
    throw error(error_kind::graph,
                "graph has a cycle through node " + describe_node(g, cycle.front()) + ": " + path +
                    "; a node cannot (indirectly) consume its own output",
                error_location::of_item(std::string(std::string_view(numgap::node_name(g, cycle.front())))));
}

template <class G>
void check_producer_index(const G& g, std::size_t node, std::size_t producer, std::size_t n) {
    if (producer >= n) {
        throw error(error_kind::graph,
                    "graph node " + describe_node(g, node) + " lists producer index " + std::to_string(producer) +
                        ", which does not exist (the graph has " + std::to_string(n) + " nodes)",
                    error_location::of_item(std::string(std::string_view(numgap::node_name(g, node)))));
    }
}

} // namespace detail

template <class G>
std::vector<std::size_t> topological_order(const G& g) {
    detail::check_graph<G>();
    const std::size_t n = numgap::num_nodes(g);
    auto identity = [n] {
        std::vector<std::size_t> order(n);
        for (std::size_t node = 0; node < n; ++node) order[node] = node;
        return order;
    };
    if constexpr (requires {
                      { g.index_order_is_topological() } -> std::convertible_to<bool>;
                  }) {
        if (g.index_order_is_topological()) return identity();
    }
    // First pass: validate and test the index order without allocating (the
    // common case needs nothing else).
    bool index_order_is_topological = true;
    for (std::size_t node = 0; node < n; ++node) {
        for (auto raw : numgap::producers(g, node)) {
            const auto producer = static_cast<std::size_t>(raw);
            detail::check_producer_index(g, node, producer, n);
            if (producer >= node) index_order_is_topological = false;
        }
    }
    if (index_order_is_topological) return identity();
    std::vector<std::size_t> in_degree(n, 0);
    for (std::size_t node = 0; node < n; ++node)
        for ([[maybe_unused]] auto raw : numgap::producers(g, node)) ++in_degree[node];
    std::vector<std::size_t> order;
    order.reserve(n);
    std::vector<std::size_t> consumer_offsets(n + 1, 0);
    for (std::size_t node = 0; node < n; ++node)
        for (auto producer : numgap::producers(g, node)) ++consumer_offsets[static_cast<std::size_t>(producer) + 1];
    for (std::size_t i = 0; i < n; ++i) consumer_offsets[i + 1] += consumer_offsets[i];
    std::vector<std::size_t> consumers(consumer_offsets[n]);
    {
        std::vector<std::size_t> cursor(consumer_offsets.begin(), consumer_offsets.end() - 1);
        for (std::size_t node = 0; node < n; ++node)
            for (auto producer : numgap::producers(g, node))
                consumers[cursor[static_cast<std::size_t>(producer)]++] = node;
    }
    std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
    for (std::size_t node = 0; node < n; ++node)
        if (in_degree[node] == 0) ready.push(node);
    while (!ready.empty()) {
        const std::size_t node = ready.top();
        ready.pop();
        order.push_back(node);
        for (std::size_t e = consumer_offsets[node]; e < consumer_offsets[node + 1]; ++e)
            if (--in_degree[consumers[e]] == 0) ready.push(consumers[e]);
    }
    if (order.size() != n) detail::throw_cycle(g, in_degree);
    return order;
}

// position[node] = index of node in `order` (the inverse permutation).
inline std::vector<std::size_t> topological_positions(const std::vector<std::size_t>& order) {
    std::vector<std::size_t> position(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
    return position;
}

} // namespace numgap
