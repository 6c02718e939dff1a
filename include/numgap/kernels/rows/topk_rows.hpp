#pragma once
// topk_rows: fraction of rows (last axis) whose top-k index sets differ
// between reference and target. Ranking is by value, descending; ties are
// broken by the lower index, so the set is always well defined and two equal
// rows always agree. The sets are compared as sets (order inside the top k
// does not matter). A NaN anywhere in either tensor makes the result NaN (its
// rank is undefined). -Inf and +Inf rank like any other value.
// Precondition: validate_pair() accepted the views; 1 <= k <= row length
// (checked by numgap::topk before calling).
// Complexity: O(n log k), one pass over each row. Memory: the two blocks of
// for_each_row (at most 1 MiB) plus O(k) per side, whatever the row or
// tensor size. Throws: std::bad_alloc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/rows/for_each_row.hpp>

namespace numgap::kernels {

namespace detail {
// The k best (value, index) pairs of a stream, best = larger value, then
// lower index. A heap whose front is the worst kept pair: O(log k) per
// element that enters, O(1) for one that does not.
class top_k_stream {
public:
    void restart(std::size_t k) {
        k_ = k;
        kept_.clear();
        kept_.reserve(k);
    }
    void offer(double value, std::int64_t index) {
        const entry candidate{value, index};
        if (kept_.size() < k_) {
            kept_.push_back(candidate);
            std::push_heap(kept_.begin(), kept_.end(), better);
        } else if (better(candidate, kept_.front())) {
            std::pop_heap(kept_.begin(), kept_.end(), better);
            kept_.back() = candidate;
            std::push_heap(kept_.begin(), kept_.end(), better);
        }
    }
    // The kept indices, ascending (the set, in a comparable form).
    void sorted_indices(std::vector<std::int64_t>& out) const {
        out.clear();
        for (const entry& kept : kept_) out.push_back(kept.index);
        std::sort(out.begin(), out.end());
    }

private:
    struct entry {
        double value;
        std::int64_t index;
    };
    static bool better(const entry& a, const entry& b) noexcept {
        return a.value > b.value || (a.value == b.value && a.index < b.index);
    }
    std::size_t k_ = 0;
    std::vector<entry> kept_;
};
} // namespace detail

inline double topk_rows(const tensor_view& reference, const tensor_view& target, std::int64_t k) {
    std::int64_t rows = 0, differing = 0;
    bool saw_nan = false;
    detail::top_k_stream reference_top, target_top;
    std::vector<std::int64_t> reference_set, target_set;
    for_each_row(reference, target, [&](const row_blocks& row) {
        ++rows;
        if (saw_nan) return;
        reference_top.restart(std::size_t(k));
        target_top.restart(std::size_t(k));
        row.for_each([&](std::span<const double> r, std::span<const double> t, std::int64_t offset) {
            for (std::size_t i = 0; i < r.size() && !saw_nan; ++i) {
                if (std::isnan(r[i]) || std::isnan(t[i])) saw_nan = true;
                reference_top.offer(r[i], offset + std::int64_t(i));
                target_top.offer(t[i], offset + std::int64_t(i));
            }
        });
        if (saw_nan) return;
        reference_top.sorted_indices(reference_set);
        target_top.sorted_indices(target_set);
        differing += reference_set == target_set ? 0 : 1;
    });
    if (saw_nan) return std::numeric_limits<double>::quiet_NaN();
    return double(differing) / double(rows);
}

} // namespace numgap::kernels
