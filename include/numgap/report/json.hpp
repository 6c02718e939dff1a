#pragma once
// JSON writer for a comparison_report.
//
// Layout (stable; "format_version" bumps on incompatible change):
// {"format": "numgap-report", "format_version": 1,
//  "metrics": [names...],
//  "summary": {"groups", "passed", "failed", "missing", "errors", "unmatched_ref",
//              "unmatched_target", "first_divergence" (node name or null),
//              "origins" [node names]},
//  "groups": [{"ref_nodes", "target_nodes", "ref_tensor", "target_tensor", "kind",
//              "strategy", "confidence" (null for an unmatched row), "op", "shape", "dtype_ref", "dtype_target",
//              "quant_ref", "quant_target", "count",
//              "metrics": {"<name>": {"value", "threshold" (number or null),
//                                     "comparison" (">=", ... or ""), "passed"}},
//              "status", "error_origin", "message",
//              "ambiguous" (bool), "ambiguous_with" [target node names],
//              "repair" ("none", "repaired_by_values", "repair_possible",
//              "confirmed_by_values"), "suspect" (bool)}]}
// and in "summary": "suspects" [last reference node of each suspect group],
// "repaired" (count). Fields are only ever added within a format_version.
// Why through io/json.hpp: numbers are written as the shortest text that reads
// back to the same double and non-finite values as the strings "inf", "-inf",
// "nan" — one implementation for every JSON numgap writes.
// Complexity: O(output size). Throws: numgap::error when the file cannot be
// written; std::bad_alloc.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/io/json.hpp>
#include <numgap/report/comparison_report.hpp>
#include <numgap/report/detail/text.hpp>

namespace numgap {

namespace detail {
inline void append_json_key(std::string& out, std::string_view key) {
    io::write_json_string(out, key);
    out += ':';
}

inline void append_json_string_array(std::string& out, const std::vector<std::string>& items) {
    out += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += ',';
        io::write_json_string(out, items[i]);
    }
    out += ']';
}
} // namespace detail

inline std::string to_json(const comparison_report& report) {
    using detail::append_json_key;
    std::string out;
    out += "{\"format\":\"numgap-report\",\"format_version\":1,\n";
    append_json_key(out, "metrics");
    detail::append_json_string_array(out, report.metric_names);
    out += ",\n";

    const report_summary& summary = report.summary;
    append_json_key(out, "summary");
    out += '{';
    const std::pair<std::string_view, std::size_t> counts[] = {
        {"groups", summary.groups},
        {"passed", summary.passed},
        {"failed", summary.failed},
        {"missing", summary.missing},
        {"errors", summary.errors},
        {"unmatched_ref", summary.unmatched_reference},
        {"unmatched_target", summary.unmatched_target}};
    for (const auto& [key, count] : counts) {
        append_json_key(out, key);
        out += std::to_string(count);
        out += ',';
    }
    append_json_key(out, "first_divergence");
    if (summary.first_divergence_group)
        io::write_json_string(out, summary.first_divergence);
    else
        out += "null";
    out += ',';
    append_json_key(out, "origins");
    detail::append_json_string_array(out, summary.origins);
    out += ',';
    append_json_key(out, "suspects");
    std::vector<std::string> suspects;
    for (std::size_t g : summary.suspect_groups)
        if (!report.groups[g].reference_nodes.empty()) suspects.push_back(report.groups[g].reference_nodes.back());
    detail::append_json_string_array(out, suspects);
    out += ',';
    append_json_key(out, "repaired");
    out += std::to_string(summary.repaired);
    out += "},\n";

    append_json_key(out, "groups");
    out += "[\n";
    for (std::size_t g = 0; g < report.groups.size(); ++g) {
        const group_report& group = report.groups[g];
        if (g) out += ",\n";
        out += '{';
        append_json_key(out, "ref_nodes");
        detail::append_json_string_array(out, group.reference_nodes);
        out += ',';
        append_json_key(out, "target_nodes");
        detail::append_json_string_array(out, group.target_nodes);
        const std::pair<std::string_view, const std::string*> texts[] = {
            {"ref_tensor", &group.reference_tensor}, {"target_tensor", &group.target_tensor},
            {"kind", &group.kind},                   {"strategy", &group.strategy},
            {"op", &group.op},                       {"dtype_ref", &group.dtype_reference},
            {"dtype_target", &group.dtype_target},   {"quant_ref", &group.quantization_reference},
            {"quant_target", &group.quantization_target}};
        for (const auto& [key, text] : texts) {
            out += ',';
            append_json_key(out, key);
            io::write_json_string(out, *text);
        }
        out += ',';
        append_json_key(out, "confidence");
        if (group.confidence)
            io::write_json_number(out, *group.confidence);
        else
            out += "null";
        out += ',';
        append_json_key(out, "shape");
        out += '[';
        for (std::size_t i = 0; i < group.shape.size(); ++i) {
            if (i) out += ',';
            out += std::to_string(group.shape[i]);
        }
        out += "],";
        append_json_key(out, "count");
        out += std::to_string(group.count);
        out += ',';
        append_json_key(out, "metrics");
        out += '{';
        for (std::size_t m = 0; m < group.metrics.size(); ++m) {
            const report_metric& metric = group.metrics[m];
            if (m) out += ',';
            append_json_key(out, metric.name);
            out += '{';
            append_json_key(out, "value");
            io::write_json_number(out, metric.value);
            out += ',';
            append_json_key(out, "threshold");
            if (metric.threshold)
                io::write_json_number(out, *metric.threshold);
            else
                out += "null";
            out += ',';
            append_json_key(out, "comparison");
            io::write_json_string(out, metric.comparison);
            out += ',';
            append_json_key(out, "passed");
            out += metric.passed ? "true" : "false";
            out += '}';
        }
        out += "},";
        append_json_key(out, "status");
        io::write_json_string(out, name_of(group.status));
        out += ',';
        append_json_key(out, "error_origin");
        out += group.error_origin ? "true" : "false";
        out += ',';
        append_json_key(out, "message");
        io::write_json_string(out, group.message);
        out += ',';
        append_json_key(out, "ambiguous");
        out += group.ambiguous() ? "true" : "false";
        out += ',';
        append_json_key(out, "ambiguous_with");
        detail::append_json_string_array(out, group.ambiguous_with);
        out += ',';
        append_json_key(out, "repair");
        io::write_json_string(out, name_of(group.repair));
        out += ',';
        append_json_key(out, "suspect");
        out += group.suspect ? "true" : "false";
        out += '}';
    }
    out += "\n]}\n";
    return out;
}

inline void write_json(const comparison_report& report, const std::filesystem::path& path) {
    detail::write_text_file(path, to_json(report), "JSON report");
}

} // namespace numgap
