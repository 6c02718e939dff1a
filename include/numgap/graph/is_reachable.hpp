#pragma once
// numgap::is_reachable(g, from, to): whether a path of one or more edges
// leads from node `from` to node `to` (from's output flows, possibly
// indirectly, into `to`). is_reachable(g, i, i) is true only on a cycle.
// Backward search from `to` that stops as soon as it meets `from`:
// O(N + E) worst case. Throws numgap::error on an out-of-range index.
#include <cstddef>
#include <vector>

#include <numgap/graph/ancestors.hpp>
#include <numgap/graph/concepts.hpp>

namespace numgap {

template <class G>
bool is_reachable(const G& g, std::size_t from, std::size_t to) {
    detail::check_graph<G>();
    detail::check_node_index(g, from, "is_reachable (from)");
    detail::check_node_index(g, to, "is_reachable (to)");
    std::vector<char> seen(numgap::num_nodes(g), 0);
    return detail::mark_ancestors(g, to, seen, from);
}

} // namespace numgap
