#pragma once
// compare_shard: compares shard I of N of a comparison and returns its
// partial_report (report/partial_report.hpp); merge_partial_reports on the N
// partials returns exactly what compare_runs returns for the whole
// comparison (`numgap compare --shard I/N` and `numgap merge`).
//
// Every shard matches both graphs itself (matching 10^6 nodes takes well
// under a second) and plans the split the same way (shard_plan.hpp: groups
// balanced by group_bytes, the caller's estimate of each group's tensor
// bytes on both sides, known without reading tensor data), then runs
// compare_runs comparing only its own groups (compare_options::compare_only)
// and keeps the rows the plan gives it. Groups the repair pass may consult
// together share a shard, so repairs come out as in the whole comparison.
// Fingerprint: FNV-1a/splitmix64 over `options_text` (the caller's spelling
// of every option that changes results: metrics and rules, matching, repair,
// how files are read), both graphs (names, ops, edges), the match result,
// the metric names and group_bytes. Two shards agree on it exactly when they
// compared the same thing the same way; tensor data itself is not hashed
// (that would read every tensor on every shard), so the runs must hold the
// same files on every machine.
// Preconditions: shard < shards; group_bytes has one entry per match group.
// Complexity: compare_runs' on the shard's groups, plus O(nodes + edges +
// groups) for the plan, the fingerprint and the row selection.
// Throws: what compare_runs and plan_shards throw; numgap::error (kind usage)
// for a shard index out of range.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <numgap/compare/compare_options.hpp>
#include <numgap/compare/compare_runs.hpp>
#include <numgap/compare/shard_plan.hpp>
#include <numgap/core/error.hpp>
#include <numgap/graph/concepts.hpp>
#include <numgap/match/detail/consumer_signatures.hpp>
#include <numgap/match/match_result.hpp>
#include <numgap/metric/metric_set.hpp>
#include <numgap/report/partial_report.hpp>

namespace numgap {

struct shard_spec {
    std::size_t index = 0; // 0-based
    std::size_t count = 1;
};

namespace detail {
// Chains FNV-1a hashes of length-prefixed pieces through splitmix64's mixer.
class comparison_fingerprint {
public:
    void add(std::string_view piece) { state_ = mix64(state_ ^ mix64(piece.size())) ^ hash_family(piece); }
    void add(std::uint64_t number) { state_ = mix64(state_ ^ mix64(number + 0x5bd1e995u)); }
    template <class Numbers>
    void add_all(const Numbers& numbers) {
        add(std::uint64_t(std::size(numbers)));
        for (auto number : numbers) add(std::uint64_t(number));
    }
    std::string hex() const {
        char text[17];
        std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(state_));
        return text;
    }

private:
    std::uint64_t state_ = 0x6e756d6761702d31ull; // "numgap-1"
};

template <graph G>
void add_graph(comparison_fingerprint& fingerprint, const G& g) {
    const std::size_t n = numgap::num_nodes(g);
    fingerprint.add(std::uint64_t(n));
    for (std::size_t node = 0; node < n; ++node) {
        fingerprint.add(numgap::node_name(g, node));
        fingerprint.add(numgap::op_type(g, node));
        std::vector<std::size_t> producers;
        for (auto producer : numgap::producers(g, node)) producers.push_back(static_cast<std::size_t>(producer));
        fingerprint.add_all(producers);
    }
}

inline void add_matches(comparison_fingerprint& fingerprint, const match_result& matches) {
    fingerprint.add(std::uint64_t(matches.groups.size()));
    for (const match_group& group : matches.groups) {
        fingerprint.add_all(group.reference_nodes);
        fingerprint.add_all(group.target_nodes);
        fingerprint.add(group.strategy);
        fingerprint.add(std::to_string(group.confidence));
        fingerprint.add(group.reference_tensor);
        fingerprint.add(group.target_tensor);
        fingerprint.add(std::uint64_t(group.target_output_node));
        fingerprint.add_all(group.ambiguous_with);
    }
    fingerprint.add_all(matches.unmatched_reference);
    fingerprint.add_all(matches.unmatched_target);
}
} // namespace detail

