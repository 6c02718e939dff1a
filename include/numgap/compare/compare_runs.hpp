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
// report; a tensor read in place from a file the run keeps mapped (a
// safetensors key) gives its pages back once compared
// (loaded_tensor::release_run_pages), so that holds for a run kept in one
// large file too. Results do not depend on the thread count.
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
// compare_runs is build_report(compare_groups(...)) (build_report.hpp,
// compare_groups.hpp): a caller that wants to release the tensor sources
// before the report's rows exist (a run of a million tensors) calls the two
// itself, as `numgap compare` does.
// Complexity: O(matching) + O(total elements / threads) + O(N + E) analysis,
// plus the repair pass's bounded extra evaluations (sequential).
// Throws: numgap::error for unusable graphs (a cycle, from topological_order;
// whatever the matcher throws); rethrows an exception from the progress
// callback; std::bad_alloc. Never prints.
#include <type_traits>

#include <numgap/compare/build_report.hpp>
#include <numgap/compare/compare_groups.hpp>
#include <numgap/compare/compare_options.hpp>
#include <numgap/compare/tensor_source.hpp>
#include <numgap/graph/concepts.hpp>
#include <numgap/match/match_auto.hpp>
#include <numgap/match/match_options.hpp>
#include <numgap/match/match_result.hpp>
#include <numgap/metric/metric_set.hpp>
#include <numgap/report/comparison_report.hpp>

namespace numgap {

template <graph ReferenceGraph, graph TargetGraph, class ReferenceSource, class TargetSource>
    requires tensor_source<std::remove_reference_t<ReferenceSource>> &&
             tensor_source<std::remove_reference_t<TargetSource>>
comparison_report compare_runs(const ReferenceGraph& reference_graph, const TargetGraph& target_graph,
                               const match_result& matches, ReferenceSource&& reference_source,
                               TargetSource&& target_source, const metric_set& metrics,
                               const compare_options& options = {}) {
        return build_report(
            compare_groups(reference_graph, target_graph, matches, reference_source, target_source, metrics, options),
            reference_graph, target_graph, matches);
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
