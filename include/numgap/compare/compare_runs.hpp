#pragma once
// compare_runs: compares two runs of one model — two graphs, two tensor
// sources — and returns an analysed comparison_report.
//
// Steps: match the graphs (match_auto unless the caller passes a
// match_result), then for every match group load the group's reference and
// target tensors, evaluate the metrics, drop the tensors; unmatched nodes
// become `unmatched` rows; finally analyze_report finds the first divergence
// and the error origins.
// Per-group outcomes are data, not exceptions: a tensor key a source does not
// have makes the group `missing` (dumps are often partial); a load failure or
// an incompatible pair (numgap::error, or any std::exception such as a failed
// mapping) makes it `error` with the message, and the other groups continue;
// an exception not derived from std::exception (a source or user metric
// throwing an int) makes it `error` with the message "unknown exception (not
// derived from std::exception)". A holder with check_intact() (io::loaded_tensor)
// is asked after the metrics are computed, so a file truncated while it was read
// makes its group `error` naming the file; for a tensor read in place from a
// mapping the run keeps open (a key of a safetensors file), the file's size
// is checked once after all groups (one fstat per file, not per tensor; the
// truncation guard's fault flag still per group), and every group that read
// a file found shorter becomes `error`. Worker threads are always joined.
// Groups are compared by compare_options::threads workers (parallel_for's
// rule: 0 = every core, 1 = the calling thread only) pulling the next group
// from a shared counter; each worker holds
// one pair at a time, so peak memory is about one pair per worker plus the
// report. Results do not depend on the thread count.
// Structural pairs are checked against the tensors (repair_pairings.hpp):
// a structural pair whose shapes differ is evidence of a wrong pairing, never
// an `error` row — an alternative that fits replaces it, else its nodes become
// unmatched rows saying why; a failing ambiguous pair is re-paired when a
// re-pairing within its ambiguity class scores better (compare_options::repair).
// Unmatched rows carry no confidence; an unmatched reference row names its
// node's tensor when the run holds it (holds_tensor), so the summary can
// count dumped tensors that were not compared. Exact strategies keep a
// shape mismatch as an `error` row.
// Node names in the report are the graphs' names; an empty or repeated name is
// made unique as "<name>#<index>" so rows and analysis can refer to it.
// Complexity: O(matching) + O(total elements / threads) + O(N + E) analysis,
// plus the repair pass's bounded extra evaluations (sequential).
// Throws: numgap::error for unusable graphs (a cycle, from topological_order;
// whatever the matcher throws); rethrows an exception from the progress
// callback; std::bad_alloc. Never prints.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <numgap/compare/compare_options.hpp>
#include <numgap/compare/describe_quantization.hpp>
#include <numgap/compare/repair_pairings.hpp>
#include <numgap/compare/tensor_source.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/key_index.hpp>
#include <numgap/core/parallel_for.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/graph/concepts.hpp>
#include <numgap/graph/topological_order.hpp>
#include <numgap/kernels/plan/validate_pair.hpp>
#include <numgap/match/match_auto.hpp>
#include <numgap/match/match_options.hpp>
#include <numgap/match/match_result.hpp>
#include <numgap/match/node_list.hpp>
#include <numgap/metric/evaluate.hpp>
#include <numgap/metric/evaluate_segments.hpp>
#include <numgap/metric/evaluation.hpp>
#include <numgap/metric/metric_set.hpp>
#include <numgap/report/analyze_report.hpp>
#include <numgap/report/comparison_report.hpp>

