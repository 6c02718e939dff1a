#pragma once
// analyze_report: fills comparison_report::summary (counts, first divergence,
// error origins) and each group's `order` and `error_origin`.
//
// Definitions (they are what the user reads, so they are precise):
// - A group's order is the topological position, in `reference_graph`, of its
//   last reference node. Unmatched target rows have no reference node and
//   order SIZE_MAX.
// - The first divergence is the `fail` group with the smallest order; it is
//   named by that last reference node. `error` groups are not divergences: they
//   say the data could not be compared, not that it differs.
// - A `fail` group G is an error origin when no *nearest compared ancestor* of
//   G fails in a group earlier than G. Walking up the reference edges from G's
//   nodes, a node in a `pass` group stops the walk (its output is fine, so
//   error did not flow through it), a node in a `fail` group whose order is
//   smaller than G's means G's error may be propagated, and anything else (a
//   node in a `fail` group whose order is larger than G's, an unmatched node,
//   a missing dump, an error group) is looked through, because it tells
//   nothing about G's input — dumps are often partial. Rule in one sentence:
//   a failing group is an error origin unless walking up from its nodes —
//   stopping at passing groups and looking through unmatched nodes and
//   missing, error and later-ordered failing groups — reaches a failing group
//   with a smaller order. Consequence: the first divergence is always an
//   origin, so a report with a divergence always has at least one origin.
// - Ambiguity: a `fail` group is *suspect* when its pairing is ambiguous
//   (non-empty ambiguous_with) and the values did not settle it: neither
//   repair == confirmed_by_values nor fails_every_candidate, i.e. not every
//   candidate of its ambiguity class was compared against its reference and
//   found failing too. A repaired row is settled the same way: a broken node
//   whose matcher pairing was wrong, repaired by values (its twin now
//   passes) and failing against every candidate is named, not suspect. A
//   suspect group is never the first divergence nor an origin, and walks
//   look through it like an unmatched node: a failure that only a guessed
//   pairing shows may be the guess's fault. Rule in one sentence: an
//   ambiguous failing pair is named exactly when the values show it fails
//   against every candidate, repaired or not. Suspect groups are
//   listed in summary.suspect_groups (in report order) and marked `suspect`;
//   they still count as failed.
// - Coverage: compared_reference counts the reference nodes of pass/fail
//   groups, unmatched_reference_dumped the unmatched reference nodes whose
//   row names a reference tensor (compare_runs sets it when the run holds the
//   node's tensor); mostly_unmatched(summary) is true when the second is
//   larger, i.e. more than half of the dumped reference nodes were not
//   compared.
// Complexity: O(N + E + G log G) in all (N nodes, E edges, G groups): the
// walks of every failing group are one pass in topological order (the
// smallest failing order above each node), not a walk per group.
// Throws: numgap::error when a group names a reference node that is not in
// `reference_graph`, when a node's producer index is out of range or not
// earlier than the node (the snapshot must be topologically ordered), or when
// two groups claim the same reference node.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/key_index.hpp>
#include <numgap/report/comparison_report.hpp>

