#pragma once
// partial_report: what one shard of a comparison (`numgap compare --shard
// I/N`, compare/compare_shard.hpp) found, as plain data — enough for
// merge_partial_reports (merge_partial_reports.hpp) to rebuild the report
// the whole comparison would have produced, without the runs.
//
// Why more than the shard's rows: first divergence and error origins walk the
// whole reference graph, so every partial carries the reference graph
// snapshot; the rows keep their place in the whole report through `from` and
// `index` (the match group's index, or the unmatched node's graph index, which
// is the order compare_runs lists unmatched rows in); `owned_groups` lists
// the groups this shard was given, so a group the repair pass dropped (its
// nodes then have unmatched rows) is told from a lost one.
// `fingerprint` identifies the comparison (both graphs, the match result, the
// per-group byte estimates and the result-affecting options, hashed):
// partials of different comparisons must not be merged. `shard` is 0-based.
// Rows keep every field of group_report that the analysis or a writer reads,
// including the ones the JSON report does not show (fails_every_candidate,
// the rule of each metric). The JSON form is in partial_report_json.hpp.
// Complexity: O(1). Throws: nothing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/report/group_report.hpp>
#include <numgap/report/report_node.hpp>

namespace numgap {

enum class partial_row_origin : std::uint8_t { group, unmatched_reference, unmatched_target };

constexpr std::string_view name_of(partial_row_origin from) noexcept {
    switch (from) {
    case partial_row_origin::group: return "group";
    case partial_row_origin::unmatched_reference: return "unmatched_ref";
    case partial_row_origin::unmatched_target: return "unmatched_target";
    }
    return "group";
}

struct partial_row {
    partial_row_origin from = partial_row_origin::group;
    std::size_t index = 0; // match group index, or the unmatched node's index in its graph
    group_report row;
};

struct partial_report {
    std::size_t shard = 0; // 0-based
    std::size_t shards = 1;
    std::string fingerprint;       // 16 lowercase hex digits
    std::size_t match_groups = 0;  // groups of the whole comparison
    std::size_t target_nodes = 0;  // nodes of the target graph (bounds unmatched target indices)
    std::uint64_t shard_bytes = 0; // the byte estimate this shard was given (informative)
    std::vector<std::string> metric_names;
    std::vector<report_node> reference_graph; // as comparison_report::reference_graph
    std::vector<std::size_t> owned_groups;    // ascending
    std::vector<partial_row> rows;            // owned group rows, then owned unmatched rows
};

} // namespace numgap
