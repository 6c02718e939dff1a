#pragma once
// build_report: the second half of compare_runs: the comparison_report of
// what compare_groups found (compare_groups.hpp), from the same two graphs
// and match result, without the tensor sources.
//
// It snapshots the reference graph (report_node.hpp), makes one named row per
// match group (after a repair: the rows compare_groups kept), one row per
// unmatched node (sorted by node, reference first; an unmatched reference row
// names its node's tensor when compare_groups found the run holds it), and
// analyses the report (analyze_report.hpp). Each packed outcome's boxed
// extras go to its row as the row is made; the packed arrays are freed once
// the rows are made.
// Precondition: `groups` came from compare_groups with these graphs and this
// match result.
// Given the graphs and the match result as rvalues, it frees each as soon as
// the report holds what it needs of it: the target graph once its node names
// are copied, the match result once the rows are made, the reference graph
// once snapshotted (last: the rows name its nodes too). For a million nodes
// the graphs and the match result are several hundred MB that would
// otherwise stand beside the rows and the snapshot (numgap compare does this).
// Complexity: O(N + E + G) plus the names copied into rows.
// Throws: numgap::error (kind usage) when the graphs' node counts or the
// match result's group count differ from those compare_groups saw;
// numgap::error for an unusable reference graph (a cycle); std::bad_alloc.
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
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
// The reference graph in topological order, as the report keeps it;
// `position[node]` becomes the node's index in it.
template <class Graph, class Names>
std::vector<report_node> report_graph(const Graph& graph, const Names& names, std::vector<std::size_t>& position) {
    const std::vector<std::size_t> order = topological_order(graph);
    position.assign(order.size(), 0);
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

// What an unmatched row says of its node, taken from the graph before it goes.
struct unmatched_node {
    std::size_t node;
    std::string name, op;
    std::optional<std::string> tensor; // the node's last output key, when the run holds it
};

// `nodes` (sorted here) described for unmatched rows; held[i] says whether
// the run holds the i-th sorted node's tensor.
template <class Graph, class Names>
std::vector<unmatched_node> describe_unmatched(const Graph& graph, std::vector<std::size_t> nodes,
                                               const std::vector<char>& held, const Names& names) {
    std::sort(nodes.begin(), nodes.end());
    std::vector<unmatched_node> described;
    described.reserve(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i)
        described.push_back({nodes[i], std::string(names[nodes[i]]), std::string(numgap::op_type(graph, nodes[i])),
                             held[i] ? last_output_key(graph, nodes[i]) : std::nullopt});
    return described;
}

// Appends an `unmatched` row for each of `nodes`.
inline void add_unmatched_rows(report_rows& rows, std::vector<unmatched_node> nodes,
                               std::vector<std::string> group_report::*side, std::string group_report::*tensor,
                               const char* message, const std::unordered_map<std::size_t, std::string>& messages) {
    for (unmatched_node& node : nodes) {
        group_report row;
        row.*side = {std::move(node.name)};
        if (node.tensor) row.*tensor = std::move(*node.tensor);
        row.op = std::move(node.op);
        row.status = group_status::unmatched;
        row.confidence.reset(); // no pairing, so no confidence in one
        const auto special = messages.find(node.node);
        row.message = special != messages.end() ? special->second : message;
        rows.push_back(row);
    }
}

// build_report's work. It reads the graphs and the match result through the
// references; `release` is told when it is done with each (release.reference()
// and so on), which frees what the caller handed over. Release::frees says
// whether it does: then the target's names are copied before its graph goes.
template <class ReferenceGraph, class TargetGraph, class Release>
comparison_report build_report_from(compared_groups groups, const ReferenceGraph& reference_graph,
                                    const TargetGraph& target_graph, const match_result& matches, Release release) {
    compared_groups_state& state = compared_groups_access::state(groups);
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
    // Handed-over inputs go in the order that keeps the fewest at once (a
    // million nodes: each graph ~125 MB, the match result ~200 MB, the rows
    // ~200 MB, the snapshot ~160 MB): the target graph once its names are
    // copied, the match result once the rows are made, the reference graph
    // once snapshotted, which is last because the rows name its nodes too.
    std::optional<report_name_table<ReferenceGraph>> reference_names(std::in_place, reference_graph);
    std::vector<unmatched_node> unmatched_reference = describe_unmatched(
        reference_graph, final_matches.unmatched_reference, state.unmatched_reference_held, *reference_names);
    std::optional<report_name_table<TargetGraph>> target_table(std::in_place, target_graph);
    std::vector<unmatched_node> unmatched_target =
        describe_unmatched(target_graph, final_matches.unmatched_target, state.unmatched_target_held, *target_table);
    std::vector<std::string> target_names;
    if constexpr (Release::frees) {
        if (!state.full) target_names = std::move(*target_table).names(); // the rows name target nodes
        target_table.reset(); // it may refer to the graph's strings
    }
    release.target();

    const std::size_t unmatched = unmatched_reference.size() + unmatched_target.size();
    // The row of each reference node (by graph index), which analyze_report
    // would otherwise find again by name; empty when it cannot be known
    // that simply (rows kept by a repair, a match result naming a node twice
    // or out of range): analyze_report's own checks then word the error.
    std::vector<std::size_t> row_of_node;
    const auto claim_node = [&](std::size_t node, std::size_t row) {
        if (row_of_node.empty()) return;
        if (node < row_of_node.size() && row_of_node[node] == no_group) row_of_node[node] = row;
        else row_of_node = {};
    };
    const auto make_rows = [&](const auto& target_node_names) {
        const std::size_t columns = state.columns.size();
        report.groups.reserve(matches.groups.size() + unmatched, columns);
        row_of_node.assign(numgap::num_nodes(reference_graph), no_group);
        group_report row;
        for (std::size_t g = 0; g < matches.groups.size(); ++g) {
            row = group_report{};
            const match_group& group = matches.groups[g];
            for (const std::size_t node : group.reference_nodes) claim_node(node, g);
            start_row(row, group, numgap::op_type(reference_graph, group.reference_output_node), *reference_names,
                      target_node_names);
            unpack_outcome(state.outcomes[g], row, state.columns, state.metric_values.data() + g * columns,
                           state.metric_passed.data() + g * columns);
            report.groups.push_back(row);
        }
        state.outcomes = {};
        state.metric_values = {};
        state.metric_passed = {};
    };
    if (state.full) {
        report.groups.reserve(state.rows.size() + unmatched, state.columns.size());
        for (const group_report& row : state.rows) report.groups.push_back(row);
        state.rows = {};
    } else if constexpr (Release::frees) {
        make_rows(target_names);
    } else {
        make_rows(*target_table);
    }
    target_names = {};
    release.matches();

    std::vector<std::size_t> position;
    report.reference_graph = report_graph(reference_graph, *reference_names, position);
    reference_names.reset(); // it may refer to the graph's strings
    release.reference();
    for (std::size_t i = 0; i < unmatched_reference.size(); ++i)
        claim_node(unmatched_reference[i].node, report.groups.size() + i);
    add_unmatched_rows(report.groups, std::move(unmatched_reference), &group_report::reference_nodes,
                       &group_report::reference_tensor, "no target node matches this reference node",
                       state.reference_messages);
    add_unmatched_rows(report.groups, std::move(unmatched_target), &group_report::target_nodes,
                       &group_report::target_tensor, "no reference node matches this target node",
                       state.target_messages);
    if (row_of_node.empty()) {
        analyze_report(report);
    } else {
        // Snapshot position i holds graph node n where position[n] == i.
        std::vector<std::size_t> group_of(row_of_node.size(), no_group);
        for (std::size_t node = 0; node < row_of_node.size(); ++node) group_of[position[node]] = row_of_node[node];
        row_of_node = {};
        position = {};
        analyze_grouped_report(report, group_of);
    }
    return report;
}

// A graph handed over: an rvalue (a forwarding reference's deduced type is
// then no reference) that build_report may move from and destroy.
template <class G>
concept owned_graph = !std::is_reference_v<G> && !std::is_const_v<G> && std::move_constructible<G> && numgap::graph<G>;

// build_report_from's `release` for inputs the caller keeps.
struct keep_inputs {
    static constexpr bool frees = false;
    void reference() const noexcept {}
    void target() const noexcept {}
    void matches() const noexcept {}
};

// build_report_from's `release` for inputs handed over: destroys each, then
// calls `freed()`.
template <class ReferenceGraph, class TargetGraph, class Freed>
struct free_inputs {
    static constexpr bool frees = true;
    std::optional<ReferenceGraph>* reference_graph;
    std::optional<TargetGraph>* target_graph;
    std::optional<match_result>* match;
    Freed* freed;
    void reference() const {
        reference_graph->reset();
        (*freed)();
    }
    void target() const {
        target_graph->reset();
        (*freed)();
    }
    void matches() const {
        match->reset();
        (*freed)();
    }
};
} // namespace detail

