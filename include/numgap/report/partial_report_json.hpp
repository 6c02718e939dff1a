#pragma once
// The JSON form of a partial_report (partial_report.hpp), written by
// `numgap compare --shard I/N --json F` and read back by read_partial_report
// (read_partial_report.hpp) for `numgap merge`.
//
// Layout ("format_version" bumps on any change; the reader refuses unknown
// keys and other versions, so a partial from another numgap is named, not
// misread):
// {"format": "numgap-partial-report", "format_version": 1,
//  "shard": I (0-based), "shards": N, "fingerprint": "<16 hex digits>",
//  "match_groups": G, "target_nodes": T, "shard_bytes": estimated bytes,
//  "metrics": [names],
//  "reference_graph": [{"name", "op", "producers": [indices]}] (topological),
//  "owned_groups": [group indices, ascending],
//  "rows": [{"from": "group" | "unmatched_ref" | "unmatched_target",
//            "index": group index or node index,
//            "ref_nodes", "target_nodes", "ref_tensor", "target_tensor",
//            "kind" ("" when none), "strategy", "confidence" (number or null),
//            "ambiguous_with", "repair", "fails_every_candidate", "op",
//            "shape", "dtype_ref", "dtype_target" ("" when not loaded),
//            "quant_ref", "quant_target", "count",
//            "metrics": [{"name", "value", "comparison" ("" or ">=", ...),
//                         "threshold" (number or null), "passed"}],
//            "status", "message", "error" (null or as in the JSON report)}]}
// Numbers go through io::json_writer: the shortest text that reads back to
// the same double, non-finite values as "inf", "-inf", "nan"; so a merged
// report prints exactly the digits the unsharded one does.
// Metrics are an array (not an object keyed by name as in the report) so
// their order and every rule survive as they are.
// Complexity: O(output size). Throws: numgap::error (kind io) when the file
// cannot be written; std::bad_alloc.
#include <filesystem>
#include <string>

#include <numgap/io/json/writer.hpp>
#include <numgap/report/detail/text.hpp>
#include <numgap/report/json.hpp>
#include <numgap/report/partial_report.hpp>

namespace numgap {

inline constexpr std::string_view partial_report_format = "numgap-partial-report";
inline constexpr int partial_report_format_version = 1;

namespace detail {
inline void write_partial_row(io::json_writer& json, const partial_row& entry) {
    const group_report& row = entry.row;
    json.begin_object();
    json.key("from").string(name_of(entry.from));
    json.key("index").unsigned_integer(entry.index);
    json.key("ref_nodes").string_array(row.reference_nodes);
    json.key("target_nodes").string_array(row.target_nodes);
    json.key("ref_tensor").string(row.reference_tensor);
    json.key("target_tensor").string(row.target_tensor);
    json.key("kind").string(kind_text(row.kind));
    json.key("strategy").string(row.strategy);
    json.key("confidence");
    if (row.confidence) json.number(*row.confidence);
    else json.null();
    json.key("ambiguous_with").string_array(row.ambiguous_with);
    json.key("repair").string(name_of(row.repair));
    json.key("fails_every_candidate").boolean(row.fails_every_candidate);
    json.key("op").string(row.op);
    json.key("shape").begin_array();
    for (std::int64_t dimension : row.shape) json.integer(dimension);
    json.end_array();
    json.key("dtype_ref").string(dtype_text(row.dtype_reference));
    json.key("dtype_target").string(dtype_text(row.dtype_target));
    json.key("quant_ref").string(row.quantization_reference);
    json.key("quant_target").string(row.quantization_target);
    json.key("count").integer(row.count);
    json.key("metrics").begin_array();
    for (const report_metric& metric : row.metrics) {
        json.begin_object();
        json.key("name").string(metric.name);
        json.key("value").number(metric.value);
        json.key("comparison").string(metric.rule ? symbol_of(metric.rule->op) : std::string_view());
        json.key("threshold");
        if (metric.rule) json.number(metric.rule->value);
        else json.null();
        json.key("passed").boolean(metric.passed);
        json.end_object();
    }
    json.end_array();
    json.key("status").string(name_of(row.status));
    json.key("message").string(row.message);
    json.key("error");
    write_json_error(json, row.error_detail);
    json.end_object();
}
} // namespace detail

inline std::string to_partial_json(const partial_report& partial) {
    std::string out;
    io::json_writer json(out);
    json.begin_object();
    json.key("format").string(partial_report_format);
    json.key("format_version").integer(partial_report_format_version);
    json.line_break().key("shard").unsigned_integer(partial.shard);
    json.key("shards").unsigned_integer(partial.shards);
    json.key("fingerprint").string(partial.fingerprint);
    json.key("match_groups").unsigned_integer(partial.match_groups);
    json.key("target_nodes").unsigned_integer(partial.target_nodes);
    json.key("shard_bytes").unsigned_integer(partial.shard_bytes);
    json.line_break().key("metrics").string_array(partial.metric_names);
    json.line_break().key("reference_graph").begin_array();
    for (const report_node& node : partial.reference_graph) {
        json.line_break().begin_object();
        json.key("name").string(node.name);
        json.key("op").string(node.op);
        json.key("producers").begin_array();
        for (std::size_t producer : node.producers) json.unsigned_integer(producer);
        json.end_array().end_object();
    }
    json.line_break().end_array();
    json.line_break().key("owned_groups").begin_array();
    for (std::size_t group : partial.owned_groups) json.unsigned_integer(group);
    json.end_array();
    json.line_break().key("rows").begin_array();
    for (const partial_row& entry : partial.rows) {
        json.line_break();
        detail::write_partial_row(json, entry);
    }
    json.line_break().end_array();
    json.end_object();
    out += '\n';
    return out;
}

inline void write_partial_report(const partial_report& partial, const std::filesystem::path& path) {
    detail::write_text_file(path, to_partial_json(partial), "partial report");
}

} // namespace numgap
