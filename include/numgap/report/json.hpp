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
//              "confirmed_by_values"), "suspect" (bool),
//              "error": null, or for an `error` row caused by a numgap::error
//              {"kind" ("io", "format", "schema", "shape", "dtype", "graph",
//              "limit", "usage", "other"), then those of "file", "item",
//              "offset", "line", "column" the error knew (core/error.hpp)}}]}
// and in "summary": "suspects" [last reference node of each suspect group],
// "repaired" (count). Fields are only ever added within a format_version.
// Why through io::json_writer: numbers are written as the shortest text that
// reads back to the same double and non-finite values as the strings "inf",
// "-inf", "nan", names are escaped whatever bytes they hold, and commas are
// the writer's business — one implementation for every JSON numgap writes.
// Kinds, dtypes, rules and states are enums in the model, spelled here.
// Complexity: O(output size). Throws: numgap::error when the file cannot be
// written; std::bad_alloc.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/io/atomic_file.hpp>
#include <numgap/io/json/writer.hpp>
#include <numgap/report/comparison_report.hpp>
#include <numgap/report/detail/text.hpp>

namespace numgap {

namespace detail {
inline void write_json_error(io::json_writer& json, const boxed<group_error>& failure) {
    if (!failure) {
        json.null();
        return;
    }
    const error_location& where = failure->where;
    json.begin_object().key("kind").string(name_of(failure->kind));
    if (!where.file.empty()) json.key("file").string(where.file);
    if (!where.item.empty()) json.key("item").string(where.item);
    if (where.has_offset()) json.key("offset").unsigned_integer(where.offset);
    if (where.line != 0) json.key("line").unsigned_integer(where.line);
    if (where.column != 0) json.key("column").unsigned_integer(where.column);
    json.end_object();
}

inline void write_json_group(io::json_writer& json, const group_report& group) {
    json.begin_object();
    json.key("ref_nodes").string_array(group.reference_nodes);
    json.key("target_nodes").string_array(group.target_nodes);
    json.key("ref_tensor").string(group.reference_tensor);
    json.key("target_tensor").string(group.target_tensor);
    json.key("kind").string(kind_text(group.kind));
    json.key("strategy").string(group.strategy);
    json.key("op").string(group.op);
    json.key("dtype_ref").string(dtype_text(group.dtype_reference));
    json.key("dtype_target").string(dtype_text(group.dtype_target));
    json.key("quant_ref").string(group.quantization_reference);
    json.key("quant_target").string(group.quantization_target);
    json.key("confidence");
    if (group.confidence)
        json.number(*group.confidence);
    else
        json.null();
    json.key("shape").begin_array();
    for (std::int64_t dimension : group.shape) json.integer(dimension);
    json.end_array();
    json.key("count").integer(group.count);
    json.key("metrics").begin_object();
    for (const report_metric& metric : group.metrics) {
        json.key(metric.name).begin_object();
        json.key("value").number(metric.value);
        json.key("threshold");
        if (metric.rule)
            json.number(metric.rule->value);
        else
            json.null();
        json.key("comparison").string(metric.rule ? symbol_of(metric.rule->op) : std::string_view());
        json.key("passed").boolean(metric.passed);
        json.end_object();
    }
    json.end_object();
    json.key("status").string(name_of(group.status));
    json.key("error_origin").boolean(group.error_origin);
    json.key("message").string(group.message);
    json.key("ambiguous").boolean(group.ambiguous());
    json.key("ambiguous_with").string_array(group.ambiguous_with);
    json.key("repair").string(name_of(group.repair));
    json.key("suspect").boolean(group.suspect);
    json.key("error");
    write_json_error(json, group.error_detail);
    json.end_object();
}

// Appends the report's JSON text to `out`, calling flush(out) after each
// group once `out` holds at least chunk_bytes (flush may write it out and
// clear it: the writer's state does not live in the text).
template <class Flush>
void write_json_text(const comparison_report& report, std::string& out, Flush&& flush,
                     std::size_t chunk_bytes = std::size_t(1) << 20) {
    io::json_writer json(out);
    json.begin_object();
    json.key("format").string("numgap-report");
    json.key("format_version").integer(1);
    json.line_break().key("metrics").string_array(report.metric_names);

    const report_summary& summary = report.summary;
    json.line_break().key("summary").begin_object();
    json.key("groups").unsigned_integer(summary.groups);
    json.key("passed").unsigned_integer(summary.passed);
    json.key("failed").unsigned_integer(summary.failed);
    json.key("missing").unsigned_integer(summary.missing);
    json.key("errors").unsigned_integer(summary.errors);
    json.key("unmatched_ref").unsigned_integer(summary.unmatched_reference);
    json.key("unmatched_target").unsigned_integer(summary.unmatched_target);
    json.key("first_divergence");
    if (summary.first_divergence_group)
        json.string(summary.first_divergence);
    else
        json.null();
    json.key("origins").string_array(summary.origins);
    json.key("suspects").begin_array();
    for (std::size_t g : summary.suspect_groups)
        if (!report.groups.reference_nodes(g).empty()) json.string(report.groups.reference_nodes(g).back());
    json.end_array();
    json.key("repaired").unsigned_integer(summary.repaired);
    json.end_object();

    json.line_break().key("groups").begin_array();
    group_report group; // one row's storage, reused
    for (std::size_t g = 0; g < report.groups.size(); ++g) {
        report.groups.copy_to(g, group);
        json.line_break();
        detail::write_json_group(json, group);
        if (out.size() >= chunk_bytes) flush(out);
    }
    json.line_break().end_array();
    json.end_object();
    out += '\n';
}
} // namespace detail

inline std::string to_json(const comparison_report& report) {
    std::string out;
    detail::write_json_text(report, out, [](std::string&) {});
    return out;
}

// Streams the groups to the file in chunks of about 1 MiB: memory does not
// grow with the report.
inline void write_json(const comparison_report& report, const std::filesystem::path& path) {
    io::write_text_in_chunks(path, "JSON report",
                             [&](std::string& chunk, auto&& flush) { detail::write_json_text(report, chunk, flush); });
}

} // namespace numgap
