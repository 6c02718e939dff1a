#pragma once
// read_partial_report / parse_partial_report: a partial report's JSON
// (partial_report_json.hpp) back into a partial_report, for `numgap merge`.
//
// Trust nothing: the text goes through numgap's strict, bounded JSON parser
// (io/json/parser.hpp: depth limited here to the format's own 5 levels,
// duplicate keys refused, UTF-8 validated); every object must hold exactly
// the format's keys with the right types (a missing or unknown key, a wrong
// type, a negative or out-of-range index is an error); enums must be one of
// their spellings. Indices are checked against the partial's own counts:
// group indices below "match_groups", unmatched node indices below the
// reference graph's or "target_nodes", producers below their node. Nothing
// is allocated from a count the file states: every vector grows with the
// values actually read, so memory stays O(file size).
// What is checked across partials (same comparison, every shard once) is
// merge_partial_reports' job.
// Errors: numgap::error of kind format for bad JSON, schema for a wrong key
// or value, limit for too deep nesting; the message reads
// "<file>:<line>:<column>: <reason>" and names the key; kind io when the file
// cannot be read.
// Complexity: O(file size). Throws: numgap::error, std::bad_alloc.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/io/json/parser.hpp>
#include <numgap/io/json/value.hpp>
#include <numgap/io/mapped_file.hpp>
#include <numgap/match/match_kind.hpp>
#include <numgap/metric/rule.hpp>
#include <numgap/report/partial_report.hpp>
#include <numgap/report/partial_report_json.hpp>

namespace numgap {

namespace detail {
// One JSON object of a partial report: hands out its members by key, typed,
// and refuses keys it was not asked for.
class partial_object {
public:
    partial_object(const io::json_value& value, std::string_view file, std::string context)
        : value_(value), file_(file), context_(std::move(context)) {
        if (!value.is_object()) fail(value, context_ + " must be an object, found " + describe(value));
    }

    // Every key of the object must be one of `keys`, and each of them present.
    void expect_keys(std::initializer_list<std::string_view> keys) const {
        for (const io::json_member& member : value_.as_object()) {
            bool known = false;
            for (std::string_view key : keys) known = known || member.key == key;
            if (!known) fail(member.value, context_ + ": unknown key \"" + member.key + "\"");
        }
        for (std::string_view key : keys)
            if (value_.find(key) == nullptr) fail(value_, context_ + " has no \"" + std::string(key) + "\"");
    }
    const io::json_value& at(std::string_view key) const { return *value_.find(key); }

    std::string text(std::string_view key) const {
        const io::json_value& value = at(key);
        if (!value.is_string()) fail(value, where(key) + " must be a string, found " + describe(value));
        return value.as_string();
    }
    bool boolean(std::string_view key) const {
        const io::json_value& value = at(key);
        if (!value.is_bool()) fail(value, where(key) + " must be true or false, found " + describe(value));
        return value.as_bool();
    }
    std::int64_t integer(const io::json_value& value, std::string_view key, std::int64_t least,
                         std::int64_t most) const {
        if (!value.is_integer() || value.as_integer() < least || value.as_integer() > most)
            fail(value,
                 where(key) + " must be a whole number from " + std::to_string(least) + " to " + std::to_string(most));
        return value.as_integer();
    }
    std::int64_t integer(std::string_view key, std::int64_t least, std::int64_t most) const {
        return integer(at(key), key, least, most);
    }
    std::size_t index(std::string_view key, std::size_t bound) const { // below bound
        if (bound == 0) fail(at(key), where(key) + " cannot be valid: there is nothing to index");
        return std::size_t(integer(key, 0, std::int64_t(std::min<std::size_t>(bound - 1, max_index))));
    }
    // A double as json_writer writes it: a number, or "inf", "-inf", "nan".
    double real(const io::json_value& value, std::string_view key) const {
        if (value.is_number()) return value.as_number();
        if (value.is_string()) {
            if (value.as_string() == "nan") return std::numeric_limits<double>::quiet_NaN();
            if (value.as_string() == "inf") return std::numeric_limits<double>::infinity();
            if (value.as_string() == "-inf") return -std::numeric_limits<double>::infinity();
        }
        fail(value, where(key) + " must be a number or \"inf\", \"-inf\", \"nan\", found " + describe(value));
    }
    std::vector<std::string> texts(std::string_view key) const {
        const io::json_value& value = array(key);
        std::vector<std::string> result;
        for (const io::json_value& element : value.as_array()) {
            if (!element.is_string()) fail(element, where(key) + " must hold only strings, found " + describe(element));
            result.push_back(element.as_string());
        }
        return result;
    }
    const io::json_value& array(std::string_view key) const {
        const io::json_value& value = at(key);
        if (!value.is_array()) fail(value, where(key) + " must be an array, found " + describe(value));
        return value;
    }
    template <class Parse>
    auto spelled(std::string_view key, Parse&& parse) const {
        const std::string spelling = text(key);
        const auto parsed = parse(spelling);
        if (!parsed) fail(at(key), where(key) + " has the unknown value '" + spelling + "'");
        return *parsed;
    }

