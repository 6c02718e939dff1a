#pragma once
// numgap::ancestors(g, node): every node with a path to `node` (its transitive
// producers), `node` itself excluded, in ascending index order.
// Iterative depth-first search over producers: O(N + E) time, O(N) memory,
// no recursion (deep graphs cannot overflow the stack) and it terminates on
// cyclic graphs too. Throws numgap::error when `node` or a producer index is
// out of range.
#include <cstddef>
#include <string>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/graph/concepts.hpp>
#include <numgap/graph/topological_order.hpp>

namespace numgap {
namespace detail {

// Marks every node reachable from `start` by following producer edges.
// Stops early (returning true) when `stop_at` is reached.
template <class G>
bool mark_ancestors(const G& g, std::size_t start, std::vector<char>& seen,
                    std::size_t stop_at = static_cast<std::size_t>(-1)) {
    const std::size_t n = numgap::num_nodes(g);
    std::vector<std::size_t> stack{start};
    while (!stack.empty()) {
        const std::size_t node = stack.back();
        stack.pop_back();
        for (auto raw : numgap::producers(g, node)) {
            const auto producer = static_cast<std::size_t>(raw);
            check_producer_index(g, node, producer, n);
            if (seen[producer]) continue;
            if (producer == stop_at) return true;
            seen[producer] = 1;
            stack.push_back(producer);
        }
    }
    return false;
}

template <class G>
void check_node_index(const G& g, std::size_t node, const char* what) {
    if (node >= numgap::num_nodes(g)) {
        throw error(error_kind::graph, std::string(what) + ": node index " + std::to_string(node) +
                                           " does not exist (the graph has " + std::to_string(numgap::num_nodes(g)) +
                                           " nodes)");
    }
}

} // namespace detail

template <class G>
std::vector<std::size_t> ancestors(const G& g, std::size_t node) {
    detail::check_graph<G>();
    detail::check_node_index(g, node, "ancestors");
    std::vector<char> seen(numgap::num_nodes(g), 0);
    detail::mark_ancestors(g, node, seen);
    std::vector<std::size_t> result;
    for (std::size_t i = 0; i < seen.size(); ++i)
        if (seen[i] && i != node) result.push_back(i);
    return result;
}

} // namespace numgap
