#pragma once
// compare_groups: the first half of compare_runs: compares every match
// group's tensors (and runs the repair pass) and returns the outcomes packed
// (compared_groups.hpp), without building the report. build_report
// (build_report.hpp) makes the comparison_report from them and the graphs.
//
// Why two stages: build_report needs the graphs and the match result but
// not the tensor sources, so a caller may release the sources in between —
// their specs, indexes and mapped files — before the report's rows exist.
// For a run of a million small tensors the sources and the rows are each
// several hundred MB; `numgap compare` holds them one after the other this
// way. compare_runs(...) is exactly build_report(compare_groups(...)).
//
// Everything compare_runs.hpp says about groups holds here: per-group
// outcomes are data (missing, error with its message, kind and location),
// threads, progress, bytes_compared, compare_only, the whole-file checks
// after the last group, and the repair pass. When the repair pass has work
// the groups are kept as report rows (compared_groups.hpp).
// An unmatched node's tensor is looked up here (holds_tensor), since the
// sources may be gone when its row is made.
// Complexity: as compare_runs without the analysis; memory O(groups x
// (60 bytes + 9 bytes a metric)) besides one pair per worker.
// Throws: rethrows an exception from the progress callback; std::bad_alloc;
// what repair_pairings throws. Never prints.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <numgap/compare/compare_group.hpp>
#include <numgap/compare/compare_options.hpp>
#include <numgap/compare/compared_groups.hpp>
#include <numgap/compare/repair_pairings.hpp>
#include <numgap/compare/tensor_source.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/parallel_for.hpp>
#include <numgap/graph/concepts.hpp>
#include <numgap/match/match_result.hpp>
#include <numgap/metric/metric_set.hpp>
#include <numgap/report/group_report.hpp>