    [[noreturn]] void fail(const io::json_value& value, const std::string& reason) const {
        throw error(error_kind::schema,
                    std::string(file_) + ":" + std::to_string(value.line()) + ":" + std::to_string(value.column()) +
                        ": " + reason,
                    error_location::at_line(std::string(file_), std::uint32_t(value.line()),
                                            std::uint32_t(value.column()), context_));
    }
    const std::string& context() const noexcept { return context_; }
    std::string_view file() const noexcept { return file_; }

    static constexpr std::size_t max_index = std::size_t(std::numeric_limits<std::int64_t>::max());

private:
    std::string where(std::string_view key) const { return context_ + ": \"" + std::string(key) + "\""; }
    static std::string describe(const io::json_value& value) {
        return std::string(io::json_value::describe(value.type()));
    }

    const io::json_value& value_;
    std::string_view file_;
    std::string context_;
};

inline std::optional<match_kind> parse_match_kind(std::string_view text) noexcept {
    for (match_kind kind :
         {match_kind::one_to_one, match_kind::fused, match_kind::decomposed, match_kind::many_to_many})
        if (to_string(kind) == text) return kind;
    return std::nullopt;
}
inline std::optional<comparison> parse_comparison(std::string_view text) noexcept {
    for (comparison op : {comparison::ge, comparison::gt, comparison::le, comparison::lt, comparison::eq})
        if (symbol_of(op) == text) return op;
    return std::nullopt;
}
inline std::optional<error_kind> parse_error_kind(std::string_view text) noexcept {
    for (error_kind kind :
         {error_kind::io, error_kind::format, error_kind::schema, error_kind::shape, error_kind::dtype,
          error_kind::graph, error_kind::limit, error_kind::usage, error_kind::other})
        if (name_of(kind) == text) return kind;
    return std::nullopt;
}
inline std::optional<partial_row_origin> parse_partial_row_origin(std::string_view text) noexcept {
    for (partial_row_origin from :
         {partial_row_origin::group, partial_row_origin::unmatched_reference, partial_row_origin::unmatched_target})
        if (name_of(from) == text) return from;
    return std::nullopt;
}

inline std::optional<group_error> read_partial_error(const partial_object& row) {
    const io::json_value& value = row.at("error");
    if (value.is_null()) return std::nullopt;
    const partial_object failure(value, row.file(), row.context() + ": \"error\"");
    group_error result;
    for (const io::json_member& member : value.as_object()) {
        const std::string_view key = member.key;
        if (key == "kind") result.kind = failure.spelled("kind", parse_error_kind);
        else if (key == "file") result.where.file = failure.text("file");
        else if (key == "item") result.where.item = failure.text("item");
        else if (key == "offset")
            result.where.offset = std::uint64_t(failure.integer("offset", 0, std::numeric_limits<std::int64_t>::max()));
        else if (key == "line")
            result.where.line = std::uint32_t(failure.integer("line", 1, std::numeric_limits<std::uint32_t>::max()));
        else if (key == "column")
            result.where.column =
                std::uint32_t(failure.integer("column", 1, std::numeric_limits<std::uint32_t>::max()));
        else failure.fail(member.value, failure.context() + ": unknown key \"" + member.key + "\"");
    }
    if (value.find("kind") == nullptr) failure.fail(value, failure.context() + " has no \"kind\"");
    return result;
}

inline report_metric read_partial_metric(const io::json_value& value, std::string_view file,
                                         const std::string& context) {
    const partial_object metric(value, file, context);
    metric.expect_keys({"name", "value", "comparison", "threshold", "passed"});
    report_metric result;
    result.name = metric.text("name");
    result.value = metric.real(metric.at("value"), "value");
    result.passed = metric.boolean("passed");
    const std::string op = metric.text("comparison");
    const io::json_value& threshold = metric.at("threshold");
    if (op.empty() != threshold.is_null())
        metric.fail(threshold, context + ": \"comparison\" and \"threshold\" must be both empty or both set");
    if (!op.empty())
        result.rule = pass_rule{metric.spelled("comparison", parse_comparison), metric.real(threshold, "threshold")};
    return result;
}

inline partial_row read_partial_row(const io::json_value& value, std::string_view file, std::size_t position,
                                    const partial_report& partial) {
    const partial_object row(value, file, "row " + std::to_string(position));
    row.expect_keys({"from",  "index",    "ref_nodes",  "target_nodes",   "ref_tensor", "target_tensor",
                     "kind",  "strategy", "confidence", "ambiguous_with", "repair",     "fails_every_candidate",
                     "op",    "shape",    "dtype_ref",  "dtype_target",   "quant_ref",  "quant_target",
                     "count", "metrics",  "status",     "message",        "error"});
    partial_row entry;
    entry.from = row.spelled("from", parse_partial_row_origin);
    const std::size_t bound = entry.from == partial_row_origin::group                 ? partial.match_groups
                              : entry.from == partial_row_origin::unmatched_reference ? partial.reference_graph.size()
                                                                                      : partial.target_nodes;
    entry.index = row.index("index", bound);
    group_report& out = entry.row;
    out.reference_nodes = row.texts("ref_nodes");
    out.target_nodes = row.texts("target_nodes");
    out.reference_tensor = row.text("ref_tensor");
    out.target_tensor = row.text("target_tensor");
    if (!row.text("kind").empty()) out.kind = row.spelled("kind", parse_match_kind);
    out.strategy = row.text("strategy");
    const io::json_value& confidence = row.at("confidence");
    out.confidence = confidence.is_null() ? std::nullopt : std::optional<double>(row.real(confidence, "confidence"));
    out.ambiguous_with = row.texts("ambiguous_with");
    out.repair = row.spelled("repair", [](std::string_view text) { return parse_repair_state(text); });
    out.fails_every_candidate = row.boolean("fails_every_candidate");
    out.op = row.text("op");
    for (const io::json_value& dimension : row.array("shape").as_array())
        out.shape.push_back(row.integer(dimension, "shape", 0, std::numeric_limits<std::int64_t>::max()));
    if (!row.text("dtype_ref").empty()) out.dtype_reference = row.spelled("dtype_ref", parse_dtype);
    if (!row.text("dtype_target").empty()) out.dtype_target = row.spelled("dtype_target", parse_dtype);
    out.quantization_reference = row.text("quant_ref");
    out.quantization_target = row.text("quant_target");
    out.count = row.integer("count", 0, std::numeric_limits<std::int64_t>::max());
    std::size_t metric_position = 0;
    for (const io::json_value& metric : row.array("metrics").as_array())
        out.metrics.push_back(
            read_partial_metric(metric, file, row.context() + ": metric " + std::to_string(metric_position++)));
    out.status = row.spelled("status", [](std::string_view text) { return parse_group_status(text); });
    out.message = row.text("message");
    out.error_detail = read_partial_error(row);
    return entry;
}
} // namespace detail

// `file` names the text in error messages.
inline partial_report parse_partial_report(std::string_view text, std::string_view file) {
    // The format nests 5 levels deep (root, rows, row, metrics, metric).
    const io::json_value root = io::parse_json(text, file, 6);
    const detail::partial_object top(root, file, "partial report");
    if (const io::json_value* format = root.find("format");
        format == nullptr || !format->is_string() || format->as_string() != partial_report_format)
        top.fail(format ? *format : root,
                 "not a numgap partial report (\"format\" is not \"" + std::string(partial_report_format) + "\")");
    top.expect_keys({"format", "format_version", "shard", "shards", "fingerprint", "match_groups", "target_nodes",
                     "shard_bytes", "metrics", "reference_graph", "owned_groups", "rows"});
    if (top.integer("format_version", 0, std::numeric_limits<std::int64_t>::max()) != partial_report_format_version)
        top.fail(top.at("format_version"),
                 "partial report format_version " + std::to_string(top.at("format_version").as_integer()) +
                     " is not the version this numgap reads (" + std::to_string(partial_report_format_version) + ")");
    constexpr std::int64_t most = std::numeric_limits<std::int64_t>::max();
    partial_report partial;
    partial.shards = std::size_t(top.integer("shards", 1, most));
    partial.shard = top.index("shard", partial.shards);
    partial.fingerprint = top.text("fingerprint");
    partial.match_groups = std::size_t(top.integer("match_groups", 0, most));
    partial.target_nodes = std::size_t(top.integer("target_nodes", 0, most));
    partial.shard_bytes = std::uint64_t(top.integer("shard_bytes", 0, most));
    partial.metric_names = top.texts("metrics");
    for (const io::json_value& value : top.array("reference_graph").as_array()) {
        const detail::partial_object node(value, file,
                                          "reference graph node " + std::to_string(partial.reference_graph.size()));
        node.expect_keys({"name", "op", "producers"});
        report_node entry;
        entry.name = node.text("name");
        entry.op = node.text("op");
        // analyze_report checks producers precede their node; here only that they are indices of this graph.
        for (const io::json_value& producer : node.array("producers").as_array())
            entry.producers.push_back(std::size_t(node.integer(producer, "producers", 0, most)));
        partial.reference_graph.push_back(std::move(entry));
    }
    for (const io::json_value& group : top.array("owned_groups").as_array()) {
        const std::size_t index = std::size_t(top.integer(group, "owned_groups", 0, most));
        if (index >= partial.match_groups || (!partial.owned_groups.empty() && index <= partial.owned_groups.back()))
            top.fail(group,
                     "partial report: \"owned_groups\" must be ascending group indices below \"match_groups\" (" +
                         std::to_string(partial.match_groups) + ")");
        partial.owned_groups.push_back(index);
    }
    for (const io::json_value& row : top.array("rows").as_array())
        partial.rows.push_back(detail::read_partial_row(row, file, partial.rows.size(), partial));
    return partial;
}

inline partial_report read_partial_report(const std::filesystem::path& path) {
    const io::mapped_file file = io::mapped_file::open(path);
    const std::span<const std::byte> bytes = file.bytes();
    return parse_partial_report(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                                path.string());
}

} // namespace numgap
