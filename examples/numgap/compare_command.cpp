// `numgap compare` (compare_command.hpp).
#include "compare_command.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <numgap/compare.hpp>
#include <numgap/graph.hpp>
#include <numgap/io.hpp>
#include <numgap/match.hpp>
#include <numgap/metric.hpp>
#include <numgap/report.hpp>

#include "keep_until_exit.hpp"
#include "phase_timings.hpp"
#include "progress_display.hpp"
#include "release_memory.hpp"
#include "report_outputs.hpp"

namespace numgap_cli {

namespace {
// Calls make_reference() and make_target(), on two threads when `threads`
// (numgap's thread-count rule) allows: the runs are independent, and opening
// a run of a million nodes is seconds of parsing. Whatever the threads, the
// results and the error are those of calling them in turn: the reference's
// error wins over the target's.
template <class MakeReference, class MakeTarget>
auto for_both_runs(std::size_t threads, MakeReference make_reference, MakeTarget make_target) {
    std::optional<decltype(make_reference())> reference;
    std::optional<decltype(make_target())> target;
    std::exception_ptr reference_failure, target_failure;
    const std::size_t workers = std::min<std::size_t>(2, numgap::resolve_threads(threads));
    numgap::parallel_for(workers, [&](std::size_t worker) {
        if (worker == 0) {
            try {
                reference.emplace(make_reference());
            } catch (...) {
                reference_failure = std::current_exception();
                return;
            }
            if (workers == 2) return; // worker 1 makes the target
        }
        try {
            target.emplace(make_target());
        } catch (...) {
            target_failure = std::current_exception();
        }
    });
    if (reference_failure) std::rethrow_exception(reference_failure);
    if (target_failure) std::rethrow_exception(target_failure);
    return std::pair(std::move(*reference), std::move(*target));
}

numgap::metric_set build_metrics(const std::vector<std::string>& specs) {
    if (specs.empty()) return numgap::metric_set::defaults();
    numgap::metric_set metrics;
    for (const std::string& spec : specs) {
        const std::size_t colon = spec.find(':');
        const std::string name = spec.substr(0, colon);
        if (name.empty()) throw usage_error{"--metric '" + spec + "' has no metric name"};
        std::optional<numgap::pass_rule> rule;
        if (colon != std::string::npos) {
            rule = numgap::parse_pass_rule(spec.substr(colon + 1));
            if (!rule)
                throw usage_error{"--metric '" + spec + "': '" + spec.substr(colon + 1) +
                                  "' is not a rule; write an operator (>=, >, <=, <, ==) and a number, "
                                  "e.g. cosine:>=0.999"};
        }
        metrics.add_builtin(name, rule);
    }
    return metrics;
}

numgap::match_options build_match_options(const compare_arguments& arguments) {
    numgap::match_options options;
    if (!arguments.map.empty()) options.explicit_mapping = numgap::io::read_mapping_file(arguments.map);
    if (!arguments.name_rules.empty()) {
        numgap::common_name_normalizer normalizer{true, false, false};
        for (const std::string& rule : arguments.name_rules) {
            if (rule == "output-suffix" || rule == "common") normalizer.strip_output_suffixes = true;
            if (rule == "separators" || rule == "common") normalizer.unify_separators = true;
            if (rule == "case") normalizer.case_sensitive = false;
        }
        options.normalize_name = normalizer;
    }
    return options;
}

// The explicit mapping (--map) comes first whatever the strategy: it overrides every other.
numgap::match_result run_matcher(const std::string& strategy, const numgap::basic_graph& reference,
                                 const numgap::basic_graph& target, const numgap::match_options& options) {
    if (strategy == "name") return numgap::match_by_name(reference, target, options); // applies it itself
    const numgap::match_result explicit_pairs = numgap::match_explicit(reference, target, options);
    if (strategy == "handle") return numgap::match_by_handle(reference, target, options, explicit_pairs);
    if (strategy == "structure") return numgap::match_by_structure(reference, target, options, explicit_pairs);
    return numgap::match_auto(reference, target, options);
}

// Opens one run; its debug buffer (an ETDump's tensor data) is given by `flag`.
numgap::io::run_directory open_run(const std::string& path, const std::string& debug_buffer, std::string_view flag,
                                   numgap::io::read_policy policy,
                                   const std::optional<std::filesystem::path>& overlay) {
    if (!debug_buffer.empty() && !numgap::io::is_etdump_run(path))
        throw usage_error{std::string(flag) + " names a debug buffer, but run '" + path + "' is not an ETDump"};
    policy.debug_buffer = debug_buffer;
    return numgap::io::run_directory::open(path, policy, overlay);
}

// Everything that changes what a shard compares or finds, spelled once, for
// the fingerprint merge checks (paths are left out: a run may sit at another
// path on each machine; the graphs, match result and sizes are hashed anyway).
std::string result_options_text(const compare_arguments& arguments, const numgap::io::run_directory& reference_run,
                                const numgap::io::run_directory& target_run) {
    std::string text = "match=" + arguments.match + ";repair=" + std::to_string(int(arguments.repair));
    for (const std::string& metric : arguments.metrics) text += ";metric=" + metric;
    for (const std::string& rule : arguments.name_rules) text += ";name-rule=" + rule;
    const numgap::io::read_policy& reading = arguments.reading;
    text += ";max-inflated=" + std::to_string(reading.max_inflated_bytes);
    text += ";raw-dtype=" + std::string(reading.raw_dtype ? numgap::name_of(*reading.raw_dtype) : "");
    text += ";raw-layout=" + std::to_string(int(reading.raw_tensor_layout));
    text += ";reference-bytes=" + std::to_string(reference_run.total_bytes());
    text += ";target-bytes=" + std::to_string(target_run.total_bytes());
    return text;
}

int run_shard(const compare_arguments& arguments, const numgap::basic_graph& reference_graph,
              const numgap::basic_graph& target_graph, const numgap::match_result& matches,
              const numgap::io::run_directory& reference_run, const numgap::io::run_directory& target_run,
              const numgap::metric_set& metrics, numgap::compare_options options) {
    const std::vector<std::uint64_t> group_bytes = numgap::estimate_group_bytes(matches, reference_run, target_run);
    numgap::partial_report partial;
    {
        // The shard's share of the bytes is planned inside compare_shard: groups only.
        progress_display progress(arguments.quiet, 0);
        if (progress.enabled())
            options.progress = [&progress](std::size_t done, std::size_t total) { progress.groups(done, total); };
        partial = numgap::compare_shard(reference_graph, target_graph, matches, reference_run, target_run, metrics,
                                        options, *arguments.shard, group_bytes,
                                        result_options_text(arguments, reference_run, target_run));
    }
    numgap::write_partial_report(partial, arguments.outputs.json);
    std::cout << "shard " << partial.shard << "/" << partial.shards << ": " << partial.owned_groups.size() << " of "
              << partial.match_groups << " groups (" << partial.shard_bytes << " bytes estimated), "
              << partial.rows.size() << " rows; partial report written to "
              << numgap::terminal_text(arguments.outputs.json) << "\n";
    return exit_pass;
}

struct run_overlays {
    std::optional<std::filesystem::path> reference, target;
};

// Which overlay graph.json each run is opened with (the rules in the usage
// text): per-side flags as given; --overlay for every run that takes one (a
// file or a QNN raw folder; a run directory has its own graph.json). A file
// run given none takes a graph.json beside it (run_overlay.hpp): when both
// runs would take the same one, it may describe only one of them, so say so.
run_overlays choose_overlays(const compare_arguments& arguments) {
    const auto takes_overlay = [](const std::string& run) {
        return !std::filesystem::is_directory(run) || numgap::io::qnn_raw_source::looks_like(run);
    };
    run_overlays chosen{arguments.reference_overlay, arguments.target_overlay};
    if (arguments.overlay) {
        const bool reference = takes_overlay(arguments.reference), target = takes_overlay(arguments.target);
        if (!reference && !target)
            throw usage_error{"--overlay '" + arguments.overlay->string() + "': both runs are run directories, which "
                              "take their graph from their own graph.json"};
        if (reference) chosen.reference = arguments.overlay;
        if (target) chosen.target = arguments.overlay;
        if (reference && target)
            std::cerr << "numgap: --overlay '" << numgap::terminal_text(arguments.overlay->string())
                      << "' describes both runs (give each its own with --reference-overlay and --target-overlay)\n";
        return chosen;
    }
    // The graph.json a run reads without being told: a directory's own, or
    // the one beside a file run given no overlay.
    const auto unnamed_graph_json = [](const std::string& run, const std::optional<std::filesystem::path>& given)
        -> std::pair<std::optional<std::filesystem::path>, bool /* beside a file */> {
        if (given) return {std::nullopt, false};
        const std::filesystem::path file = numgap::io::split_run_selector(run).file;
        std::error_code failure;
        if (!std::filesystem::is_directory(file, failure)) return {numgap::io::sibling_overlay_of(file), true};
        if (std::filesystem::is_regular_file(file / "graph.json", failure)) return {file / "graph.json", false};
        return {std::nullopt, false};
    };
    const auto [reference_graph, reference_beside] = unnamed_graph_json(arguments.reference, chosen.reference);
    const auto [target_graph, target_beside] = unnamed_graph_json(arguments.target, chosen.target);
    std::error_code failure;
    if (reference_graph && target_graph && (reference_beside || target_beside) &&
        std::filesystem::equivalent(*reference_graph, *target_graph, failure))
        std::cerr << "numgap: warning: the reference and the target both take their graph and tensor metadata from '"
                  << numgap::terminal_text(reference_graph->string())
                  << "' (a graph.json beside a run file is used without being named); if it describes only one "
                     "run, name each file run's overlay with --reference-overlay or --target-overlay\n";
    return chosen;
}

} // namespace

int run_compare(const compare_arguments& arguments) {
    phase_timings timings;
    const numgap::metric_set metrics = build_metrics(arguments.metrics);
    const run_overlays overlays = choose_overlays(arguments);
    auto runs = for_both_runs(
        arguments.threads,
        [&] {
            return open_run(arguments.reference, arguments.reference_debug_buffer, "--reference-debug-buffer",
                            arguments.reading, overlays.reference);
        },
        [&] {
            return open_run(arguments.target, arguments.target_debug_buffer, "--debug-buffer", arguments.reading,
                            overlays.target);
        });
    // Names, not structured bindings: clang 14 cannot capture those in lambdas.
    numgap::io::run_directory& reference_run = runs.first;
    numgap::io::run_directory& target_run = runs.second;
    timings.end_phase("open runs");
    for (const auto* run : {&reference_run, &target_run})
        for (const std::string& note : run->notes()) std::cerr << "numgap: " << numgap::terminal_text(note) << "\n";
    // Shapes only help structural matching; reading them costs one small read
    // per .npy file (most of the graphs' cost for a million small tensors),
    // and even declared ones a lookup and a few hundred bytes per node, so
    // only when it runs. With --match auto the exact strategies usually pair
    // every reference node, leaving structure nothing to do: match without
    // shapes first, and again with them only when structure had reference
    // nodes to work on (the result then is exactly what matching with shapes
    // from the start gives).
    const bool structure_only = arguments.match == "structure";
    // The graphs hold what the comparison needs of graph.json's nodes.
    const auto graph_of = [structure_only](numgap::io::run_directory& run) {
        numgap::basic_graph graph =
            numgap::run_graph(run, structure_only ? numgap::run_graph_shapes::stored : numgap::run_graph_shapes::none);
        run.release_nodes();
        return graph;
    };
    auto graphs = for_both_runs(
        arguments.threads, [&] { return graph_of(reference_run); }, [&] { return graph_of(target_run); });
    numgap::basic_graph& reference_graph = graphs.first;
    numgap::basic_graph& target_graph = graphs.second;
    release_memory();
    timings.end_phase("build run graphs");
    const numgap::match_options match_options = build_match_options(arguments);
    numgap::match_result matches = run_matcher(arguments.match, reference_graph, target_graph, match_options);
    const bool structure_had_work =
        !matches.unmatched_reference.empty() ||
        std::any_of(matches.groups.begin(), matches.groups.end(),
                    [](const numgap::match_group& group) { return group.strategy == "structure"; });
    if (arguments.match == "auto" && structure_had_work) {
        numgap::add_stored_shapes(reference_graph, reference_run);
        numgap::add_stored_shapes(target_graph, target_run);
        matches = run_matcher(arguments.match, reference_graph, target_graph, match_options);
    }
    release_memory(); // what the matchers' indexes held
    timings.end_phase("match");

    numgap::compare_options options;
    options.threads = arguments.threads;
    options.repair = arguments.repair;
    if (arguments.shard) return run_shard(arguments, reference_graph, target_graph, matches, reference_run, target_run,
                                          metrics, options);
    numgap::compared_groups compared;
    {
        progress_display progress(arguments.quiet, reference_run.total_bytes() + target_run.total_bytes());
        if (progress.enabled()) {
            options.progress = [&progress](std::size_t done, std::size_t total) { progress.groups(done, total); };
            options.bytes_compared = &progress.bytes();
        }
        compared =
            numgap::compare_groups(reference_graph, target_graph, matches, reference_run, target_run, metrics, options);
    }
    timings.end_phase("compare");
    // The report needs the graphs and the match result, not the runs: their
    // specs, indexes and mapped files go before its rows are made (for a
    // million small tensors each is several hundred MB), unless the failing
    // pairs are dumped from them afterwards.
    if (arguments.dump_failing.empty()) {
        release_memory(std::move(runs));
        timings.end_phase("release runs");
    }
    // The graphs and the match result are handed over: each goes as soon as
    // the report has what it needs of it. Their pages are not trimmed: the
    // report phase is not where the peak is (the match and compare phases
    // are), and the rows reuse the freed memory; the three trims cost ~0.1 s
    // at a million nodes, a tenth of the phase.
    numgap::comparison_report report = numgap::build_report(std::move(compared), std::move(reference_graph),
                                                            std::move(target_graph), std::move(matches));
    timings.end_phase("report");
    print_and_write(report, arguments.outputs);
    timings.end_phase("table and reports");
    if (!arguments.dump_failing.empty()) {
        const std::size_t written = numgap::dump_failing_pairs(report, reference_run, target_run,
                                                               arguments.dump_failing);
        std::cout << "wrote " << written << " failing pairs to "
                  << numgap::terminal_text(arguments.dump_failing) << "\n";
    }

    const int status = report_exit_status(report);
    keep_until_exit(std::move(report), std::move(runs));
    return status;
}

} // namespace numgap_cli
