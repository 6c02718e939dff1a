#pragma once
// format_summary_table: the human-readable summary the CLI prints — worst
// groups first, then the counts, the first divergence and the error origins.
//
// Order of rows: errors, then failures (error origins first, then more failed
// metrics first, then the worse value of the first thresholded metric — lower
// for ">" rules, higher for "<" rules), then missing dumps, then passes in
// reference order; unmatched nodes are counted, not given rows; after the
// counts one line names the first `max_unmatched_names` unmatched reference
// nodes ("... and N more"), and when more than half of the reference nodes
// with dumped tensors are unmatched (mostly_unmatched) a warning line says
// how many were not compared and which options can pair them. At most
// `max_rows` rows are shown; the rest are summarised in one line, because a
// 5,000-layer model must not bury the answer. The library never prints: this
// returns the text.
// Every piece of text from the runs (names, ops, dtypes, messages, metric
// names) goes through terminal_text (report/terminal_text.hpp), so the table
// holds no control character, and columns are aligned by terminal_width.
// The error origins and suspect groups after the counts are named up to
// `max_listed_names` each, then counted.
// The "match" column gives each group's strategy, its confidence when below
// 1, a '?' when the pairing is ambiguous and "repaired" when the values chose
// the target; a legend under the table explains the marks that appear, and
// the summary lists suspect groups (failing ambiguous pairs, never named as
// divergence or origin) and how many pairings the values repaired.
// Complexity: O(G log R) for G groups and R = max_rows shown. Throws: std::bad_alloc.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <numgap/metric/rule.hpp>
#include <numgap/report/comparison_report.hpp>
#include <numgap/report/detail/text.hpp>
#include <numgap/report/format_double.hpp>
#include <numgap/report/terminal_text.hpp>

