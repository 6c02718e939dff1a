#pragma once
// report_metric: one metric's value for one group, with the rule it was judged by.
//
// Why a copy of the rule as text + number instead of numgap::pass_rule: the
// report is plain data that writers, hand-built tests and users can fill
// without pulling in the metric machinery, and the comparison is written to
// CSV/JSON exactly as the user typed it (">=", "<=", ">", "<", "==").
// Complexity: O(1). Throws: nothing.
#include <limits>
#include <optional>
#include <string>

namespace numgap {

struct report_metric {
    std::string name;
    double value = std::numeric_limits<double>::quiet_NaN();
    // Empty when the metric is informational (no pass/fail rule).
    std::string comparison;
    std::optional<double> threshold;
    bool passed = true;

    bool has_rule() const noexcept { return threshold.has_value(); }
};

} // namespace numgap