template <graph ReferenceGraph, graph TargetGraph, class ReferenceSource, class TargetSource>
requires tensor_source<std::remove_reference_t<ReferenceSource>> && tensor_source<std::remove_reference_t<TargetSource>>
    partial_report compare_shard(const ReferenceGraph& reference_graph, const TargetGraph& target_graph,
                                 const match_result& matches, ReferenceSource&& reference_source,
                                 TargetSource&& target_source, const metric_set& metrics, compare_options options,
                                 shard_spec shard, std::span<const std::uint64_t> group_bytes,
                                 std::string_view options_text) {
    if (shard.count == 0 || shard.index >= shard.count)
        throw error(error_kind::usage,
                    "shard " + std::to_string(shard.index) + " of " + std::to_string(shard.count) +
                        " does not exist (shards are numbered from 0 to N-1)",
                    error_location::of_item("shard"));
    const std::size_t reference_nodes = numgap::num_nodes(reference_graph);
    const std::size_t target_nodes = numgap::num_nodes(target_graph);
    const shard_plan plan = plan_shards(matches, reference_nodes, target_nodes, group_bytes, shard.count);

    detail::comparison_fingerprint fingerprint;
    fingerprint.add(options_text);
    detail::add_graph(fingerprint, reference_graph);
    detail::add_graph(fingerprint, target_graph);
    detail::add_matches(fingerprint, matches);
    for (const std::string& name : metrics.names()) fingerprint.add(name);
    fingerprint.add_all(group_bytes);

    options.compare_only = [&](std::size_t group) { return plan.group_shard[group] == shard.index; };
    comparison_report report =
        compare_runs(reference_graph, target_graph, matches, reference_source, target_source, metrics, options);

    partial_report partial;
    partial.shard = shard.index;
    partial.shards = shard.count;
    partial.fingerprint = fingerprint.hex();
    partial.match_groups = matches.groups.size();
    partial.target_nodes = target_nodes;
    partial.shard_bytes = plan.shard_bytes[shard.index];
    partial.metric_names = std::move(report.metric_names);
    partial.reference_graph = std::move(report.reference_graph);
    for (std::size_t g = 0; g < matches.groups.size(); ++g)
        if (plan.group_shard[g] == shard.index) partial.owned_groups.push_back(g);

    // The report lists the kept groups in group order (the repair pass drops
    // only groups of this shard, and never changes a row's reference nodes),
    // then the unmatched rows; a row is told from its group by those nodes.
    const detail::report_name_table reference_names(reference_graph);
    const detail::report_name_table target_names(target_graph);
    std::unordered_map<std::string_view, std::size_t> reference_index, target_index;
    for (std::size_t node = 0; node < reference_nodes; ++node) reference_index.emplace(reference_names[node], node);
    for (std::size_t node = 0; node < target_nodes; ++node) target_index.emplace(target_names[node], node);
    auto is_row_of = [&](const group_report& row, const match_group& group) {
        if (row.reference_nodes.size() != group.reference_nodes.size()) return false;
        for (std::size_t k = 0; k < row.reference_nodes.size(); ++k)
            if (row.reference_nodes[k] != reference_names[group.reference_nodes[k]]) return false;
        return true;
    };
    std::size_t next_group = 0;
    for (std::size_t r = 0; r < report.groups.size(); ++r) {
        group_report row = report.groups[r];
        if (row.status != group_status::unmatched) {
            while (next_group < matches.groups.size() && !is_row_of(row, matches.groups[next_group])) ++next_group;
            if (next_group == matches.groups.size())
                throw error(
                    error_kind::graph,
                    "compare_shard: a report row for reference nodes ending in '" +
                        (row.reference_nodes.empty() ? std::string() : row.reference_nodes.back()) +
                        "' matches no group",
                    error_location::of_item(row.reference_nodes.empty() ? std::string() : row.reference_nodes.back()));
            const std::size_t g = next_group++;
            if (plan.group_shard[g] == shard.index)
                partial.rows.push_back({partial_row_origin::group, g, std::move(row)});
            continue;
        }
        const bool reference_side = !row.reference_nodes.empty();
        const std::string& unmatched_name = reference_side ? row.reference_nodes.front() : row.target_nodes.front();
        const auto& index_of = reference_side ? reference_index : target_index;
        const std::size_t node = index_of.at(unmatched_name);
        const std::size_t owner = reference_side ? plan.reference_node_shard[node] : plan.target_node_shard[node];
        if (owner == shard.index)
            partial.rows.push_back(
                {reference_side ? partial_row_origin::unmatched_reference : partial_row_origin::unmatched_target, node,
                 std::move(row)});
    }
    return partial;
}

} // namespace numgap
