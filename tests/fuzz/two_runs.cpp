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
// Oracles: the two JSON reports parse with numgap's own JSON parser, and the
// CSV parses as RFC 4180 with one record per group, all as wide as the header.
// The writers are also held to what issue 8 asks of them (defects 2-4): no
// CSV text cell starting with = + - @ TAB, CR or NUL, no control character
// (but newline) and no bidi override in the summary table, and no NUL or
// other control character in the DOT file.
// NUMGAP_FUZZ_RUNS_DIR=<dir> writes the runs to <dir>/ref and <dir>/target
// instead and leaves them there: how to turn a finding into run directories
// that `numgap compare` and a regression test can use (README.md).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
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

// A namespace of its own: the targets are compiled together (CMakeLists.txt).
namespace two_runs_target {

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

[[noreturn]] void report_defect(const std::string& what) {
    std::fprintf(stderr, "numgap fuzz: %s\n", what.c_str());
    std::abort();
}

// `text` with every byte outside printable ASCII as \xNN, for the messages above.
std::string visible(std::string_view text) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte < 0x7f) {
            out += c;
        } else {
            out += "\\x";
            out += digits[byte >> 4];
            out += digits[byte & 15];
        }
    }
    return out;
}

// RFC 4180 records (CRLF-terminated, "" inside quotes); nullopt when malformed.
std::optional<std::vector<std::vector<std::string>>> parse_csv(std::string_view text) {
    std::vector<std::vector<std::string>> records;
    std::vector<std::string> record;
    std::string field;
    std::size_t at = 0;
    while (at < text.size()) {
        if (text[at] == '"') {
            for (++at;; ++at) {
                if (at >= text.size()) return std::nullopt;
                if (text[at] != '"') {
                    field += text[at];
                } else if (at + 1 < text.size() && text[at + 1] == '"') {
                    field += '"';
                    ++at;
                } else {
                    ++at;
                    break;
                }
            }
        }
        for (; at < text.size() && text[at] != ',' && text[at] != '\r'; ++at) {
            if (text[at] == '"' || text[at] == '\n') return std::nullopt;
            field += text[at];
        }
        record.push_back(std::move(field));
        field.clear();
        if (at < text.size() && text[at] == ',') {
            ++at;
            continue;
        }
        if (text.substr(at, 2) != "\r\n") return std::nullopt;
        at += 2;
        records.push_back(std::move(record));
        record.clear();
    }
    if (!record.empty()) return std::nullopt;
    return records;
}

void check_csv(const std::string& csv, std::size_t groups) {
    const auto records = parse_csv(csv);
    if (!records) report_defect("the CSV writer wrote malformed CSV: " + visible(csv));
    if (records->size() != groups + 1) report_defect("the CSV has " + std::to_string(records->size()) +
                                                     " records for " + std::to_string(groups) + " groups");
    for (const auto& record : *records)
        if (record.size() != records->front().size()) report_defect("a CSV record is not as wide as the header");
    // Text cells: the node, tensor, kind, strategy and op columns, the message
    // and the alternatives' names.
    const auto& header = records->front();
    std::vector<std::size_t> text_columns = {0, 1, 2, 3, 4, 5, 6};
    for (std::size_t column = 0; column < header.size(); ++column)
        if (header[column] == "message" || header[column] == "ambiguous_with") text_columns.push_back(column);
    for (std::size_t r = 1; r < records->size(); ++r)
        for (std::size_t column : text_columns) {
            const std::string& cell = (*records)[r][column];
            if (!cell.empty() && std::string_view("=+-@\t\r\0", 7).find(cell.front()) != std::string_view::npos)
                report_defect("CSV cell '" + visible(cell) + "' would be a spreadsheet formula");
        }
}

// Control characters other than newline (and tab, where `terminal` is false),
// and for a terminal also bidi overrides (U+202A..U+202E, U+2066..U+2069),
// which reorder what it shows.
void check_printable(std::string_view text, const char* writer, bool terminal) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        const bool control = (c < 0x20 && c != '\n' && (terminal || c != '\t')) || c == 0x7f;
        const bool bidi = terminal && c == 0xe2 && i + 2 < text.size() &&
                          ((text[i + 1] == '\x80' && text[i + 2] >= '\xaa' && text[i + 2] <= '\xae') ||
                           (text[i + 1] == '\x81' && text[i + 2] >= '\xa6' && text[i + 2] <= '\xa9'));
        if (control || bidi)
            report_defect(std::string("the ") + writer + " output holds " + visible(text.substr(i, bidi ? 3 : 1)) +
                          " at byte " + std::to_string(i));
    }
}

void must_parse_as_json(const std::string& text, const char* writer) {
    try {
        (void)numgap::io::parse_json(text, writer);
    } catch (const numgap::error& failure) {
        report_defect(std::string("the ") + writer + " writer wrote invalid JSON: " + failure.what());
    }
}

// The one place this target calls the comparison and report API.
void compare_and_report(const std::filesystem::path& reference_path, const std::filesystem::path& target_path,
                        const std::filesystem::path& dump_directory) {
    const numgap::io::run_directory reference = numgap::io::run_directory::open(reference_path);
    const numgap::io::run_directory target = numgap::io::run_directory::open(target_path);
    // With the shapes from the headers, as the CLI does when structure matching may run.
    const numgap::basic_graph reference_graph = numgap::run_graph(reference, true);
    const numgap::basic_graph target_graph = numgap::run_graph(target, true);
    numgap::compare_options options;
    options.threads = 1; // deterministic, and libFuzzer's own -jobs give the parallelism
    const numgap::comparison_report report =
        numgap::compare_runs(reference_graph, target_graph, reference, target,
                             numgap::fuzz::every_builtin_metric(), numgap::match_options{}, options);

    check_csv(numgap::to_csv(report), report.groups.size());
    const std::string dot = numgap::to_dot(report);
    const std::string table = numgap::format_summary_table(report);
    check_printable(dot, "DOT", false);
    check_printable(table, "summary table", true);
    must_parse_as_json(numgap::to_json(report), "JSON report");
    must_parse_as_json(numgap::to_model_explorer(report), "Model Explorer");
    numgap::fuzz::reset_directory(dump_directory);
    (void)numgap::dump_failing_pairs(report, reference, target, dump_directory);
}

NUMGAP_FUZZ_TARGET(two_runs) {
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

} // namespace two_runs_target