namespace numgap {

namespace detail {
// Bytes compared between two calls of release_cached_pages: what the mapped
// files keep resident beyond the tensors being read is about this much.
inline constexpr std::uint64_t release_interval = std::uint64_t(32) << 20;

// The source's release_cached_pages (run_directory, run_source), when it has one.
template <class Source>
void release_cached_pages(const Source& source) noexcept {
    if constexpr (requires { source.release_cached_pages(); }) source.release_cached_pages();
}

// The row of match group `group`, named, before its tensors are compared;
// `op` is the op of the group's reference output node.
template <class ReferenceNames, class TargetNames>
void start_row(group_report& row, const match_group& group, std::string_view op, const ReferenceNames& reference_names,
               const TargetNames& target_names) {
    row.reference_nodes = names_of(reference_names, group.reference_nodes);
    row.target_nodes = names_of(target_names, group.target_nodes);
    row.reference_tensor = group.reference_tensor;
    row.target_tensor = group.target_tensor;
    row.kind = group.kind;
    row.strategy = group.strategy;
    row.confidence = group.confidence;
    row.ambiguous_with = names_of(target_names, group.ambiguous_with);
    row.op = std::string(op);
}

// The tensor an unmatched row of `node` names when the run holds it: the
// node's last output key; nullopt when the node has no output.
template <class Graph>
std::optional<std::string> last_output_key(const Graph& graph, std::size_t node) {
    const auto& keys = numgap::output_keys(graph, node);
    if (std::empty(keys)) return std::nullopt;
    return std::string(*std::prev(std::end(keys)));
}

// For each of `nodes` (sorted here): whether `source` holds the node's last_output_key.
template <class Graph, class Source>
std::vector<char> unmatched_held(const Graph& graph, std::vector<std::size_t> nodes, Source& source) {
    std::sort(nodes.begin(), nodes.end());
    std::vector<char> held(nodes.size(), 0);
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (const std::optional<std::string> key = last_output_key(graph, nodes[i]))
            held[i] = holds_tensor(source, *key);
    return held;
}

// Turns a packed outcome into an `error` for `failure` (set_error for rows).
inline void set_error(group_outcome& outcome, const error& failure) {
    outcome.status = group_status::error;
    outcome.metrics_in_columns = false;
    group_outcome_extras& extras = outcome.extra();
    extras.metrics.clear();
    extras.message = failure.what();
    extras.error_detail = group_error{failure.kind(), failure.where()};
}
} // namespace detail

template <graph ReferenceGraph, graph TargetGraph, class ReferenceSource, class TargetSource>
requires tensor_source<std::remove_reference_t<ReferenceSource>> && tensor_source<std::remove_reference_t<TargetSource>>
    compared_groups compare_groups(const ReferenceGraph& reference_graph, const TargetGraph& target_graph,
                                   const match_result& matches, ReferenceSource&& reference_source,
                                   TargetSource&& target_source, const metric_set& metrics,
                                   const compare_options& options = {}) {
    compared_groups result;
    detail::compared_groups_state& state = detail::compared_groups_access::state(result);
    state.reference_nodes = numgap::num_nodes(reference_graph);
    state.target_nodes = numgap::num_nodes(target_graph);
    state.match_groups = matches.groups.size();
    for (const detail::metric_entry& entry : detail::metric_set_access::entries(metrics)) {
        state.columns.names.emplace_back(entry.name);
        state.columns.rules.push_back(entry.rule);
    }
    const std::size_t compared_groups = matches.groups.size();
    const std::size_t columns = state.columns.size();
    state.outcomes.resize(compared_groups);
    state.metric_values.resize(compared_groups * columns);
    state.metric_passed.resize(compared_groups * columns);
    // Written by workers at distinct indices: char, not vector<bool>'s shared bits.
    std::vector<char> shapes_differ(compared_groups, 0);

    const std::size_t workers = std::min(resolve_threads(options.threads), std::max<std::size_t>(1, compared_groups));
    std::atomic<std::size_t> next{0};
    std::atomic<std::uint64_t> bytes_read{0}; // tensor bytes compared, for release_cached_pages
    std::atomic<bool> stop{false};
    std::mutex progress_mutex;
    std::size_t done = 0;
    std::exception_ptr callback_failure;
    // Whole-file checks left for after the last group (see check_intact):
    // each distinct one once in `deferred_checks`, and per group the index+1
    // of its reference's and its target's (0: none). Workers remember the
    // last check they registered per side, so the mutex is taken about once
    // per file, not per group.
    std::vector<detail::deferred_intact_check> deferred_checks;
    std::unordered_map<const void*, std::uint32_t> deferred_id;
    std::vector<std::array<std::uint32_t, 2>> deferred_of_group(compared_groups, {0, 0});
    std::mutex deferred_mutex;
    auto work_loop = [&] {
        std::array<detail::deferred_intact_check, 2> last_check{};
        std::array<std::uint32_t, 2> last_id{0, 0};
        const auto register_check = [&](const detail::deferred_intact_check& check, int side) -> std::uint32_t {
            if (check.mapping == nullptr) return 0;
            if (check.mapping == last_check[side].mapping) return last_id[side];
            std::lock_guard lock(deferred_mutex);
            // One entry per open mapping (each holds a file descriptor), so the ids fit 32 bits.
            const auto [found, added] =
                deferred_id.try_emplace(check.mapping.get(), std::uint32_t(deferred_checks.size() + 1));
            if (added) deferred_checks.push_back(check);
            last_check[side] = check;
            last_id[side] = found->second;
            return last_id[side];
        };
        group_report row; // this worker's scratch row: compare_group writes it, pack_outcome empties it
        while (!stop.load(std::memory_order_relaxed)) {
            const std::size_t index = next.fetch_add(1, std::memory_order_relaxed);
            if (index >= compared_groups) return;
            row = group_report{};
            if (options.compare_only && !options.compare_only(index)) {
                row.status = group_status::missing;
                row.message = "compared by another shard";
            } else {
                const match_group& group = matches.groups[index];
                row.reference_tensor = group.reference_tensor;
                row.target_tensor = group.target_tensor;
                std::pair<detail::deferred_intact_check, detail::deferred_intact_check> later;
                shapes_differ[index] = detail::compare_group(row, reference_source, target_source, metrics,
                                                             options.evaluate, group.strategy == "structure", &later);
                deferred_of_group[index] = {register_check(later.first, 0), register_check(later.second, 1)};
                if (row.compared()) {
                    const auto count = std::uint64_t(row.count);
                    const std::uint64_t bytes = (row.dtype_reference ? storage_bytes(*row.dtype_reference, count) : 0) +
                                                (row.dtype_target ? storage_bytes(*row.dtype_target, count) : 0);
                    if (options.bytes_compared != nullptr)
                        options.bytes_compared->fetch_add(bytes, std::memory_order_relaxed);
                    // Each time another release_interval bytes are compared, the
                    // sources' mapped files hand back their resident pages: the
                    // pages of small tensors read in place would otherwise all
                    // stay resident (the 10^6-node runs' ~120 MB); large
                    // tensors hand back their own (loaded_tensor::release_run_pages).
                    const std::uint64_t before = bytes_read.fetch_add(bytes, std::memory_order_relaxed);
                    if (before / detail::release_interval != (before + bytes) / detail::release_interval) {
                        detail::release_cached_pages(reference_source);
                        detail::release_cached_pages(target_source);
                    }
                }
            }
            detail::pack_outcome(row, state.outcomes[index], state.columns,
                                 state.metric_values.data() + index * columns,
                                 state.metric_passed.data() + index * columns);
            if (options.progress) {
                std::lock_guard lock(progress_mutex);
                ++done;
                try {
                    if (!callback_failure) options.progress(done, compared_groups);
                } catch (...) {
                    callback_failure = std::current_exception();
                    stop = true;
                }
            }
        }
    };
    // compare_group turns every per-group exception into an `error` row, so
    // what reaches parallel_for is e.g. bad_alloc while writing that row: it
    // stops the other workers and parallel_for rethrows it once all are joined.
    parallel_for(workers, [&](std::size_t) {
        try {
            work_loop();
        } catch (...) {
            stop = true;
            throw;
        }
    });
    if (callback_failure) std::rethrow_exception(callback_failure);
    // Every group has read its tensors: a file that shrank since it was
    // mapped makes each group that read it in place `error` (conservatively:
    // a group read before the truncation is flagged too).
    std::vector<std::optional<error>> deferred_failures(deferred_checks.size());
    bool any_deferred_failure = false;
    for (std::size_t id = 0; id < deferred_checks.size(); ++id) {
        try {
            deferred_checks[id].check(deferred_checks[id].mapping.get());
        } catch (const error& failure) {
            deferred_failures[id] = failure;
            any_deferred_failure = true;
        }
    }
    for (std::size_t g = 0; any_deferred_failure && g < compared_groups; ++g)
        for (const std::uint32_t id : deferred_of_group[g]) {
            detail::group_outcome& outcome = state.outcomes[g];
            if (id != 0 && deferred_failures[id - 1] && outcome.compared()) {
                detail::set_error(outcome, *deferred_failures[id - 1]);
                break;
            }
        }
    deferred_of_group = {};

    // The repair pass may re-pair or drop structural groups. It works on
    // named rows and a copy of the match result, made only when it has
    // something to look at (a million-group match result is a few hundred MB).
    const bool repair = detail::repair_needs_attention(
        matches.groups, [&](std::size_t g) { return state.outcomes[g].status; }, shapes_differ);
    if (repair) {
        const detail::report_name_table reference_names(reference_graph);
        const detail::report_name_table target_names(target_graph);
        std::vector<group_report>& rows = state.rows;
        rows.reserve(compared_groups);
        for (std::size_t g = 0; g < compared_groups; ++g) {
            group_report& row = rows.emplace_back();
            detail::start_row(row, matches.groups[g],
                              numgap::op_type(reference_graph, matches.groups[g].reference_output_node),
                              reference_names, target_names);
            detail::unpack_outcome(state.outcomes[g], row, state.columns, state.metric_values.data() + g * columns,
                                   state.metric_passed.data() + g * columns);
        }
        state.full = true;
        state.outcomes = {};
        state.metric_values = {};
        state.metric_passed = {};
        match_result& working = state.repaired_matches.emplace(matches);
        detail::repair_outcome repaired =
            detail::repair_pairings(working, rows, shapes_differ, target_graph, target_names, options.repair,
                                    [&](group_report& row, bool shapes_are_evidence) {
                                        return detail::compare_group(row, reference_source, target_source, metrics,
                                                                     options.evaluate, shapes_are_evidence);
                                    });
        if (std::find(repaired.dropped.begin(), repaired.dropped.end(), true) != repaired.dropped.end()) {
            std::size_t kept = 0;
            for (std::size_t g = 0; g < compared_groups; ++g) {
                if (repaired.dropped[g]) continue;
                if (kept != g) rows[kept] = std::move(rows[g]);
                ++kept;
            }
            rows.resize(kept);
        }
        state.reference_messages = std::move(repaired.reference_messages);
        state.target_messages = std::move(repaired.target_messages);
    }
    const match_result& final_matches = state.repaired_matches ? *state.repaired_matches : matches;
    state.unmatched_reference_held =
        detail::unmatched_held(reference_graph, final_matches.unmatched_reference, reference_source);
    state.unmatched_target_held = detail::unmatched_held(target_graph, final_matches.unmatched_target, target_source);
    return result;
}

} // namespace numgap
