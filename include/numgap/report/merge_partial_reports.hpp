#pragma once
// merge_partial_reports: the comparison_report of a whole comparison from the
// partial reports of its N shards (`numgap merge`), identical to the one the
// unsharded comparison returns — same rows in the same order, then
// analyze_report (first divergence, origins, summary) over the whole graph.
//
// Rows: the match groups' rows by group index (a group its shard's repair
// pass dropped has none: its nodes come back as unmatched rows), then the
// unmatched reference rows by reference node index, then the unmatched target
// rows by target node index — compare_runs' order. Which shard reports which
// row is compare/shard_plan.hpp's business; here only that each is reported
// once.
// Refused, naming the files: no partial; partials of different comparisons
// (fingerprint, shard count, group or node counts, metric names or reference
// graph differ); a shard given twice or missing; a group owned by two shards
// or by none; a row for a group its partial does not own, or a group or
// unmatched node reported twice; and whatever analyze_report refuses (a row
// naming a node the graph lacks, a graph out of topological order).
// Memory: O(total size of the partials); nothing is sized by a count a file
// states before the counts were checked against what the files hold.
// Complexity: O(rows·log rows + nodes + edges) plus analyze_report.
// Throws: numgap::error (kind schema for a set of partials that does not
// fit together, graph from analyze_report); std::bad_alloc.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/report/analyze_report.hpp>
#include <numgap/report/comparison_report.hpp>
#include <numgap/report/partial_report.hpp>

namespace numgap {

namespace detail {
inline bool same_graph(const std::vector<report_node>& a, const std::vector<report_node>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].name != b[i].name || a[i].op != b[i].op || a[i].producers != b[i].producers) return false;
    return true;
}

[[noreturn]] inline void refuse_merge(const std::string& reason, const std::string& file) {
    throw error(error_kind::schema, "cannot merge the partial reports: " + reason, error_location::in_file(file));
}
} // namespace detail

