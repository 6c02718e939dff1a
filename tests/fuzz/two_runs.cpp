// libFuzzer target: a whole comparison of two run directories
// (compare/compare_runs.hpp) and every report writer (report/).
//
// The input is a list of files, each introduced by a line "@@ <path>\n" and
// running to the next "\n@@ " or the end:
//     @@ ref/graph.json
//     {"nodes": [{"name": "conv", "inputs": ["x"]}]}
//     @@ ref/conv.npy
//     <.npy bytes>
//     @@ target/conv.npy
//     ...
// The first path component picks the run ("ref" or "target"); the rest is
// written under that run's directory in the process's scratch directory.
// Path components other than [A-Za-z0-9._-]{1,64}, "." and ".." make the file be
// skipped: the decoder itself never writes outside the scratch directory
// (what the runs' graph.json files then point at is numgap's business).
// Both runs are opened, their graphs built and matched (match_auto), every
// group compared with every built-in metric, and the report written as CSV,
// JSON, DOT, Model Explorer JSON and the summary table, in memory (Graphviz
// is never run); the failing pairs are dumped into the scratch directory.
// The two JSON reports must parse with numgap's own JSON parser.
// NUMGAP_FUZZ_RUNS_DIR=<dir> writes the runs to <dir>/ref and <dir>/target
// instead and leaves them there: how to turn a finding into run directories
// that `numgap compare` and a regression test can use (README.md).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/compare/compare_options.hpp>
#include <numgap/compare/compare_runs.hpp>
#include <numgap/compare/dump_failing_pairs.hpp>
#include <numgap/compare/run_graph.hpp>
#include <numgap/core/error.hpp>
#include <numgap/io/json.hpp>
#include <numgap/io/run_directory.hpp>
#include <numgap/report/comparison_report.hpp>
#include <numgap/report/csv.hpp>
#include <numgap/report/dot.hpp>
#include <numgap/report/json.hpp>
#include <numgap/report/model_explorer.hpp>
#include <numgap/report/summary_table.hpp>

#include "fuzz_support.hpp"

namespace {

constexpr std::string_view file_marker = "@@ ";
constexpr std::size_t max_files = 32;

bool safe_component(std::string_view component) {
    if (component.empty() || component.size() > 64 || component == "." || component == "..") return false;
    for (char c : component)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-'))
            return false;
    return true;
}

// Writes the input's files under scratch/ref and scratch/target.
void write_runs(std::string_view input, const std::filesystem::path& reference, const std::filesystem::path& target) {
    numgap::fuzz::reset_directory(reference);
    numgap::fuzz::reset_directory(target);
    std::size_t files = 0;
    std::size_t start = input.substr(0, file_marker.size()) == file_marker ? 0 : input.find("\n@@ ");
    while (start != std::string_view::npos && files < max_files) {
        if (input[start] == '\n') ++start;
        const std::size_t path_begin = start + file_marker.size();
        const std::size_t path_end = input.find('\n', path_begin);
        if (path_end == std::string_view::npos) break;
        const std::size_t next = input.find("\n@@ ", path_end);
        const std::string_view content =
            input.substr(path_end + 1, next == std::string_view::npos ? std::string_view::npos : next - path_end - 1);
        start = next;

        std::string_view path = input.substr(path_begin, path_end - path_begin);
        const std::size_t slash = path.find('/');
        const std::string_view run = path.substr(0, slash);
        if (slash == std::string_view::npos || (run != "ref" && run != "target")) continue;
        std::filesystem::path file = run == "ref" ? reference : target;
        bool safe = true;
        for (std::string_view rest = path.substr(slash + 1); safe;) {
            const std::size_t end = rest.find('/');
            safe = safe_component(rest.substr(0, end));
            file /= std::string(rest.substr(0, end));
            if (end == std::string_view::npos) break;
            rest = rest.substr(end + 1);
        }
        if (!safe) continue;
        // A name the file system refuses ("ref/a" then "ref/a/b", a component
        // too long) only means that file is not part of the runs.
        std::error_code not_created;
        std::filesystem::create_directories(file.parent_path(), not_created);
        const std::span<const std::byte> bytes{reinterpret_cast<const std::byte*>(content.data()), content.size()};
        if (not_created || !numgap::fuzz::write_file(file, bytes)) continue;
        ++files;
    }
}

void must_parse_as_json(const std::string& text, const char* writer) {
    try {
        (void)numgap::io::parse_json(text, writer);
    } catch (const numgap::error& failure) {
        std::fprintf(stderr, "numgap fuzz: the %s writer wrote invalid JSON: %s\n", writer, failure.what());
        std::abort();
    }
}

// The one place this target calls the comparison and report API.
void compare_and_report(const std::filesystem::path& reference_path, const std::filesystem::path& target_path,
                        const std::filesystem::path& dump_directory) {
    const numgap::io::run_directory reference = numgap::io::run_directory::open(reference_path);
    const numgap::io::run_directory target = numgap::io::run_directory::open(target_path);
    const numgap::basic_graph reference_graph = numgap::run_graph(reference.manifest(), reference.keys());
    const numgap::basic_graph target_graph = numgap::run_graph(target.manifest(), target.keys());
    numgap::compare_options options;
    options.threads = 1; // deterministic, and libFuzzer's own -jobs give the parallelism
    const numgap::comparison_report report =
        numgap::compare_runs(reference_graph, target_graph, reference, target,
                             numgap::fuzz::every_builtin_metric(), numgap::match_options{}, options);

    (void)numgap::to_csv(report);
    (void)numgap::to_dot(report);
    (void)numgap::format_summary_table(report);
    must_parse_as_json(numgap::to_json(report), "JSON report");
    must_parse_as_json(numgap::to_model_explorer(report), "Model Explorer");
    numgap::fuzz::reset_directory(dump_directory);
    (void)numgap::dump_failing_pairs(report, reference, target, dump_directory);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::filesystem::path scratch = [] {
        const char* kept = std::getenv("NUMGAP_FUZZ_RUNS_DIR");
        return kept != nullptr && *kept != '\0' ? std::filesystem::path(kept) : numgap::fuzz::scratch_directory();
    }();
    write_runs({reinterpret_cast<const char*>(data), size}, scratch / "ref", scratch / "target");
    try {
        compare_and_report(scratch / "ref", scratch / "target", scratch / "dump");
    } catch (const numgap::error& failure) {
        numgap::fuzz::refused(failure);
    }
    return 0;
}