namespace numgap {

namespace detail {
inline constexpr std::size_t no_group = std::numeric_limits<std::size_t>::max();

// Maps each reference_graph node to the group holding it (no_group if none)
// and checks the snapshot's invariants; shared with the DOT writer.
inline std::vector<std::size_t> group_of_reference_nodes(const comparison_report& report) {
    const std::vector<report_node>& nodes = report.reference_graph;
    if (nodes.size() >= max_key_positions)
        throw error(error_kind::limit, "report's reference graph has more than 2^31 - 1 nodes");
    positional_key_index index_of([&](std::size_t i) -> const std::string& { return nodes[i].name; }, nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (!index_of.insert(nodes[i].name, i).second)
            throw error(error_kind::graph, "report's reference graph lists node '" + nodes[i].name + "' twice",
                        error_location::of_item(nodes[i].name));
        for (std::size_t producer : nodes[i].producers)
            if (producer >= i)
                throw error(error_kind::graph,
                            "report's reference graph is not in topological order: node '" +
                            nodes[i].name + "' has producer index " + std::to_string(producer) +
                                " which is not earlier than its own index " + std::to_string(i),
                            error_location::of_item(nodes[i].name));
    }
    std::vector<std::size_t> group_of(nodes.size(), no_group);
    for (std::size_t g = 0; g < report.groups.size(); ++g) {
        // Unmatched target rows name no reference node.
        for (const std::string_view name : report.groups.reference_nodes(g)) {
            const std::optional<std::uint32_t> found = index_of.find(name);
            if (!found)
                throw error(error_kind::graph,
                            "report group " + std::to_string(g) + " names reference node '" + std::string(name) +
                                "', which is not in the report's reference graph",
                            error_location::of_item(std::string(name)));
            if (group_of[*found] != no_group)
                throw error(error_kind::graph,
                            "reference node '" + std::string(name) + "' belongs to two report groups (" +
                                std::to_string(group_of[*found]) + " and " + std::to_string(g) + ")",
                            error_location::of_item(std::string(name)));
            group_of[*found] = g;
        }
    }
    return group_of;
}

// analyze_report with `group_of` (group_of_reference_nodes' result) given by
// a caller that made the snapshot and the rows and knows it already
// (build_report: a hash lookup of every reference node's name saved).
inline void analyze_grouped_report(comparison_report& report, const std::vector<std::size_t>& group_of) {
    const std::vector<report_node>& nodes = report.reference_graph;
    NUMGAP_ASSERT(group_of.size() == nodes.size());

    report_rows& rows = report.groups;
    report_summary summary;
    // order, error_origin, suspect per row, written back at the end.
    std::vector<std::size_t> order(rows.size(), detail::no_group);
    std::vector<char> suspect(rows.size(), 0), origin(rows.size(), 0);
    for (std::size_t g = 0; g < rows.size(); ++g) {
        const group_status status = rows.status(g);
        suspect[g] = status == group_status::fail && rows.ambiguous(g) &&
                     rows.repair(g) != repair_state::confirmed_by_values && !rows.fails_every_candidate(g);
        if (rows.repair(g) == repair_state::repaired_by_values) ++summary.repaired;
        const std::size_t reference_nodes = rows.reference_nodes(g).size();
        switch (status) {
        case group_status::pass: ++summary.passed; break;
        case group_status::fail: ++summary.failed; break;
        case group_status::missing: ++summary.missing; break;
        case group_status::error: ++summary.errors; break;
        case group_status::unmatched:
            if (reference_nodes != 0) {
                summary.unmatched_reference += reference_nodes;
                if (!rows.reference_tensor(g).empty()) summary.unmatched_reference_dumped += reference_nodes;
            } else summary.unmatched_target += rows.target_nodes(g).size();
            break;
        }
        if (status != group_status::unmatched) ++summary.groups;
        if (rows.compared(g)) summary.compared_reference += reference_nodes;
    }
    // Nodes are in topological order, so the last node of a group is its largest
    // index; a row naming no reference node keeps no_group.
    for (std::size_t node = 0; node < nodes.size(); ++node)
        if (group_of[node] != detail::no_group) order[group_of[node]] = node;

    std::vector<std::size_t> failing;
    for (std::size_t g = 0; g < rows.size(); ++g) {
        if (suspect[g]) summary.suspect_groups.push_back(g);
        else if (rows.status(g) == group_status::fail) failing.push_back(g);
    }
    std::sort(failing.begin(), failing.end(),
              [&](std::size_t a, std::size_t b) { return order[a] != order[b] ? order[a] < order[b] : a < b; });

    // The name of row g's last reference node, by its order when it has one.
    const auto last_reference_name = [&](std::size_t g) {
        const report_rows::text_list names = rows.reference_nodes(g);
        return order[g] < nodes.size() ? nodes[order[g]].name
               : names.empty()         ? std::string()
                                       : std::string(names.back());
    };
    if (!failing.empty()) {
        summary.first_divergence_group = failing.front();
        summary.first_divergence = last_reference_name(failing.front());
    }

    // Whether a failing group's error can come from an earlier failing group,
    // for every group in one pass in topological order: earliest_above[n] is
    // the smallest order of a failing (not suspect) group whose values can
    // reach node n through its producers, walking up through every node that
    // is not in a passing group (a passing group's values were checked: the
    // walk stops there). G propagates an earlier error when that minimum over
    // G's own nodes is below G's order. Only an earlier group counts: with a
    // non-convex group (A and C in G1, B in G2, A->B->C) each reaches the
    // other, and counting both would leave the divergence with no origin. A
    // walk per failing group was O(failing x nodes): minutes for a long model
    // whose every layer after a divergence fails.
    std::vector<std::size_t> earliest_above(nodes.size(), detail::no_group);
    for (std::size_t node = 0; node < nodes.size(); ++node) {
        std::size_t earliest = detail::no_group;
        for (const std::size_t producer : nodes[node].producers) {
            if (const std::size_t owner = group_of[producer]; owner != detail::no_group) {
                const group_status upstream = rows.status(owner);
                if (upstream == group_status::pass) continue;
                if (upstream == group_status::fail && !suspect[owner]) earliest = std::min(earliest, order[owner]);
            }
            earliest = std::min(earliest, earliest_above[producer]);
        }
        earliest_above[node] = earliest;
    }
    std::vector<std::size_t> earliest_of_group(rows.size(), detail::no_group);
    for (std::size_t node = 0; node < nodes.size(); ++node)
        if (const std::size_t g = group_of[node]; g != detail::no_group)
            earliest_of_group[g] = std::min(earliest_of_group[g], earliest_above[node]);

    for (std::size_t g : failing) {
        if (earliest_of_group[g] < order[g]) continue; // propagated from an earlier failing group
        origin[g] = 1;
        summary.origin_groups.push_back(g);
        summary.origins.push_back(last_reference_name(g));
    }
    for (std::size_t g = 0; g < rows.size(); ++g) rows.set_analysis(g, order[g], origin[g] != 0, suspect[g] != 0);
    report.summary = std::move(summary);
}
} // namespace detail

inline void analyze_report(comparison_report& report) {
    detail::analyze_grouped_report(report, detail::group_of_reference_nodes(report));
}

} // namespace numgap
