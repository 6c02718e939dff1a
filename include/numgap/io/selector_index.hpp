#pragma once
// numgap::io::detail::selector_index: the one reader of the small decimal
// numbers in run selectors and folder names: ETDump's `#run=N`, Polygraphy's
// `#RUNNER@N` and QNN's `Result_N` folders.
//
// Accepted: 1 to 9 ASCII digits, nothing else (no sign, no blank, no
// exponent), so the value always fits and "01" reads as 1. Anything else is
// nullopt; each caller says in its own error what it expected.
#include <cstddef>
#include <optional>
#include <string_view>

namespace numgap::io::detail {

inline constexpr std::size_t selector_index_max_digits = 9;

inline std::optional<std::size_t> selector_index(std::string_view digits) noexcept {
    if (digits.empty() || digits.size() > selector_index_max_digits) return std::nullopt;
    std::size_t value = 0;
    for (const char c : digits) {
        if (c < '0' || c > '9') return std::nullopt;
        value = value * 10 + std::size_t(c - '0');
    }
    return value;
}

} // namespace numgap::io::detail
