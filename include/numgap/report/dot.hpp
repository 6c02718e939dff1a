#pragma once
// Graphviz DOT of the report's reference graph, nodes coloured by status.
//
// Colours: pass green, fail orange, error origin red (bold border), unmatched
// grey (dashed), missing white (dashed), error purple. Each label holds the
// node name, its op and the chosen metric's value for the node's group (the
// first metric with a threshold unless dot_options::metric says otherwise), so
// the picture answers "where does it go wrong" without the table. A legend
// cluster explains the colours. An ambiguous pairing (the matcher could not
// tell the target from other candidates) gets a dashed border and
// "ambiguous" in its label; a pairing the tensors chose, "repaired by values". Node ids are generated ("n0", "n1", ...) and
// names only appear inside escaped labels, so any node name is safe.
// Escaping (append_dot_escaped): a label is split at LF, which stays a line
// break; each line goes through terminal_text (report/terminal_text.hpp), so
// NUL and every other control character, invalid UTF-8 bytes and bidi
// overrides become visible escapes such as "\x00" and "\u202e" (DOT cannot
// hold NUL, and the SVG Graphviz writes from it must be XML 1.0, which cannot
// hold most C0 controls even as character references); then '"' and '\' are
// backslash-escaped and '&' is written "&amp;", because Graphviz decodes
// entities in labels ("&#1;" would reach the SVG as a raw U+0001).
// Above dot_options::max_nodes (2000) reference nodes only a bounded
// subgraph is drawn (dot_neighbourhood.hpp): the first divergence's
// neighbourhood and the error origins, with a title and a first-line comment
// saying how many of how many nodes it shows.
// Complexity: O(N + E) in the reference graph. Throws: numgap::error when the
// report's reference graph is inconsistent (see analyze_report.hpp), when
// dot_options::metric is not one of the report's metrics, or when the file
// cannot be written.
#include <algorithm>
#include <filesystem>
#include <iterator>
#include <utility>
#include <string>
#include <string_view>

#include <numgap/core/error.hpp>
#include <numgap/report/analyze_report.hpp>
#include <numgap/report/comparison_report.hpp>
#include <numgap/report/detail/text.hpp>
#include <numgap/report/dot_neighbourhood.hpp>
#include <numgap/report/format_double.hpp>
#include <numgap/report/terminal_text.hpp>

namespace numgap {

struct dot_options {
    std::string metric; // empty: the first metric with a threshold, else the first metric
    std::string graph_name = "numgap";
    // Above this many reference nodes the graph is a bounded subgraph around
    // the first divergence and the error origins (dot_neighbourhood.hpp),
    // and says so in its title and in a comment on its first line.
    std::size_t max_nodes = 2000;
};

namespace detail {
inline void append_dot_escaped(std::string& out, std::string_view text) {
    for (std::size_t start = 0;;) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        for (char c : terminal_text(text.substr(start, end - start))) {
            if (c == '"' || c == '\\') out += '\\';
            if (c == '&')
                out += "&amp;";
            else
                out += c;
        }
        if (end == text.size()) return;
        out += "\\n";
        start = end + 1;
    }
}

// The metric a one-number view (DOT label, Model Explorer overlay) shows.
inline std::string chosen_metric(const comparison_report& report, std::string_view requested) {
    if (!requested.empty()) {
        for (const std::string& name : report.metric_names)
            if (name == requested) return name;
        throw error(error_kind::usage,
                    "metric '" + std::string(requested) + "' is not in the report (its metrics are: " +
                        join_names(report.metric_names, ", ") + ")",
                    error_location::of_item(std::string(requested)));
    }
    const report_rows& rows = report.groups;
    for (const std::string& name : report.metric_names)
        for (std::size_t g = 0; g < rows.size(); ++g)
            if (const report_rows::metric_cell* metric = rows.find_metric(g, name); metric && rows.metric_rule(*metric))
                return name;
    return report.metric_names.empty() ? std::string() : report.metric_names.front();
}

struct dot_style {
    const char* fill;
    const char* font;
    const char* style;
    const char* pen;
};

inline dot_style dot_style_of(const group_report* group) {
    if (!group || group->status == group_status::unmatched)
        return {"#e0e0e0", "#424242", "rounded,filled,dashed", "1"};
    if (group->error_origin) return {"#e53935", "#ffffff", "rounded,filled,bold", "3"};
    switch (group->status) {
    case group_status::pass: return {"#c8e6c9", "#1b5e20", "rounded,filled", "1"};
    case group_status::fail: return {"#ffcc80", "#4e2600", "rounded,filled", "1"};
    case group_status::missing: return {"#ffffff", "#616161", "rounded,filled,dashed", "1"};
    case group_status::error: return {"#ce93d8", "#311b92", "rounded,filled", "1"};
    case group_status::unmatched: break;
    }
    return {"#e0e0e0", "#424242", "rounded,filled,dashed", "1"};
}
} // namespace detail

