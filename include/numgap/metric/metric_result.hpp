#pragma once
// metric_result: one metric evaluated on one tensor pair: its value, the rule
// it was judged by (the metric's default or the caller's override; none means
// informational) and whether it passed. NaN policy: a NaN value always fails,
// with or without a rule.
// name views the metric's own name, metric_traits<M>::name: a static data
// member, so it stays valid for the whole program (for a metric defined in a
// shared library, while that library is loaded) and a result copies no
// string (four owned names cost evaluate() ~10 ns of a 0.125 µs call at 2^10
// elements on AMD Zen 5). make_metric_result views the name it is given:
// that one must outlive the result.
// Complexity: O(1). Throws: nothing.
#include <optional>
#include <string_view>

#include <numgap/metric/rule.hpp>

namespace numgap {

struct metric_result {
    std::string_view name;
    double value = 0.0;
    std::optional<pass_rule> rule;
    bool passed = false;
};

// The verdict for value under rule: the rule's, or "not NaN" without one.
inline bool metric_passes(const std::optional<pass_rule>& rule, double value) noexcept {
    return rule ? rule->accepts(value) : value == value;
}

inline metric_result make_metric_result(std::string_view name, double value, std::optional<pass_rule> rule) noexcept {
    return metric_result{name, value, rule, metric_passes(rule, value)};
}

} // namespace numgap
