#pragma once
// topk_rows: fraction of rows (last axis) whose top-k index sets differ
// between reference and target. Ranking is by value, descending; ties are
// broken by the lower index, so the set is always well defined and two equal
// rows always agree. The sets are compared as sets (order inside the top k
// does not matter). A NaN anywhere in either tensor makes the result NaN (its
// rank is undefined). -Inf and +Inf rank like any other value.
// Precondition: validate_pair() accepted the views; 1 <= k <= row length
// (checked by numgap::topk before calling).
// Complexity: O(n log k); allocates row and index buffers once. Throws: std::bad_alloc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/for_each_row.hpp>

namespace numgap::kernels {

namespace detail {
inline void top_indices(std::span<const double> row, std::size_t k, std::vector<std::int64_t>& indices) {
    indices.resize(row.size());
    std::iota(indices.begin(), indices.end(), std::int64_t(0));
    std::partial_sort(indices.begin(), indices.begin() + std::ptrdiff_t(k), indices.end(),
                      [&](std::int64_t a, std::int64_t b) {
                          return row[std::size_t(a)] > row[std::size_t(b)] ||
                                 (row[std::size_t(a)] == row[std::size_t(b)] && a < b);
                      });
    indices.resize(k);
    std::sort(indices.begin(), indices.end());
}
} // namespace detail

inline double topk_rows(const tensor_view& reference, const tensor_view& target, std::int64_t k) {
    std::int64_t rows = 0, differing = 0;
    bool saw_nan = false;
    std::vector<std::int64_t> reference_top, target_top;
    for_each_row(reference, target, [&](std::span<const double> r, std::span<const double> t) {
        ++rows;
        if (saw_nan) return;
        for (std::size_t i = 0; i < r.size(); ++i)
            if (std::isnan(r[i]) || std::isnan(t[i])) {
                saw_nan = true;
                return;
            }
        detail::top_indices(r, std::size_t(k), reference_top);
        detail::top_indices(t, std::size_t(k), target_top);
        differing += reference_top == target_top ? 0 : 1;
    });
    if (saw_nan) return std::numeric_limits<double>::quiet_NaN();
    return double(differing) / double(rows);
}

} // namespace numgap::kernels
