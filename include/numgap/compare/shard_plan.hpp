#pragma once
// plan_shards: which of N shards compares each match group of a comparison,
// and which shard reports each unmatched node (`numgap compare --shard I/N`,
// compare_shard.hpp; `numgap merge` puts the pieces back together).
//
// Units. The repair pass (repair_pairings.hpp) looks at a failing ambiguous
// group together with the groups and unmatched target nodes its
// ambiguous_with names, and may move nodes between them; for a shard to
// reach exactly the result of the whole comparison, all of these must be
// compared by one shard. So groups are joined into units: two groups share a
// unit when they share a reference or a target node (output or not), or
// when one's ambiguous_with names a target node the other holds or also
// names. Almost every unit is a single group.
// Balance. A unit weighs the sum of group_bytes over its groups (the caller's
// estimate of both sides' tensor bytes, from manifests and headers; never
// the data). Units are taken heaviest first, ties by their smallest group
// index, and each goes to the shard with the fewest bytes so far, ties to the
// lowest shard index (greedy longest-processing-time: at most 4/3 of the best
// possible largest shard). The plan depends only on the match result and the
// weights, so every machine computes the same one.
// Nodes. An unmatched row is reported by the shard whose unit holds its node
// (a node of a group, or an unmatched target node a group's ambiguous_with
// names): only that shard's repair pass can change it. Every other node is
// reported by shard 0; every shard computes such a row alike.
// Complexity: O(groups·α + nodes + Σ|ambiguous_with| + units·log units).
// Throws: numgap::error (kind usage) for shards == 0; (kind graph) for a
// node index out of range or group_bytes of the wrong length; std::bad_alloc.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/match/match_result.hpp>

namespace numgap {

struct shard_plan {
    std::size_t shards = 1;
    std::vector<std::size_t> group_shard;          // per match group
    std::vector<std::size_t> reference_node_shard; // per reference node (graph index)
    std::vector<std::size_t> target_node_shard;    // per target node (graph index)
    std::vector<std::uint64_t> shard_bytes;        // the weight each shard received
};

namespace detail {
inline constexpr std::size_t no_unit = std::numeric_limits<std::size_t>::max();
// Byte totals saturate here: partial reports store them as JSON integers (int64).
inline constexpr auto most_shard_bytes = std::uint64_t(std::numeric_limits<std::int64_t>::max());

// Union-find over groups, with path halving; the smaller index becomes the
// root so a unit's root is its smallest group index.
inline std::size_t unit_root(std::vector<std::size_t>& parent, std::size_t g) noexcept {
    while (parent[g] != g) {
        parent[g] = parent[parent[g]];
        g = parent[g];
    }
    return g;
}
inline void join_units(std::vector<std::size_t>& parent, std::size_t a, std::size_t b) noexcept {
    a = unit_root(parent, a);
    b = unit_root(parent, b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
}

inline void check_node_index(std::size_t node, std::size_t count, const char* side, std::size_t group) {
    if (node >= count)
        throw error(error_kind::graph,
                    "match group " + std::to_string(group) + " names " + side + " node " + std::to_string(node) +
                        ", but the graph has " + std::to_string(count) + " nodes",
                    error_location::of_item("group " + std::to_string(group)));
}
} // namespace detail

inline shard_plan plan_shards(const match_result& matches, std::size_t reference_nodes, std::size_t target_nodes,
                              std::span<const std::uint64_t> group_bytes, std::size_t shards) {
    if (shards == 0)
        throw error(error_kind::usage, "a comparison cannot be split into 0 shards", error_location::of_item("shards"));
    const std::size_t groups = matches.groups.size();
    if (group_bytes.size() != groups)
        throw error(error_kind::graph,
                    "plan_shards got " + std::to_string(group_bytes.size()) + " group weights for " +
                        std::to_string(groups) + " match groups",
                    error_location::of_item("group_bytes"));
    std::vector<std::size_t> parent(groups);
    std::iota(parent.begin(), parent.end(), std::size_t(0));
    // The first group holding (or naming, for targets) each node; later ones join its unit.
    std::vector<std::size_t> reference_holder(reference_nodes, detail::no_unit);
    std::vector<std::size_t> target_holder(target_nodes, detail::no_unit);
    auto claim = [&](std::vector<std::size_t>& holder, std::size_t node, std::size_t g) {
        if (holder[node] == detail::no_unit) holder[node] = g;
        else detail::join_units(parent, holder[node], g);
    };
    for (std::size_t g = 0; g < groups; ++g) {
        const match_group& group = matches.groups[g];
        for (std::size_t node : group.reference_nodes) {
            detail::check_node_index(node, reference_nodes, "reference", g);
            claim(reference_holder, node, g);
        }
        for (std::size_t node : group.target_nodes) {
            detail::check_node_index(node, target_nodes, "target", g);
            claim(target_holder, node, g);
        }
        detail::check_node_index(group.target_output_node, target_nodes, "target", g);
        claim(target_holder, group.target_output_node, g);
    }
    // Candidates after every group's own nodes, so a candidate held by a later group joins it too.
    for (std::size_t g = 0; g < groups; ++g)
        for (std::size_t candidate : matches.groups[g].ambiguous_with) {
            detail::check_node_index(candidate, target_nodes, "target", g);
            claim(target_holder, candidate, g);
        }

    std::vector<std::uint64_t> unit_bytes(groups, 0);
    for (std::size_t g = 0; g < groups; ++g) {
        std::uint64_t& total = unit_bytes[detail::unit_root(parent, g)];
        // Saturating: a hostile manifest's shapes must not wrap the balance around.
        total = group_bytes[g] > detail::most_shard_bytes - total
                    ? detail::most_shard_bytes
                    : total + group_bytes[g];
    }
    std::vector<std::size_t> units;
    for (std::size_t g = 0; g < groups; ++g)
        if (detail::unit_root(parent, g) == g) units.push_back(g);
    std::sort(units.begin(), units.end(), [&](std::size_t a, std::size_t b) {
        return unit_bytes[a] != unit_bytes[b] ? unit_bytes[a] > unit_bytes[b] : a < b;
    });

    shard_plan plan;
    plan.shards = shards;
    plan.shard_bytes.assign(shards, 0);
    std::vector<std::size_t> unit_shard(groups, 0);
    for (std::size_t unit : units) {
        // min_element returns the first of equal minima: ties go to the lowest shard index.
        const std::size_t lightest =
            std::size_t(std::min_element(plan.shard_bytes.begin(), plan.shard_bytes.end()) - plan.shard_bytes.begin());
        unit_shard[unit] = lightest;
        std::uint64_t& total = plan.shard_bytes[lightest];
        total = unit_bytes[unit] > detail::most_shard_bytes - total
                    ? detail::most_shard_bytes
                    : total + unit_bytes[unit];
    }
    plan.group_shard.resize(groups);
    for (std::size_t g = 0; g < groups; ++g) plan.group_shard[g] = unit_shard[detail::unit_root(parent, g)];
    plan.reference_node_shard.assign(reference_nodes, 0);
    for (std::size_t node = 0; node < reference_nodes; ++node)
        if (reference_holder[node] != detail::no_unit)
            plan.reference_node_shard[node] = plan.group_shard[reference_holder[node]];
    plan.target_node_shard.assign(target_nodes, 0);
    for (std::size_t node = 0; node < target_nodes; ++node)
        if (target_holder[node] != detail::no_unit)
            plan.target_node_shard[node] = plan.group_shard[target_holder[node]];
    return plan;
}

} // namespace numgap
