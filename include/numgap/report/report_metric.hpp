#pragma once
// report_metric: one metric's value for one group, with the rule it was judged by.
//
// The rule is the metric layer's own pass_rule (an enum comparison and a
// threshold), so a program reading the report acts on it without parsing
// text; the writers spell it (">=", ">", "<=", "<", "==") and only they do.
// Complexity: O(1). Throws: nothing.
#include <limits>
#include <optional>
#include <string>

#include <numgap/metric/rule.hpp>

namespace numgap {

struct report_metric {
    std::string name;
    double value = std::numeric_limits<double>::quiet_NaN();
    // Empty when the metric is informational (no pass/fail rule).
    std::optional<pass_rule> rule;
    bool passed = true;

    bool has_rule() const noexcept { return rule.has_value(); }
};

} // namespace numgap
