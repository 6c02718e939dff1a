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
// Non-finite values are written as "inf"/"-inf"/"nan" (io/json.hpp).
// Complexity: O(N) in the reference graph. Throws: numgap::error when the
// metric is not in the report or the file cannot be written.
#include <cfloat>
#include <cmath>
#include <filesystem>
#include <string>
#include <string_view>

#include <numgap/io/json.hpp>
#include <numgap/report/comparison_report.hpp>
#include <numgap/report/detail/text.hpp>
#include <numgap/report/dot.hpp>

namespace numgap {

inline std::string to_model_explorer(const comparison_report& report, std::string_view metric_name = {}) {
    const std::string metric = detail::chosen_metric(report, metric_name);
    std::string out = "{\"results\":{";
    bool first = true;
    const report_metric* rule = nullptr;
    for (const group_report& group : report.groups) {
        if (!group.compared()) continue;
        const report_metric* value = group.find_metric(metric);
        if (!value) continue;
        if (!rule && value->has_rule()) rule = value;
        for (const std::string& node : group.reference_nodes) {
            if (!first) out += ',';
            first = false;
            out += '\n';
            io::write_json_string(out, node);
            out += ":{\"value\":";
            io::write_json_number(out, value->value);
            out += '}';
        }
    }
    out += "\n},\"thresholds\":[";
    if (rule) {
        const double t = *rule->threshold;
        const double below = std::nextafter(t, -HUGE_VAL);
        const char* red = "#e53935";
        const char* green = "#66bb6a";
        auto entry = [&](double value, const char* colour, bool last) {
            out += "{\"value\":";
            io::write_json_number(out, value);
            out += ",\"bgColor\":\"";
            out += colour;
            out += "\"}";
            if (!last) out += ',';
        };
        const std::string& op = rule->comparison;
        if (op == ">=" || op == ">") {
            entry(op == ">=" ? below : t, red, false);
            entry(DBL_MAX, green, true);
        } else if (op == "<=" || op == "<") {
            entry(op == "<=" ? t : below, green, false);
            entry(DBL_MAX, red, true);
        }
    }
    out += "]}\n";
    return out;
}

inline void write_model_explorer(const comparison_report& report, const std::filesystem::path& path,
                                 std::string_view metric_name = {}) {
    detail::write_text_file(path, to_model_explorer(report, metric_name), "Model Explorer node data");
}

} // namespace numgap