namespace numgap {

struct summary_table_options {
    std::size_t max_rows = 25;
    std::size_t max_name_width = 40;
    std::size_t max_unmatched_names = 5;
    // Error origins and suspect groups named after the counts; the rest are
    // counted ("... and N more"): a run of a million nodes may have
    // thousands, and all of them are in the CSV and JSON reports.
    std::size_t max_listed_names = 20;
};

// The warning printed (table and CLI stderr) when most dumped reference nodes
// were not compared; empty when the run is not mostly_unmatched.
inline std::string coverage_warning(const report_summary& summary) {
    if (!mostly_unmatched(summary)) return {};
    const std::size_t dumped = summary.compared_reference + summary.unmatched_reference_dumped;
    return "warning: only " + std::to_string(summary.compared_reference) + " of " + std::to_string(dumped) +
           " reference nodes with dumped tensors were compared; " +
           std::to_string(summary.unmatched_reference_dumped) +
           " are unmatched and were not compared (pair them with --match name|handle|structure, --map FILE "
           "or --name-rule RULE); a pass here says little";
}

namespace detail {
// Escaped for the terminal first, so clipping counts what is shown.
inline std::string clip(std::string_view text, std::size_t width) {
    return clip_to_width(terminal_text(text), width);
}

inline int severity(group_status status, bool error_origin) {
    switch (status) {
    case group_status::error: return 0;
    case group_status::fail: return error_origin ? 1 : 2;
    case group_status::missing: return 3;
    case group_status::pass: return 4;
    case group_status::unmatched: return 5;
    }
    return 5;
}

// "structure 0.62?" : strategy, confidence below 1, '?' when ambiguous,
// "repaired" when the values chose the target.
inline std::string match_cell(const group_report& group) {
    std::string cell = group.strategy;
    if (group.confidence && *group.confidence < 1.0) cell += " " + format_double_short(*group.confidence, 2);
    if (group.ambiguous()) cell += "?";
    if (group.repair == repair_state::repaired_by_values) cell += " repaired";
    return cell;
}

// Larger is worse; NaN counts as worst of all.
inline double badness(const report_rows& rows, std::size_t g, const std::string& metric) {
    const report_rows::metric_cell* value = rows.find_metric(g, metric);
    const std::optional<pass_rule> rule = value ? rows.metric_rule(*value) : std::nullopt;
    if (!rule) return 0;
    if (std::isnan(value->value)) return HUGE_VAL;
    const bool higher_is_better = rule->op == comparison::ge || rule->op == comparison::gt;
    return higher_is_better ? -value->value : value->value;
}
} // namespace detail

inline std::string format_summary_table(const comparison_report& report,
                                        const summary_table_options& options = {}) {
    const report_rows& rows = report.groups;
    std::string primary;
    for (const std::string& name : report.metric_names) {
        for (std::size_t g = 0; g < rows.size(); ++g)
            if (const report_rows::metric_cell* m = rows.find_metric(g, name); m && rows.metric_rule(*m)) {
                primary = name;
                break;
            }
        if (!primary.empty()) break;
    }

    // The rows shown, worst first, picked in one pass with a heap of at most
    // max_rows sort keys: a stable sort of every row, finding metrics by name
    // in each comparison, was a quarter of a second for 10^5 failing groups.
    struct row_key {
        int severity = 0;
        bool failing = false;
        std::ptrdiff_t failed_metrics = 0;
        double badness = 0;
        std::size_t order = 0, group = 0;
    };
    // Worst first; ties in report order, as a stable sort would leave them.
    const auto worse = [](const row_key& x, const row_key& y) {
        if (x.severity != y.severity) return x.severity < y.severity;
        if (x.failing) {
            if (x.failed_metrics != y.failed_metrics) return x.failed_metrics > y.failed_metrics;
            if (x.badness != y.badness) return x.badness > y.badness;
        }
        if (x.order != y.order) return x.order < y.order;
        return x.group < y.group;
    };
    std::vector<row_key> shown_rows; // a heap under `worse`: its front is the mildest row kept
    shown_rows.reserve(std::min(options.max_rows, report.groups.size()));
    std::size_t row_count = 0; // groups that are not unmatched nodes
    for (std::size_t g = 0; g < rows.size(); ++g) {
        const group_status status = rows.status(g);
        if (status == group_status::unmatched) continue;
        ++row_count;
        row_key key{
            detail::severity(status, rows.error_origin(g)), status == group_status::fail, 0, 0, rows.order(g), g};
        if (key.failing) {
            const std::span<const report_rows::metric_cell> metrics = rows.metrics(g);
            key.failed_metrics = std::count_if(metrics.begin(), metrics.end(),
                                               [](const report_rows::metric_cell& m) { return !m.passed; });
            key.badness = detail::badness(rows, g, primary);
        }
        if (shown_rows.size() < options.max_rows) {
            shown_rows.push_back(key);
            std::push_heap(shown_rows.begin(), shown_rows.end(), worse);
        } else if (!shown_rows.empty() && worse(key, shown_rows.front())) {
            std::pop_heap(shown_rows.begin(), shown_rows.end(), worse);
            shown_rows.back() = key;
            std::push_heap(shown_rows.begin(), shown_rows.end(), worse);
        }
    }
    std::sort_heap(shown_rows.begin(), shown_rows.end(), worse);
    const std::size_t shown = shown_rows.size();

    std::vector<std::string> header = {"status", "reference", "target", "match", "op", "shape", "dtypes"};
    bool shows_ambiguous = false, shows_repaired = false;
    for (const std::string& metric : report.metric_names) header.push_back(metric);
    header.push_back("note");
    std::vector<std::vector<std::string>> table{header};
    for (std::size_t r = 0; r < shown; ++r) {
        const group_report& group = report.groups[shown_rows[r].group];
        std::vector<std::string> line = {
            std::string(name_of(group.status)),
            detail::clip(detail::join_names(group.reference_nodes, "+"), options.max_name_width),
            detail::clip(detail::join_names(group.target_nodes, "+"), options.max_name_width),
            detail::match_cell(group),
            detail::clip(group.op, 24),
            detail::format_shape(group.shape),
            !group.dtype_reference && !group.dtype_target
                ? std::string()
                : std::string(detail::dtype_text(group.dtype_reference)) + "/" +
                      std::string(detail::dtype_text(group.dtype_target))};
        for (const std::string& name : report.metric_names) {
            const report_metric* metric = group.find_metric(name);
            line.push_back(!metric ? std::string()
                                   : format_double_short(metric->value) + (metric->passed ? "" : " !"));
        }
        std::string note;
        if (report.summary.first_divergence_group == shown_rows[r].group) note = "<- first divergence";
        if (group.error_origin) note += note.empty() ? "<- error origin" : ", error origin";
        if (group.suspect) note += note.empty() ? "<- suspect (ambiguous pairing)" : ", suspect";
        shows_ambiguous = shows_ambiguous || group.ambiguous();
        shows_repaired = shows_repaired || group.repair == repair_state::repaired_by_values;
        if (!group.message.empty()) note += (note.empty() ? "" : "; ") + detail::clip(group.message, 100);
        line.push_back(note);
        table.push_back(std::move(line));
    }

    // terminal_text is idempotent, so cells clip() already escaped are unchanged.
    for (auto& line : table)
        for (std::string& cell : line) cell = terminal_text(cell);
    std::vector<std::size_t> widths(header.size(), 0);
    for (const auto& line : table)
        for (std::size_t c = 0; c < line.size(); ++c) widths[c] = std::max(widths[c], terminal_width(line[c]));
    std::string out;
    for (std::size_t l = 0; l < table.size(); ++l) {
        std::string text;
        for (std::size_t c = 0; c < table[l].size(); ++c) {
            text += table[l][c];
            if (c + 1 < table[l].size()) text += std::string(widths[c] - terminal_width(table[l][c]) + 2, ' ');
        }
        while (!text.empty() && text.back() == ' ') text.pop_back();
        out += text + '\n';
        if (l == 0) {
            std::size_t total = 0;
            for (std::size_t w : widths) total += w + 2;
            out += std::string(std::min<std::size_t>(total, 160), '-') + '\n';
        }
    }
    if (row_count > shown) out += "... " + std::to_string(row_count - shown) + " more groups (see --csv/--json)\n";
    if (shows_ambiguous)
        out += "? = ambiguous pairing: the matcher could not tell the target from other candidates\n";
    if (shows_repaired) out += "repaired = the tensors chose the target among the candidates (repaired by values)\n";

    const report_summary& s = report.summary;
    out += "\n" + std::to_string(s.groups) + " groups: " + std::to_string(s.passed) + " passed, " +
           std::to_string(s.failed) + " failed, " + std::to_string(s.missing) + " missing, " +
           std::to_string(s.errors) + " errors; unmatched nodes: " +
           std::to_string(s.unmatched_reference) + " reference, " +
           std::to_string(s.unmatched_target) + " target\n";
    if (s.unmatched_reference != 0) {
        out += "unmatched reference nodes (not compared):";
        std::size_t named = 0;
        for (std::size_t g = 0; g < rows.size(); ++g) {
            if (rows.status(g) != group_status::unmatched || rows.reference_nodes(g).empty()) continue;
            if (named == options.max_unmatched_names) break;
            out += (named ? ", " : " ") + detail::clip(rows.reference_nodes(g).back(), options.max_name_width);
            ++named;
        }
        if (s.unmatched_reference > named) out += " ... and " + std::to_string(s.unmatched_reference - named) + " more";
        out += '\n';
    }
    if (const std::string warning = coverage_warning(s); !warning.empty()) out += warning + '\n';
    if (s.first_divergence_group) {
        const group_report& first = report.groups[*s.first_divergence_group];
        out += "first divergence: " + terminal_text(s.first_divergence) +
               (first.op.empty() ? std::string() : " (" + terminal_text(first.op) + ")") + "\n";
    } else {
        out += "first divergence: none\n";
    }
    const auto more = [&](std::size_t listed, std::size_t total) {
        return listed < total ? " ... and " + std::to_string(total - listed) + " more (see --csv/--json)"
                              : std::string();
    };
    out += "error origins:";
    if (s.origins.empty()) out += " none";
    const std::size_t origins_listed = std::min(s.origins.size(), options.max_listed_names);
    for (std::size_t i = 0; i < origins_listed; ++i) out += (i ? ", " : " ") + terminal_text(s.origins[i]);
    out += more(origins_listed, s.origins.size()) + '\n';
    if (!s.suspect_groups.empty()) {
        out += "suspect (failing, ambiguous pairing not confirmed by the values):";
        const std::size_t suspects_listed = std::min(s.suspect_groups.size(), options.max_listed_names);
        for (std::size_t i = 0; i < suspects_listed; ++i) {
            const group_report& suspect = report.groups[s.suspect_groups[i]];
            out += (i ? ", " : " ") + (suspect.reference_nodes.empty() ? std::string("?") : terminal_text(suspect.reference_nodes.back()));
        }
        out += more(suspects_listed, s.suspect_groups.size()) + '\n';
    }
    if (s.repaired != 0) out += "repaired by values: " + std::to_string(s.repaired) + " groups\n";
    return out;
}

} // namespace numgap
