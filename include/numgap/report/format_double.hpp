#pragma once
// format_double: the shortest decimal text that reads back to the same double,
// with non-finite values spelled "inf", "-inf" and "nan".
//
// Why not printf("%g"): six digits lose the difference between cosine 0.9999996
// and 1, which is exactly what a user comparing runs needs to see; "%.17g"
// round-trips but prints 0.10000000000000001. std::to_chars gives the shortest
// round-tripping form. Used for CSV cells, DOT labels and the CLI table (the
// JSON writers use io/json/writer.hpp, which quotes the non-finite spellings).
// Complexity: O(1). Throws: std::bad_alloc only.
#include <charconv>
#include <cmath>
#include <string>

namespace numgap {

inline std::string format_double(double value) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
}

// Fixed significant digits for human-facing text (labels, table); not round-trip.
inline std::string format_double_short(double value, int significant_digits = 6) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    char buffer[40];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value,
                                      std::chars_format::general, significant_digits);
    return std::string(buffer, result.ptr);
}

} // namespace numgap
