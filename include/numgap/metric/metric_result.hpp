#pragma once
// metric_result: one metric evaluated on one tensor pair: its value, the rule
// it was judged by (the metric's default or the caller's override; none means
// informational) and whether it passed. NaN policy: a NaN value always fails,
// with or without a rule.
// Complexity: O(1). Throws: nothing (make_metric_result: std::bad_alloc).
#include <optional>
#include <string>
#include <string_view>

#include <numgap/metric/rule.hpp>

namespace numgap {

struct metric_result {
    std::string name;
    double value = 0.0;
    std::optional<pass_rule> rule;
    bool passed = false;
};

// The verdict for value under rule: the rule's, or "not NaN" without one.
inline bool metric_passes(const std::optional<pass_rule>& rule, double value) noexcept {
    return rule ? rule->accepts(value) : value == value;
}

inline metric_result make_metric_result(std::string_view name, double value, std::optional<pass_rule> rule) {
    return metric_result{std::string(name), value, rule, metric_passes(rule, value)};
}

} // namespace numgap
