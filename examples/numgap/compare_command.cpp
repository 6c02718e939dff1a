// `numgap compare` (compare_command.hpp).
#include "compare_command.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <unistd.h>

#include <numgap/compare.hpp>
#include <numgap/graph.hpp>
#include <numgap/io.hpp>
#include <numgap/match.hpp>
#include <numgap/metric.hpp>
#include <numgap/report.hpp>

#include "render_svg.hpp"

namespace numgap_cli {

namespace {
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

// Progress on stderr, only for a terminal and only once the run has taken a second.
class progress_line {
public:
    progress_line() : enabled_(isatty(STDERR_FILENO) == 1), start_(clock::now()) {}
    void operator()(std::size_t done, std::size_t total) {
        if (!enabled_ || clock::now() - start_ < std::chrono::seconds(1)) return;
        if (clock::now() - last_ < std::chrono::milliseconds(100) && done != total) return;
        last_ = clock::now();
        std::fprintf(stderr, "\rnumgap: compared %zu of %zu groups", done, total);
        std::fflush(stderr);
        shown_ = true;
    }
    ~progress_line() {
        if (shown_) std::fprintf(stderr, "\r\033[K");
    }

private:
    using clock = std::chrono::steady_clock;
    bool enabled_;
    bool shown_ = false;
    clock::time_point start_;
    clock::time_point last_{};
};

// Opens one run; its debug buffer (an ETDump's tensor data) is given by `flag`.
numgap::io::run_directory open_run(const std::string& path, const std::string& debug_buffer, std::string_view flag,
                                   numgap::io::read_policy policy,
                                   const std::optional<std::filesystem::path>& overlay) {
    if (!debug_buffer.empty() && !numgap::io::is_etdump_run(path))
        throw usage_error{std::string(flag) + " names a debug buffer, but run '" + path + "' is not an ETDump"};
    policy.debug_buffer = debug_buffer;
    return numgap::io::run_directory::open(path, policy, overlay);
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
    const numgap::metric_set metrics = build_metrics(arguments.metrics);
    const run_overlays overlays = choose_overlays(arguments);
    auto reference_run = open_run(arguments.reference, arguments.reference_debug_buffer, "--reference-debug-buffer",
                                  arguments.reading, overlays.reference);
    auto target_run = open_run(arguments.target, arguments.target_debug_buffer, "--debug-buffer", arguments.reading,
                               overlays.target);
    for (const auto* run : {&reference_run, &target_run})
        for (const std::string& note : run->notes()) std::cerr << "numgap: " << numgap::terminal_text(note) << "\n";
    // Shapes from the .npy headers only help structural matching; reading them
    // costs one small read per file, so only when it may run.
    const bool structure_may_run = arguments.match == "auto" || arguments.match == "structure";
    const numgap::basic_graph reference_graph = numgap::run_graph(reference_run, structure_may_run);
    const numgap::basic_graph target_graph = numgap::run_graph(target_run, structure_may_run);
    const numgap::match_result matches =
        run_matcher(arguments.match, reference_graph, target_graph, build_match_options(arguments));

    numgap::compare_options options;
    options.threads = arguments.threads;
    options.repair = arguments.repair;
    numgap::comparison_report report;
    {
        progress_line progress;
        options.progress = [&progress](std::size_t done, std::size_t total) { progress(done, total); };
        report = numgap::compare_runs(reference_graph, target_graph, matches, reference_run, target_run,
                                      metrics, options);
    }

    std::cout << numgap::format_summary_table(report);
    std::cout.flush();

    if (!arguments.csv.empty()) numgap::write_csv(report, arguments.csv);
    if (!arguments.json.empty()) numgap::write_json(report, arguments.json);
    if (!arguments.model_explorer.empty()) numgap::write_model_explorer(report, arguments.model_explorer);
    if (!arguments.dot.empty()) numgap::write_dot(report, arguments.dot);
    if (!arguments.svg.empty()) {
        // Graphviz reads the --dot file, else a temporary next to the SVG:
        // no file the user did not name is written, replaced or removed.
        std::optional<numgap::io::temporary_file> temporary_dot;
        std::filesystem::path dot_path = arguments.dot;
        if (dot_path.empty()) {
            temporary_dot.emplace(arguments.svg + ".dot", "DOT graph");
            dot_path = temporary_dot->path();
            numgap::write_dot(report, dot_path);
        }
        try {
            render_svg(dot_path, arguments.svg);
        } catch (const numgap::error& failure) {
            if (!temporary_dot) throw;
            // Keep the graph so it can be rendered elsewhere, without replacing a file.
            throw numgap::error(std::string(failure.what()) + "; the DOT graph was kept as '" +
                                temporary_dot->keep().string() + "'");
        }
    }
    if (!arguments.dump_failing.empty()) {
        const std::size_t written = numgap::dump_failing_pairs(report, reference_run, target_run,
                                                               arguments.dump_failing);
        std::cout << "wrote " << written << " failing pairs to "
                  << numgap::terminal_text(arguments.dump_failing) << "\n";
    }

    if (report.summary.errors != 0) {
        for (const numgap::group_report& group : report.groups)
            if (group.status == numgap::group_status::error)
                std::cerr << "numgap: error: group '"
                          << numgap::terminal_text(group.reference_nodes.empty() ? std::string("?")
                                                                                 : group.reference_nodes.back())
                          << "': " << numgap::terminal_text(group.message) << "\n";
        return exit_unusable;
    }
    if (report.summary.passed + report.summary.failed == 0) {
        // Every row is unmatched or missing: passing here would let a CI gate
        // succeed without a single comparison (e.g. target keys that never match).
        std::cerr << "numgap: nothing was compared: no group has both tensors ("
                  << report.summary.unmatched_reference << " unmatched reference nodes, "
                  << report.summary.unmatched_target << " unmatched target nodes, "
                  << report.summary.missing << " missing groups); check that the runs' keys match\n";
        return exit_fail;
    }
    if (const std::string warning = numgap::coverage_warning(report.summary); !warning.empty()) {
        // Mirrors "nothing compared": a pass over a small fraction of the
        // model is not a pass a CI gate may accept.
        std::cerr << "numgap: " << warning << "\n";
        return exit_fail;
    }
    return report.summary.failed == 0 ? exit_pass : exit_fail;
}

} // namespace numgap_cli