namespace numgap {

namespace detail {
// Whether the n names name_at(i) are all given and unique, the usual case:
// checked without copying a name into a map.
template <class NameAt>
bool names_given_and_unique(std::size_t n, NameAt name_at) {
    if (n >= max_key_positions) return false;
    positional_key_index distinct(name_at, n);
    std::size_t i = 0;
    while (i < n && !name_at(i).empty() && distinct.insert(name_at(i), i).second) ++i;
    return i == n;
}

// Report names for every node of g: its own name, made unique when needed.
template <graph G> std::vector<std::string> report_names(const G& g) {
    const std::size_t n = numgap::num_nodes(g);
    std::vector<std::string> names(n);
    for (std::size_t i = 0; i < n; ++i) names[i] = std::string(numgap::node_name(g, i));
    if (names_given_and_unique(n, [&](std::size_t i) -> const std::string& { return names[i]; })) return names;
    std::unordered_map<std::string, std::size_t> seen;
    seen.reserve(n);
    for (std::size_t i = 0; i < n; ++i) ++seen[names[i]];
    // A suffix may itself be a name the graph uses (`a`, `a`, `a#1`): try
    // further suffixes until the name is free, so every row's name is unique.
    for (std::size_t i = 0; i < n; ++i) {
        if (!names[i].empty() && seen[names[i]] == 1) continue;
        const std::string base = names[i] + "#";
        for (std::size_t suffix = i;; suffix += n) {
            std::string candidate = base + std::to_string(suffix);
            if (seen.emplace(candidate, 1).second) {
                names[i] = std::move(candidate);
                break;
            }
        }
    }
    return names;
}

// The report names of g's nodes (report_names) as `table[i]`. When g's
// node_name gives a const std::string& and every name is given and unique
// (the usual case), the table refers to the graph's own strings: a run of a
// million nodes is not copied name by name for the report. Else it holds
// report_names(g). The graph must outlive the table.
template <graph G>
class report_name_table {
    static constexpr bool can_refer =
        std::is_same_v<decltype(numgap::node_name(std::declval<const G&>(), std::size_t{})), const std::string&>;

public:
    explicit report_name_table(const G& g) : graph_(&g) {
        if constexpr (can_refer)
            if (names_given_and_unique(numgap::num_nodes(g),
                                       [&g](std::size_t i) -> const std::string& { return numgap::node_name(g, i); }))
                return;
        owned_ = report_names(g);
        owns_ = true;
    }
    const std::string& operator[](std::size_t i) const {
        if constexpr (can_refer)
            if (!owns_) return numgap::node_name(*graph_, i);
        return owned_[i];
    }
    // Whether the names are the graph's own strings (for tests).
    bool refers_to_graph() const noexcept { return !owns_; }

private:
    const G* graph_;
    bool owns_ = false;
    std::vector<std::string> owned_;
};

template <class Names>
std::vector<std::string> names_of(const Names& names, const node_list& nodes) {
    std::vector<std::string> result;
    result.reserve(nodes.size());
    for (std::size_t node : nodes) result.push_back(names[node]);
    return result;
}

inline void fill_metrics(group_report& row, const evaluation& result) {
    row.count = result.count;
    row.metrics.clear();
    row.metrics.reserve(result.metrics.size());
    bool all_passed = true;
    for (const metric_result& metric : result.metrics) {
        report_metric entry;
        entry.name = metric.name;
        entry.value = metric.value;
        entry.rule = metric.rule;
        entry.passed = metric.passed;
        all_passed = all_passed && metric.passed;
        row.metrics.push_back(std::move(entry));
    }
    row.status = all_passed ? group_status::pass : group_status::fail;
}

// A check of a whole mapping, left for after the last group that read it.
struct deferred_intact_check {
    std::shared_ptr<const void> mapping; // kept alive until checked; empty: nothing left to check
    void (*check)(const void*) = nullptr;
};

// A holder that can tell its data changed while it was read (io::loaded_tensor:
// a file truncated while mapped) throws here, turning the group into `error`.
// With may_defer, a holder reading a mapping the run keeps open
// (run_mapping()) checks only what costs no system call now and returns the
// mapping's own check, for compare_runs to run once after all groups: a
// million tensors of one safetensors file were a million fstat calls.
template <class Holder>
deferred_intact_check check_intact(const Holder& holder, bool may_defer) {
    if constexpr (requires {
                      holder.run_mapping();
                      holder.check_intact_except_run_mapping_size();
                      holder.run_mapping()->check_intact();
                  }) {
        if (may_defer)
            if (auto mapping = holder.run_mapping()) {
                holder.check_intact_except_run_mapping_size();
                using mapping_type = std::remove_cvref_t<decltype(*mapping)>;
                return {std::move(mapping),
                        [](const void* held) { static_cast<const mapping_type*>(held)->check_intact(); }};
            }
    }
    if constexpr (requires { holder.check_intact(); }) holder.check_intact();
    return {};
}

// Turns `row` into an `error` row for `failure`.
inline void set_error(group_report& row, const error& failure) {
    row.status = group_status::error;
    row.metrics.clear();
    row.message = failure.what();
    row.error_detail = group_error{failure.kind(), failure.where()};
}

// Compares the row's two tensors into the row. With shapes_are_evidence (a
// structural pair), tensors whose shapes differ after axis_order are not
// evaluated: the row is left `error` with a message giving both shapes and the
// function returns true, for repair_pairings to settle.
// With `deferred`, the whole-file checks of tensors read in place from
// mappings the runs keep open are stored there (reference, target) instead of
// run; the caller runs them after the last group (see check_intact).
template <class RefSource, class TargetSource>
bool compare_group(group_report& row, RefSource& reference_source, TargetSource& target_source,
                   const metric_set& metrics, const evaluate_options& options, bool shapes_are_evidence = false,
                   std::pair<deferred_intact_check, deferred_intact_check>* deferred = nullptr) {
    row.error_detail.reset(); // a row compared again (repair) must not keep an old cause
    if (row.reference_tensor.empty() || row.target_tensor.empty()) {
        row.status = group_status::missing;
        row.message = row.reference_tensor.empty()
                          ? "the reference nodes of this group have no output tensor to compare"
                          : "the target nodes of this group have no output tensor to compare";
        return false;
    }
    try {
        auto reference = fetch_tensor(reference_source, row.reference_tensor);
        // The target may take its dtype and shape from the reference (a QNN raw folder).
        auto target = reference ? fetch_tensor_like(target_source, row.target_tensor, view_of(*reference))
                                : fetch_tensor(target_source, row.target_tensor);
        if (!reference || !target) {
            row.status = group_status::missing;
            row.message = !reference && !target
                              ? "neither tensor was dumped (reference '" + row.reference_tensor +
                                    "', target '" + row.target_tensor + "')"
                          : !reference ? "reference tensor '" + row.reference_tensor + "' was not dumped"
                                       : "target tensor '" + row.target_tensor + "' was not dumped";
            return false;
        }
        tensor_view reference_view = view_of(*reference);
        tensor_view target_view = view_of(*target);
        // Name the views after their keys when the source did not, so that
        // validation errors say which tensor is wrong.
        if (reference_view.name().empty()) reference_view.with_name(row.reference_tensor);
        if (target_view.name().empty()) target_view.with_name(row.target_tensor);
        row.dtype_reference = reference_view.type();
        row.dtype_target = target_view.type();
        row.quantization_reference = describe_quantization(reference_view);
        row.quantization_target = describe_quantization(target_view);
        const auto logical = reference_view.logical_shape();
        row.shape.assign(logical.begin(), logical.begin() + reference_view.rank());
        if (shapes_are_evidence) {
            const auto target_logical = target_view.logical_shape();
            const std::vector<std::int64_t> target_shape(target_logical.begin(),
                                                         target_logical.begin() + target_view.rank());
            if (target_shape != row.shape) {
                row.status = group_status::error;
                row.metrics.clear();
                row.error_detail = group_error{error_kind::shape, error_location::of_item(row.target_tensor)};
                row.message = "structure matching paired reference tensor '" + row.reference_tensor + "' (shape " +
                              format_list(row.shape) + ") with target tensor '" + row.target_tensor + "' (shape " +
                              format_list(target_shape) + "), whose shapes differ";
                return true;
            }
        }
        tensor_segment reference_whole, target_whole;
        const segmented_view reference_segments = segments_of(*reference, reference_whole);
        const segmented_view target_segments = segments_of(*target, target_whole);
        if (reference_segments.is_split() || target_segments.is_split()) {
            // Tensor-parallel shards: compared piece by piece, never concatenated.
            reference_whole.view = reference_view;
            target_whole.view = target_view;
            fill_metrics(row, evaluate_segments(reference_segments, target_segments, metrics, options));
            for (const auto& [side, segments] : {std::pair{"reference", reference_segments}, std::pair{"target", target_segments}})
                if (segments.is_split())
                    row.message += (row.message.empty() ? "" : "; ") + std::string(side) + " stored as " +
                                   std::to_string(segments.segments.size()) + " shards along axis " +
                                   std::to_string(segments.axis);
        } else {
            fill_metrics(row, evaluate(reference_view, target_view, metrics, options));
        }
        // What the target's source inferred (a QNN raw file's dtype and shape) is part of the result.
        if constexpr (requires { target->note(); })
            if (!target->note().empty()) row.message += (row.message.empty() ? "" : "; ") + target->note();
        const deferred_intact_check reference_later = check_intact(*reference, deferred != nullptr);
        const deferred_intact_check target_later = check_intact(*target, deferred != nullptr);
        if (deferred != nullptr) *deferred = {reference_later, target_later};
    } catch (const error& failure) {
        set_error(row, failure);
    } catch (const std::exception& failure) {
        row.status = group_status::error;
        row.metrics.clear();
        row.message = failure.what();
    } catch (...) {
        // A source or user metric may throw anything (an int, a foreign
        // library's type); it is still one group's failure, not the run's.
        row.status = group_status::error;
        row.metrics.clear();
        row.message = "unknown exception (not derived from std::exception)";
    }
    return false;
}
} // namespace detail

template <graph ReferenceGraph, graph TargetGraph, class ReferenceSource, class TargetSource>
    requires tensor_source<std::remove_reference_t<ReferenceSource>> &&
             tensor_source<std::remove_reference_t<TargetSource>>
comparison_report compare_runs(const ReferenceGraph& reference_graph, const TargetGraph& target_graph,
                               const match_result& matches, ReferenceSource&& reference_source,
                               TargetSource&& target_source, const metric_set& metrics,
                               const compare_options& options = {}) {
    comparison_report report;
    report.metric_names = metrics.names();

    const detail::report_name_table reference_names(reference_graph);
    const detail::report_name_table target_names(target_graph);
    const std::vector<std::size_t> order = topological_order(reference_graph);
    std::vector<std::size_t> position(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
    report.reference_graph.reserve(order.size());
    for (std::size_t node : order) {
        report_node snapshot;
        snapshot.name = reference_names[node];
        snapshot.op = std::string(numgap::op_type(reference_graph, node));
        for (auto producer : numgap::producers(reference_graph, node))
            snapshot.producers.push_back(position[static_cast<std::size_t>(producer)]);
        std::sort(snapshot.producers.begin(), snapshot.producers.end());
        snapshot.producers.erase(std::unique(snapshot.producers.begin(), snapshot.producers.end()),
                                 snapshot.producers.end());
        report.reference_graph.push_back(std::move(snapshot));
    }

    report.groups.reserve(matches.groups.size() + matches.unmatched_reference.size() +
                          matches.unmatched_target.size());
    for (const match_group& group : matches.groups) {
        group_report& row = report.groups.emplace_back(); // built in place: a row is ~500 bytes
        row.reference_nodes = detail::names_of(reference_names, group.reference_nodes);
        row.target_nodes = detail::names_of(target_names, group.target_nodes);
        row.reference_tensor = group.reference_tensor;
        row.target_tensor = group.target_tensor;
        row.kind = group.kind;
        row.strategy = group.strategy;
        row.confidence = group.confidence;
        row.ambiguous_with = detail::names_of(target_names, group.ambiguous_with);
        row.op = std::string(numgap::op_type(reference_graph, group.reference_output_node));
    }
    const std::size_t compared_groups = report.groups.size();
    // Written by workers at distinct indices: char, not vector<bool>'s shared bits.
    std::vector<char> shapes_differ(compared_groups, 0);

    const std::size_t workers = std::min(resolve_threads(options.threads), std::max<std::size_t>(1, compared_groups));
    std::atomic<std::size_t> next{0};
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
        while (!stop.load(std::memory_order_relaxed)) {
            const std::size_t index = next.fetch_add(1, std::memory_order_relaxed);
            if (index >= compared_groups) return;
            if (options.compare_only && !options.compare_only(index)) {
                report.groups[index].status = group_status::missing;
                report.groups[index].message = "compared by another shard";
            } else {
                std::pair<detail::deferred_intact_check, detail::deferred_intact_check> later;
                shapes_differ[index] =
                    detail::compare_group(report.groups[index], reference_source, target_source, metrics,
                                          options.evaluate, matches.groups[index].strategy == "structure", &later);
                deferred_of_group[index] = {register_check(later.first, 0), register_check(later.second, 1)};
                if (options.bytes_compared != nullptr && report.groups[index].compared()) {
                    const group_report& row = report.groups[index];
                    const auto count = std::uint64_t(row.count);
                    const std::uint64_t bytes = (row.dtype_reference ? storage_bytes(*row.dtype_reference, count) : 0) +
                                                (row.dtype_target ? storage_bytes(*row.dtype_target, count) : 0);
                    options.bytes_compared->fetch_add(bytes, std::memory_order_relaxed);
                }
            }
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
        for (const std::uint32_t id : deferred_of_group[g])
            if (id != 0 && deferred_failures[id - 1] && report.groups[g].compared()) {
                detail::set_error(report.groups[g], *deferred_failures[id - 1]);
                break;
            }
    deferred_of_group = {};

    // The repair pass may re-pair or drop structural groups, so it works on a
    // copy, made only when it has something to look at (a million-group
    // match result is a few hundred MB).
    std::optional<match_result> working;
    detail::repair_outcome repaired;
    if (detail::repair_needs_attention(matches.groups, report.groups, shapes_differ)) {
        working.emplace(matches);
        repaired = detail::repair_pairings(*working, report.groups, shapes_differ, target_graph, target_names,
                                           options.repair, [&](group_report& row, bool shapes_are_evidence) {
                                               return detail::compare_group(row, reference_source, target_source,
                                                                            metrics, options.evaluate,
                                                                            shapes_are_evidence);
                                           });
    }
    const match_result& final_matches = working ? *working : matches;
    if (std::find(repaired.dropped.begin(), repaired.dropped.end(), true) != repaired.dropped.end()) {
        std::size_t kept = 0;
        for (std::size_t g = 0; g < compared_groups; ++g) {
            if (repaired.dropped[g]) continue;
            if (kept != g) report.groups[kept] = std::move(report.groups[g]);
            ++kept;
        }
        report.groups.resize(kept);
    }
    // An unmatched row names the tensor its node dumped (its last output key,
    // when the run holds it), so the summary can count dumped tensors that
    // were never compared; empty when the node dumped nothing.
    auto add_unmatched = [&](const auto& graph, std::vector<std::size_t> nodes, const auto& names,
                             std::vector<std::string> group_report::*side, std::string group_report::*tensor,
                             auto& source, const char* message,
                             const std::unordered_map<std::size_t, std::string>& messages) {
        std::sort(nodes.begin(), nodes.end());
        for (std::size_t node : nodes) {
            group_report row;
            row.*side = {names[node]};
            const auto& keys = numgap::output_keys(graph, node);
            if (!std::empty(keys)) {
                std::string key(*std::prev(std::end(keys)));
                if (holds_tensor(source, key)) row.*tensor = std::move(key);
            }
            row.op = std::string(numgap::op_type(graph, node));
            row.status = group_status::unmatched;
            row.confidence.reset(); // no pairing, so no confidence in one
            const auto special = messages.find(node);
            row.message = special != messages.end() ? special->second : message;
            report.groups.push_back(std::move(row));
        }
    };
    add_unmatched(reference_graph, final_matches.unmatched_reference, reference_names, &group_report::reference_nodes,
                  &group_report::reference_tensor, reference_source, "no target node matches this reference node",
                  repaired.reference_messages);
    add_unmatched(target_graph, final_matches.unmatched_target, target_names, &group_report::target_nodes,
                  &group_report::target_tensor, target_source, "no reference node matches this target node",
                  repaired.target_messages);

    analyze_report(report);
    return report;
}

template <graph ReferenceGraph, graph TargetGraph, class ReferenceSource, class TargetSource>
    requires tensor_source<std::remove_reference_t<ReferenceSource>> &&
             tensor_source<std::remove_reference_t<TargetSource>>
comparison_report compare_runs(const ReferenceGraph& reference_graph, const TargetGraph& target_graph,
                               ReferenceSource&& reference_source, TargetSource&& target_source,
                               const metric_set& metrics, const match_options& matching = {},
                               const compare_options& options = {}) {
    const match_result matches = match_auto(reference_graph, target_graph, matching);
    return compare_runs(reference_graph, target_graph, matches, reference_source, target_source,
                        metrics, options);
}

} // namespace numgap
