#pragma once
// Hand-built reports shared by the report tests: a small reference graph with
// a residual edge, and helpers to set each group's status.
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

#include <numgap/report/comparison_report.hpp>

namespace numgap::test {

// x -> conv1 -> norm1 -> relu1 -> conv2 -> norm2 -> add(relu1, norm2) -> out
inline std::vector<report_node> residual_graph() {
    return {{"x", "input", {}},          {"conv1", "conv", {0}}, {"norm1", "group_norm", {1}},
            {"relu1", "relu", {2}},      {"conv2", "conv", {3}}, {"norm2", "group_norm", {4}},
            {"add", "add", {3, 5}},      {"out", "linear", {6}}};
}

// Row i of `rows` changed by `change` (report_rows keeps rows whole: a copy
// of a row changed in place would change nothing).
template <class Change>
void edit_row(report_rows& rows, std::size_t i, Change change) {
    group_report row = rows[i];
    change(row);
    rows.set(i, row);
}

inline group_report make_group(std::vector<std::string> reference, group_status status,
                               double cosine = 1.0) {
    group_report group;
    group.reference_nodes = reference;
    group.target_nodes = reference;
    group.reference_tensor = reference.back();
    group.target_tensor = reference.back();
    group.kind = reference.size() > 1 ? match_kind::fused : match_kind::one_to_one;
    group.strategy = "name";
    group.status = status;
    group.shape = {1, 8, 4, 4};
    group.dtype_reference = dtype::float32;
    group.dtype_target = dtype::float16;
    group.count = 128;
    const bool compared = status == group_status::pass || status == group_status::fail;
    if (compared) {
        group.metrics.push_back({"cosine", cosine, pass_rule{comparison::ge, 0.99}, cosine >= 0.99});
        group.metrics.push_back({"mse", 1 - cosine, pass_rule{comparison::le, 1e-3}, 1 - cosine <= 1e-3});
    }
    return group;
}

// One one-node group per name, with the given statuses; names absent from
// `statuses` are left unmatched (no group).
inline comparison_report make_report(
    std::initializer_list<std::pair<const char*, group_status>> statuses) {
    comparison_report report;
    report.metric_names = {"cosine", "mse"};
    report.reference_graph = residual_graph();
    for (const auto& [name, status] : statuses) {
        group_report row = make_group({name}, status, status == group_status::fail ? 0.5 : 0.99999);
        for (const report_node& node : report.reference_graph)
            if (node.name == name) row.op = node.op;
        report.groups.push_back(row);
    }
    return report;
}

} // namespace numgap::test

namespace numgap::test {

// A chain of nodes whose names and ops hold every byte 0x00-0xFF (invalid
// UTF-8 included), quotes, backslashes and Graphviz escapes, XML markup and
// character references, a bidi override and a C1 control; every group fails.
inline comparison_report hostile_report() {
    std::string low, high;
    for (int byte = 0; byte < 0x80; ++byte) low += char(byte);
    for (int byte = 0x80; byte < 0x100; ++byte) high += char(byte);
    const std::vector<std::string> names = {
        low, high, "q\"uote\\ back\\", "<tag a=\"1\">&amp;]]>\n&#1;&#x1b;&#xD800;&bogus;",
        "\\N\\G\\L\\l\\r\\", "gn\xe2\x80\xae" "2 \xe5\xb1\x82 \xc2\x9b" "31m"};
    comparison_report report;
    report.metric_names = {"cosine", "mse"};
    for (std::size_t i = 0; i < names.size(); ++i) {
        report.reference_graph.push_back({names[i], names[names.size() - 1 - i], {}});
        if (i) report.reference_graph.back().producers = {i - 1};
        group_report row = make_group({names[i]}, group_status::fail, 0.5);
        row.op = names[names.size() - 1 - i];
        row.order = i;
        report.groups.push_back(row);
    }
    return report;
}

} // namespace numgap::test

namespace numgap::test {

// A chain of n one-node groups named "node<i>" (node i reads node i-1), all
// passing except the indices in `failing`; not yet analysed.
inline comparison_report chain_report(std::size_t n, const std::vector<std::size_t>& failing) {
    comparison_report report;
    report.metric_names = {"cosine", "mse"};
    report.reference_graph.reserve(n);
    report.groups.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::string name = "node" + std::to_string(i);
        report.reference_graph.push_back({name, "add", {}});
        if (i) report.reference_graph.back().producers = {i - 1};
        const bool fails = std::find(failing.begin(), failing.end(), i) != failing.end();
        group_report row = make_group({name}, fails ? group_status::fail : group_status::pass, fails ? 0.5 : 0.99999);
        row.op = "add";
        row.order = i;
        report.groups.push_back(row);
    }
    return report;
}

} // namespace numgap::test