template <graph ReferenceGraph, graph TargetGraph>
comparison_report build_report(compared_groups groups, const ReferenceGraph& reference_graph,
                               const TargetGraph& target_graph, const match_result& matches) {
    return detail::build_report_from(std::move(groups), reference_graph, target_graph, matches, detail::keep_inputs{});
}

// The same report from graphs and a match result handed over (rvalues): each
// is destroyed as soon as the report holds what it needs of it (see the top),
// and `freed()` is called after each: where the allocator keeps freed memory
// for reuse, a caller may hand the pages back there (glibc's malloc_trim),
// which a library should not do on its own. (numgap compare does not: its
// peak is reached before the report, and the rows reuse the freed memory.)
template <detail::owned_graph ReferenceGraph, detail::owned_graph TargetGraph, std::invocable Freed = void (*)()>
comparison_report build_report(
    compared_groups groups, ReferenceGraph&& reference_graph, TargetGraph&& target_graph, match_result&& matches,
    Freed freed = [] {}) {
    std::optional<ReferenceGraph> reference(std::in_place, std::move(reference_graph));
    std::optional<TargetGraph> target(std::in_place, std::move(target_graph));
    std::optional<match_result> match(std::in_place, std::move(matches));
    return detail::build_report_from(
        std::move(groups), *reference, *target, *match,
        detail::free_inputs<ReferenceGraph, TargetGraph, Freed>{&reference, &target, &match, &freed});
}

} // namespace numgap
