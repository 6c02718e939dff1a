#pragma once
// Pass rules: a comparison against a threshold ("cosine >= 0.99"), the
// direction a metric improves in, and their text form for the CLI and reports.
// parse_pass_rule accepts an operator (>=, >, <=, <, ==) followed by a finite
// or infinite number, with optional spaces: ">=0.99", "< 0.1", "== 0",
// "<=1e-3". NaN thresholds and trailing text are rejected (nullopt).
// NaN policy: a NaN value is never accepted by any rule.
// Complexity: O(length of the text). Throws: to_string may throw std::bad_alloc.
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace numgap {

enum class direction { higher_is_better, lower_is_better };
enum class comparison { ge, gt, le, lt, eq };

struct pass_rule {
    comparison op = comparison::ge;
    double value = 0.0;

    constexpr bool accepts(double v) const noexcept {
        if (v != v) return false;
        switch (op) {
        case comparison::ge: return v >= value;
        case comparison::gt: return v > value;
        case comparison::le: return v <= value;
        case comparison::lt: return v < value;
        case comparison::eq: return v == value;
        }
        return false;
    }
    friend constexpr bool operator==(const pass_rule&, const pass_rule&) = default;
};

constexpr std::string_view symbol_of(comparison op) noexcept {
    switch (op) {
    case comparison::ge: return ">=";
    case comparison::gt: return ">";
    case comparison::le: return "<=";
    case comparison::lt: return "<";
    case comparison::eq: return "==";
    }
    return "?";
}

inline std::optional<pass_rule> parse_pass_rule(std::string_view text) {
    auto trim = [](std::string_view s) {
        while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
        while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
        return s;
    };
    text = trim(text);
    constexpr struct {
        std::string_view symbol;
        comparison op;
    } operators[] = {{">=", comparison::ge}, {"<=", comparison::le}, {"==", comparison::eq},
                     {">", comparison::gt},  {"<", comparison::lt}};
    for (const auto& candidate : operators) {
        if (!text.starts_with(candidate.symbol)) continue;
        std::string_view number = trim(text.substr(candidate.symbol.size()));
        if (number.starts_with('+')) number.remove_prefix(1);
        double value = 0;
        const auto [end, status] = std::from_chars(number.data(), number.data() + number.size(), value);
        if (number.empty() || status != std::errc() || end != number.data() + number.size() || std::isnan(value))
            return std::nullopt;
        return pass_rule{candidate.op, value};
    }
    return std::nullopt;
}

// Shortest text that parses back to the same rule, e.g. ">= 0.99".
inline std::string to_string(const pass_rule& rule) {
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, rule.value);
    return std::string(symbol_of(rule.op)) + " " + std::string(buffer, result.ptr);
}

} // namespace numgap
