#pragma once
// CSV writer: one row per group of a comparison_report, RFC 4180.
//
// Columns, in order: ref_node, target_node (several nodes joined with '+'),
// ref_tensor, target_tensor, kind, strategy, op, shape ("1x64x56x56"; empty
// when unknown), dtype_ref, dtype_target, quant_ref, quant_target, count, one
// column per metric named exactly as the metric (value, shortest round-trip
// text, "inf"/"-inf"/"nan"; empty when not computed), status, error_origin
// ("1"/"0"), message, then (added later, so earlier columns keep their
// positions) confidence (empty for an unmatched row: no pairing), ambiguous ("1"/"0"), ambiguous_with (the alternative
// target nodes joined with '+'), repair ("none", "repaired_by_values",
// "repair_possible", "confirmed_by_values"), suspect ("1"/"0"), then for an
// `error` row caused by a numgap::error (empty otherwise) error_kind ("io",
// "format", "schema", "shape", "dtype", "graph", "limit", "usage", "other"),
// error_file, error_item, error_offset, error_line, error_column (each empty
// when the error did not know it; see core/error.hpp).
// Why RFC 4180 to the letter (CRLF records, fields holding ',', '"', CR or LF
// quoted with inner quotes doubled): node names from real exporters contain
// commas and quotes, and spreadsheet tools and Python's csv module expect it.
// Formula injection (OWASP "CSV Injection"): a text cell — node, tensor, op,
// dtype or metric name, message — that begins with '=', '+', '-', '@', TAB,
// CR or NUL is written with a single quote (') in front, inside a quoted
// field, so a spreadsheet shows it as text instead of evaluating a formula
// planted in a graph.json. Text cells holding ';' are quoted too, so a
// spreadsheet that splits on semicolons cannot start a new cell with a
// formula inside one. Numeric cells (count, metric values such as -0.5 or
// -inf, error_origin) never pass through this and stay numbers. A reader who
// needs the exact name strips the one leading quote of a text cell whose
// second character is one of the triggers.
// Complexity: O(total text). Throws: numgap::error when the file cannot be
// written (the message names it); std::bad_alloc.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <numgap/core/error.hpp>
#include <numgap/io/atomic_file.hpp>
#include <numgap/report/comparison_report.hpp>
#include <numgap/report/detail/text.hpp>
#include <numgap/report/format_double.hpp>

namespace numgap {

namespace detail {
// The characters that make a spreadsheet read a leading cell as a formula
// (OWASP's list, plus NUL as OWASP ASVS 1.2.10 adds).
inline bool starts_like_formula(std::string_view text) noexcept {
    return !text.empty() && std::string_view("=+-@\t\r\0", 7).find(text.front()) != std::string_view::npos;
}

// A text cell: quoted when RFC 4180 needs it or when it is neutralised.
inline void append_csv_field(std::string& out, std::string_view field) {
    const bool neutralise = starts_like_formula(field);
    if (!neutralise && field.find_first_of(",;\"\r\n") == std::string_view::npos) {
        out += field;
        return;
    }
    out += '"';
    if (neutralise) out += '\'';
    for (char c : field) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
}

// The error_* cells of a row, each after its comma.
inline void append_csv_error(std::string& out, const boxed<group_error>& failure) {
    if (!failure) {
        out += ",,,,,,";
        return;
    }
    const error_location& where = failure->where;
    out += ',';
    out += name_of(failure->kind);
    out += ',';
    append_csv_field(out, where.file);
    out += ',';
    append_csv_field(out, where.item);
    out += ',';
    if (where.has_offset()) out += std::to_string(where.offset);
    out += ',';
    if (where.line != 0) out += std::to_string(where.line);
    out += ',';
    if (where.column != 0) out += std::to_string(where.column);
}

// Appends the report's CSV text to `out`, calling flush(out) after each row
// once `out` holds at least chunk_bytes (flush may write it out and clear it).
template <class Flush>
void write_csv_text(const comparison_report& report, std::string& out, Flush&& flush,
                    std::size_t chunk_bytes = std::size_t(1) << 20) {
    const char* const fixed_columns[] = {"ref_node", "target_node",  "ref_tensor", "target_tensor",
                                         "kind",     "strategy",     "op",         "shape",
                                         "dtype_ref", "dtype_target", "quant_ref", "quant_target",
                                         "count"};
    bool first = true;
    auto separate = [&] {
        if (!first) out += ',';
        first = false;
    };
    for (const char* column : fixed_columns) {
        separate();
        out += column;
    }
    for (const std::string& metric : report.metric_names) {
        separate();
        detail::append_csv_field(out, metric);
    }
    out += ",status,error_origin,message,confidence,ambiguous,ambiguous_with,repair,suspect,"
           "error_kind,error_file,error_item,error_offset,error_line,error_column\r\n";

    group_report group; // one row's storage, reused
    for (std::size_t g = 0; g < report.groups.size(); ++g) {
        report.groups.copy_to(g, group);
        first = true;
        const std::string cells[] = {detail::join_names(group.reference_nodes, "+"),
                                     detail::join_names(group.target_nodes, "+"),
                                     group.reference_tensor,
                                     group.target_tensor,
                                     std::string(detail::kind_text(group.kind)),
                                     group.strategy,
                                     group.op,
                                     detail::format_shape(group.shape),
                                     std::string(detail::dtype_text(group.dtype_reference)),
                                     std::string(detail::dtype_text(group.dtype_target)),
                                     group.quantization_reference,
                                     group.quantization_target,
                                     group.compared() ? std::to_string(group.count) : std::string()};
        for (const std::string& cell : cells) {
            separate();
            detail::append_csv_field(out, cell);
        }
        for (const std::string& metric : report.metric_names) {
            separate();
            if (const report_metric* found = group.find_metric(metric)) out += format_double(found->value);
        }
        out += ',';
        out += name_of(group.status);
        out += group.error_origin ? ",1," : ",0,";
        detail::append_csv_field(out, group.message);
        out += ',';
        if (group.confidence) out += format_double(*group.confidence);
        out += group.ambiguous() ? ",1," : ",0,";
        detail::append_csv_field(out, detail::join_names(group.ambiguous_with, "+"));
        out += ',';
        out += name_of(group.repair);
        out += group.suspect ? ",1" : ",0";
        detail::append_csv_error(out, group.error_detail);
        out += "\r\n";
        if (out.size() >= chunk_bytes) flush(out);
    }
}
} // namespace detail

inline std::string to_csv(const comparison_report& report) {
    std::string out;
    detail::write_csv_text(report, out, [](std::string&) {});
    return out;
}

// Streams the rows to the file in chunks of about 1 MiB: memory does not
// grow with the report (a million rows are ~300 MB of text).
inline void write_csv(const comparison_report& report, const std::filesystem::path& path) {
    io::write_text_in_chunks(path, "CSV report",
                             [&](std::string& chunk, auto&& flush) { detail::write_csv_text(report, chunk, flush); });
}

} // namespace numgap
