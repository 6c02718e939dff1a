#pragma once
// Model Explorer node data: {"results": {node: {"value": v}}, "thresholds": [...]}
// so the per-node metric can be overlaid on the model in Google's Model Explorer.
//
// Every reference node of a compared group carries its group's value of the
// chosen metric (the first metric with a threshold unless told otherwise), so
// fused groups colour all their nodes. Model Explorer colours a node with the
// first threshold (ascending) whose value is >= the node's value; the two
// thresholds are derived from the metric's rule so that exactly the failing
// values come out red and the passing ones green:
//   ">= t": [{nextafter(t, -inf), red}, {DBL_MAX, green}]   "> t": [{t, red}, ...]
//   "<= t": [{t, green}, {DBL_MAX, red}]   "< t": [{nextafter(t, -inf), green}, ...]
// An "==" rule has no such pair and gets no thresholds. Written through
// io::json_writer; non-finite values as "inf"/"-inf"/"nan".
// Complexity: O(N) in the reference graph. Throws: numgap::error when the
// metric is not in the report or the file cannot be written.
#include <cfloat>
#include <cmath>
#include <filesystem>
#include <string>
#include <string_view>

#include <numgap/io/json/writer.hpp>
#include <numgap/metric/rule.hpp>
#include <numgap/report/comparison_report.hpp>
#include <numgap/report/detail/text.hpp>
#include <numgap/report/dot.hpp>

namespace numgap {

namespace detail {
// The two Model Explorer thresholds that colour exactly the values `rule`
// rejects red (see the top of this header).
inline void write_model_explorer_thresholds(io::json_writer& json, const pass_rule& rule) {
    const double below = std::nextafter(rule.value, -HUGE_VAL);
    constexpr std::string_view red = "#e53935";
    constexpr std::string_view green = "#66bb6a";
    const auto entry = [&](double value, std::string_view colour) {
        json.begin_object().key("value").number(value).key("bgColor").string(colour).end_object();
    };
    switch (rule.op) {
    case comparison::ge: entry(below, red), entry(DBL_MAX, green); break;
    case comparison::gt: entry(rule.value, red), entry(DBL_MAX, green); break;
    case comparison::le: entry(rule.value, green), entry(DBL_MAX, red); break;
    case comparison::lt: entry(below, green), entry(DBL_MAX, red); break;
    case comparison::eq: break;
    }
}
} // namespace detail

inline std::string to_model_explorer(const comparison_report& report, std::string_view metric_name = {}) {
    const std::string metric = detail::chosen_metric(report, metric_name);
    std::string out;
    io::json_writer json(out);
    json.begin_object().key("results").begin_object();
    const report_rows& rows = report.groups;
    std::optional<pass_rule> rule;
    for (std::size_t g = 0; g < rows.size(); ++g) {
        if (!rows.compared(g)) continue;
        const report_rows::metric_cell* value = rows.find_metric(g, metric);
        if (!value) continue;
        if (!rule) rule = rows.metric_rule(*value);
        for (const std::string_view node : rows.reference_nodes(g))
            json.line_break().key(node).begin_object().key("value").number(value->value).end_object();
    }
    json.line_break().end_object();
    json.key("thresholds").begin_array();
    if (rule) detail::write_model_explorer_thresholds(json, *rule);
    json.end_array().end_object();
    out += '\n';
    return out;
}

inline void write_model_explorer(const comparison_report& report, const std::filesystem::path& path,
                                 std::string_view metric_name = {}) {
    detail::write_text_file(path, to_model_explorer(report, metric_name), "Model Explorer node data");
}

} // namespace numgap