// names[i] names partials[i] in messages (its file); missing names read "partial <i>".
inline comparison_report merge_partial_reports(std::vector<partial_report> partials,
                                               std::span<const std::string> names = {}) {
    auto name = [&](std::size_t i) { return i < names.size() ? "'" + names[i] + "'" : "partial " + std::to_string(i); };
    auto file = [&](std::size_t i) { return i < names.size() ? names[i] : std::string(); };
    if (partials.empty())
        throw error(error_kind::usage, "cannot merge the partial reports: none was given",
                    error_location::of_item("partials"));

    const partial_report& first = partials.front();
    for (std::size_t i = 1; i < partials.size(); ++i) {
        const partial_report& other = partials[i];
        std::string differs;
        if (other.fingerprint != first.fingerprint)
            differs = "fingerprint '" + other.fingerprint + "' against '" + first.fingerprint + "'";
        else if (other.shards != first.shards)
            differs = std::to_string(other.shards) + " shards against " + std::to_string(first.shards);
        else if (other.match_groups != first.match_groups || other.target_nodes != first.target_nodes)
            differs = "group or target node counts";
        else if (other.metric_names != first.metric_names) differs = "metric names";
        else if (!detail::same_graph(other.reference_graph, first.reference_graph)) differs = "reference graph";
        if (!differs.empty())
            detail::refuse_merge(name(i) + " and " + name(0) + " come from different comparisons (" + differs +
                                     "); merge the partials of one `numgap compare --shard` run",
                                 file(i));
    }
    // Every shard once: sort the given shard indices and look for the first gap or repeat.
    std::vector<std::pair<std::size_t, std::size_t>> shard_order; // (shard, partial)
    for (std::size_t i = 0; i < partials.size(); ++i) shard_order.emplace_back(partials[i].shard, i);
    std::sort(shard_order.begin(), shard_order.end());
    for (std::size_t k = 0; k < shard_order.size(); ++k) {
        if (k > 0 && shard_order[k].first == shard_order[k - 1].first)
            detail::refuse_merge("shard " + std::to_string(shard_order[k].first) + " is given twice (" +
                                     name(shard_order[k - 1].second) + " and " + name(shard_order[k].second) + ")",
                                 file(shard_order[k].second));
        if (shard_order[k].first != k)
            detail::refuse_merge("shard " + std::to_string(k) + " of " + std::to_string(first.shards) + " is missing",
                                 file(shard_order[k].second));
    }
    if (partials.size() != first.shards)
        detail::refuse_merge("shard " + std::to_string(partials.size()) + " of " + std::to_string(first.shards) +
                                 " is missing (" + std::to_string(partials.size()) + " partials given)",
                             file(0));

    // Groups: owned once each; the total is checked before anything is sized by it.
    std::size_t owned = 0;
    for (const partial_report& partial : partials) owned += partial.owned_groups.size();
    if (owned != first.match_groups)
        detail::refuse_merge("the shards own " + std::to_string(owned) + " groups in all, but the comparison has " +
                                 std::to_string(first.match_groups),
                             file(0));
    std::vector<std::size_t> owner(first.match_groups, partials.size());
    for (std::size_t i = 0; i < partials.size(); ++i)
        for (std::size_t group : partials[i].owned_groups) {
            if (group >= owner.size() || owner[group] != partials.size())
                detail::refuse_merge("group " + std::to_string(group) + " is owned by two shards (" +
                                         (group < owner.size() ? name(owner[group]) + " and " : std::string()) +
                                         name(i) + ")",
                                     file(i));
            owner[group] = i;
        }

    std::vector<std::optional<group_report>> group_rows(first.match_groups);
    struct unmatched_row {
        std::size_t index, partial;
        group_report row;
    };
    std::vector<unmatched_row> reference_rows, target_rows;
    std::set<std::pair<int, std::size_t>> unmatched_from; // (side, node) -> reported by one partial only
    for (std::size_t i = 0; i < partials.size(); ++i) {
        std::set<std::pair<int, std::size_t>> own;
        for (partial_row& entry : partials[i].rows) {
            if (entry.from == partial_row_origin::group) {
                if (entry.index >= owner.size() || owner[entry.index] != i)
                    detail::refuse_merge(name(i) + " has a row for group " + std::to_string(entry.index) +
                                             ", which its shard does not own",
                                         file(i));
                if (group_rows[entry.index])
                    detail::refuse_merge(name(i) + " has two rows for group " + std::to_string(entry.index), file(i));
                group_rows[entry.index] = std::move(entry.row);
                continue;
            }
            const int side = entry.from == partial_row_origin::unmatched_reference ? 0 : 1;
            own.emplace(side, entry.index);
            (side == 0 ? reference_rows : target_rows).push_back({entry.index, i, std::move(entry.row)});
        }
        for (const auto& node : own)
            if (!unmatched_from.insert(node).second)
                detail::refuse_merge(std::string("unmatched ") + (node.first == 0 ? "reference" : "target") + " node " +
                                         std::to_string(node.second) + " is reported by two shards (" + name(i) +
                                         " and another)",
                                     file(i));
    }

    comparison_report report;
    report.metric_names = std::move(partials.front().metric_names);
    report.reference_graph = std::move(partials.front().reference_graph);
    report.groups.reserve(first.match_groups + reference_rows.size() + target_rows.size());
    for (std::optional<group_report>& row : group_rows)
        if (row) report.groups.push_back(std::move(*row));
    // Stable: one node may have several rows (compare_runs lists it once per time it became unmatched).
    auto by_node = [](const unmatched_row& a, const unmatched_row& b) { return a.index < b.index; };
    for (auto* rows : {&reference_rows, &target_rows}) {
        std::stable_sort(rows->begin(), rows->end(), by_node);
        for (unmatched_row& entry : *rows) report.groups.push_back(std::move(entry.row));
    }
    analyze_report(report);
    return report;
}

} // namespace numgap
