#pragma once
// build_report: the second half of compare_runs: the comparison_report of
// what compare_groups found (compare_groups.hpp), from the same two graphs
// and match result, without the tensor sources.
//
// It snapshots the reference graph (report_node.hpp), makes one named row per
// match group (after a repair: the rows compare_groups kept), one row per
// unmatched node (sorted by node, reference first; an unmatched reference row
// names its node's tensor when compare_groups found the run holds it), and
// analyses the report (analyze_report.hpp). The packed outcomes are freed as
// the rows are made, so the two are not held whole at once.
// Precondition: `groups` came from compare_groups with these graphs and this
// match result.
// Complexity: O(N + E + G) plus the names copied into rows.
// Throws: numgap::error (kind usage) when the graphs' node counts or the
// match result's group count differ from those compare_groups saw;
// numgap::error for an unusable reference graph (a cycle); std::bad_alloc.
#include <algorithm>
#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <numgap/compare/compare_group.hpp>
#include <numgap/compare/compare_groups.hpp>
#include <numgap/compare/compared_groups.hpp>
#include <numgap/core/error.hpp>
#include <numgap/graph/concepts.hpp>
#include <numgap/graph/topological_order.hpp>
#include <numgap/match/match_result.hpp>
#include <numgap/report/analyze_report.hpp>
#include <numgap/report/comparison_report.hpp>

namespace numgap {

namespace detail {
// The reference graph in topological order, as the report keeps it.
template <class Graph, class Names>
std::vector<report_node> report_graph(const Graph& graph, const Names& names) {
    const std::vector<std::size_t> order = topological_order(graph);
    std::vector<std::size_t> position(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
    std::vector<report_node> nodes;
    nodes.reserve(order.size());
    for (std::size_t node : order) {
        report_node& snapshot = nodes.emplace_back();
        snapshot.name = names[node];
        snapshot.op = std::string(numgap::op_type(graph, node));
        for (auto producer : numgap::producers(graph, node))
            snapshot.producers.push_back(position[static_cast<std::size_t>(producer)]);
        std::sort(snapshot.producers.begin(), snapshot.producers.end());
        snapshot.producers.erase(std::unique(snapshot.producers.begin(), snapshot.producers.end()),
                                 snapshot.producers.end());
    }
    return nodes;
}

// Appends an `unmatched` row for each of `nodes` (sorted here); held[i]
// says whether the run holds the i-th sorted node's tensor.
template <class Graph, class Names>
void add_unmatched_rows(std::vector<group_report>& rows, const Graph& graph, std::vector<std::size_t> nodes,
                        const std::vector<char>& held, const Names& names, std::vector<std::string> group_report::*side,
                        std::string group_report::*tensor, const char* message,
                        const std::unordered_map<std::size_t, std::string>& messages) {
    std::sort(nodes.begin(), nodes.end());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const std::size_t node = nodes[i];
        group_report& row = rows.emplace_back();
        row.*side = {names[node]};
        if (held[i]) row.*tensor = *last_output_key(graph, node);
        row.op = std::string(numgap::op_type(graph, node));
        row.status = group_status::unmatched;
        row.confidence.reset(); // no pairing, so no confidence in one
        const auto special = messages.find(node);
        row.message = special != messages.end() ? special->second : message;
    }
}
} // namespace detail

template <graph ReferenceGraph, graph TargetGraph>
comparison_report build_report(compared_groups groups, const ReferenceGraph& reference_graph,
                               const TargetGraph& target_graph, const match_result& matches) {
    detail::compared_groups_state& state = detail::compared_groups_access::state(groups);
    if (state.reference_nodes != numgap::num_nodes(reference_graph) ||
        state.target_nodes != numgap::num_nodes(target_graph) || state.match_groups != matches.groups.size())
        throw error(error_kind::usage,
                    "build_report: the graphs (" + std::to_string(numgap::num_nodes(reference_graph)) + " and " +
                        std::to_string(numgap::num_nodes(target_graph)) + " nodes) or the match result (" +
                        std::to_string(matches.groups.size()) + " groups) are not those compare_groups compared (" +
                        std::to_string(state.reference_nodes) + " and " + std::to_string(state.target_nodes) +
                        " nodes, " + std::to_string(state.match_groups) + " groups)");
    const match_result& final_matches = state.repaired_matches ? *state.repaired_matches : matches;
    if (state.unmatched_reference_held.size() != final_matches.unmatched_reference.size() ||
        state.unmatched_target_held.size() != final_matches.unmatched_target.size())
        throw error(error_kind::usage, "build_report: the match result's unmatched nodes are not those "
                                       "compare_groups saw");

    comparison_report report;
    report.metric_names = state.columns.names;
    const detail::report_name_table reference_names(reference_graph);
    const detail::report_name_table target_names(target_graph);
    report.reference_graph = detail::report_graph(reference_graph, reference_names);

    const std::size_t unmatched = final_matches.unmatched_reference.size() + final_matches.unmatched_target.size();
    if (state.full) {
        report.groups = std::move(state.rows);
        report.groups.reserve(report.groups.size() + unmatched);
    } else {
        const std::size_t columns = state.columns.size();
        report.groups.reserve(matches.groups.size() + unmatched);
        for (std::size_t g = 0; g < matches.groups.size(); ++g) {
            group_report& row = report.groups.emplace_back(); // built in place: a row is ~400 bytes
            detail::start_row(row, matches.groups[g], reference_graph, reference_names, target_names);
            detail::unpack_outcome(state.outcomes[g], row, state.columns, state.metric_values.data() + g * columns,
                                   state.metric_passed.data() + g * columns);
        }
        state.outcomes = {};
        state.metric_values = {};
        state.metric_passed = {};
    }
    detail::add_unmatched_rows(report.groups, reference_graph, final_matches.unmatched_reference,
                               state.unmatched_reference_held, reference_names, &group_report::reference_nodes,
                               &group_report::reference_tensor, "no target node matches this reference node",
                               state.reference_messages);
    detail::add_unmatched_rows(report.groups, target_graph, final_matches.unmatched_target, state.unmatched_target_held,
                               target_names, &group_report::target_nodes, &group_report::target_tensor,
                               "no reference node matches this target node", state.target_messages);
    analyze_report(report);
    return report;
}

} // namespace numgap