inline std::string to_dot(const comparison_report& report, const dot_options& options = {}) {
    const std::vector<std::size_t> group_of = detail::group_of_reference_nodes(report);
    const std::string metric = detail::chosen_metric(report, options.metric);
    const std::vector<std::size_t> shown = detail::dot_neighbourhood(report, options.max_nodes);
    const bool partial = shown.size() < report.reference_graph.size();
    std::string subgraph_note;
    if (partial)
        subgraph_note = "subgraph: " + std::to_string(shown.size()) + " of " +
                        std::to_string(report.reference_graph.size()) +
                        " reference nodes (the neighbourhood of the first divergence and the error origins; "
                        "every node is in the CSV and JSON reports)";
    std::string out = partial ? "// numgap " + subgraph_note + "\n" : std::string();
    out += "digraph \"";
    detail::append_dot_escaped(out, options.graph_name);
    out += "\" {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n"
           "  edge [color=\"#757575\"];\n";
    if (partial) out += "  labelloc=t;\n  label=\"" + subgraph_note + "\";\n";
    for (std::size_t i : shown) {
        const report_node& node = report.reference_graph[i];
        std::optional<group_report> row;
        if (group_of[i] != detail::no_group) row.emplace(report.groups[group_of[i]]);
        const group_report* group = row ? &*row : nullptr;
        const detail::dot_style style = detail::dot_style_of(group);
        std::string label = node.name;
        if (!node.op.empty()) label += "\n" + node.op;
        if (!group || group->status == group_status::unmatched) {
            label += "\nunmatched";
        } else if (group->compared()) {
            if (const report_metric* value = group->find_metric(metric))
                label += "\n" + metric + " = " + format_double_short(value->value);
            if (group->error_origin) label += "\nerror origin";
        } else {
            label += "\n" + std::string(name_of(group->status));
        }
        if (group && group->ambiguous()) label += group->suspect ? "\nambiguous (suspect)" : "\nambiguous";
        if (group && group->repair == repair_state::repaired_by_values) label += "\nrepaired by values";
        const bool dashed = group && group->ambiguous() && group->status != group_status::unmatched;
        out += "  n" + std::to_string(i) + " [label=\"";
        detail::append_dot_escaped(out, label);
        out += "\", style=\"" + std::string(style.style) + (dashed ? ",dashed" : "") + "\", fillcolor=\"" +
               style.fill + "\", fontcolor=\"" + style.font + "\", penwidth=" + style.pen + "];\n";
    }
    for (std::size_t i : shown)
        for (std::size_t producer : report.reference_graph[i].producers)
            if (!partial || std::binary_search(shown.begin(), shown.end(), producer))
                out += "  n" + std::to_string(producer) + " -> n" + std::to_string(i) + ";\n";
    out += "  subgraph cluster_legend {\n    label=\"legend\"; fontname=\"Helvetica\"; "
           "fontsize=10; color=\"#bdbdbd\";\n";
    group_report sample;
    const std::pair<const char*, group_status> entries[] = {
        {"pass", group_status::pass},       {"fail (propagated)", group_status::fail},
        {"error origin", group_status::fail}, {"missing dump", group_status::missing},
        {"error", group_status::error},     {"unmatched", group_status::unmatched}};
    for (std::size_t e = 0; e < std::size(entries); ++e) {
        sample.status = entries[e].second;
        sample.error_origin = e == 2;
        const detail::dot_style style = detail::dot_style_of(&sample);
        out += "    legend_" + std::to_string(e) + " [label=\"" + entries[e].first +
               "\", style=\"" + style.style + "\", fillcolor=\"" + style.fill +
               "\", fontcolor=\"" + style.font + "\", penwidth=" + style.pen + "];\n";
    }
    out += "    legend_ambiguous [label=\"ambiguous pairing\", style=\"rounded,dashed\"];\n";
    out += "  }\n}\n";
    return out;
}

inline void write_dot(const comparison_report& report, const std::filesystem::path& path,
                      const dot_options& options = {}) {
    detail::write_text_file(path, to_dot(report, options), "DOT graph");
}

} // namespace numgap
