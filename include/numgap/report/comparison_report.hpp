#pragma once
// comparison_report: everything compare_runs found, as plain data.
//
// Why plain data: writers, the CLI and users' own tooling read it, tests build
// it by hand, and it outlives the graphs and tensor sources it came from.
// `metric_names` fixes the metric column order of every writer. `groups`
// keeps the rows as columns (report_rows.hpp): groups[i] is a copy of row i.
// `reference_graph` is the reference graph in topological order (see
// report_node.hpp); analyze_report fills `summary` and each group's `order`
// and `error_origin` from it.
// Complexity: O(1). Throws: nothing.
#include <string>
#include <vector>

#include <numgap/report/group_report.hpp>
#include <numgap/report/report_node.hpp>
#include <numgap/report/report_rows.hpp>
#include <numgap/report/report_summary.hpp>

namespace numgap {

struct comparison_report {
    std::vector<std::string> metric_names;
    report_rows groups; // one group_report a row, stored compactly (report_rows.hpp)
    std::vector<report_node> reference_graph;
    report_summary summary;

    // True when every compared group passed and none had an error: the CLI's exit code 0.
    bool all_passed() const noexcept { return summary.failed == 0 && summary.errors == 0; }
};

} // namespace numgap
