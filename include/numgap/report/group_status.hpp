#pragma once
// group_status: the outcome of one row of a comparison report.
//
// Why an enum of five and not a bool: a partial dump (`missing`) and a tensor
// that could not be read or paired (`error`) must not be mistaken for a pass or
// a numerical failure, and unmatched nodes still get a row so the CSV/JSON list
// every node of both graphs. The names are the CSV/JSON spellings.
// Complexity: O(1). Throws: nothing.
#include <cstdint>
#include <optional>
#include <string_view>

namespace numgap {

enum class group_status : std::uint8_t {
    pass,      // every metric with a threshold met it
    fail,      // at least one metric missed its threshold
    unmatched, // a node of one graph that no match group covers
    missing,   // matched, but a side's tensor was not dumped (partial dumps are normal)
    error,     // matched, but a tensor could not be loaded or the pair is incompatible
};

constexpr std::string_view name_of(group_status status) noexcept {
    switch (status) {
    case group_status::pass: return "pass";
    case group_status::fail: return "fail";
    case group_status::unmatched: return "unmatched";
    case group_status::missing: return "missing";
    case group_status::error: return "error";
    }
    return "error";
}

constexpr std::optional<group_status> parse_group_status(std::string_view text) noexcept {
    for (group_status status : {group_status::pass, group_status::fail, group_status::unmatched,
                                group_status::missing, group_status::error})
        if (name_of(status) == text) return status;
    return std::nullopt;
}

} // namespace numgap
