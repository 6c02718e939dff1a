#pragma once
// group_error: why an `error` row could not be compared, as data — the kind
// and location of the numgap::error that stopped it (core/error.hpp), beside
// the row's message, so a tool embedding numgap can tell a truncated file
// (format, naming the file) from a shape mismatch without parsing English.
// The JSON report writes it as the row's "error" object, the CSV as the
// error_* columns.
// Complexity: O(1). Throws: nothing.
#include <numgap/core/error.hpp>

namespace numgap {

struct group_error {
    error_kind kind = error_kind::other;
    error_location where;
};

} // namespace numgap
