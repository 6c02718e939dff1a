#pragma once
// for_each_row: the row-wise pass used by the row metrics (kl_div, topk).
// A row is the reference's last axis (in reference order, axis_order applied);
// each row of both sides is dequantized into float64 buffers and handed to
// row(std::span<const double> reference, std::span<const double> target).
// This is a separate pass from the fused kernel: row metrics need a whole row
// at once (softmax normalisation, ranking).
// Precondition: validate_pair() accepted the views.
// Complexity: O(n) plus the callback; allocates two buffers of one row each,
// once per call. Throws: std::bad_alloc, or what the callback throws.
#include <cstdint>
#include <span>
#include <vector>

#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/pair_plan.hpp>

namespace numgap::kernels {

template <class Row>
void for_each_row(const tensor_view& reference, const tensor_view& target, Row&& row) {
    const pair_plan plan = make_pair_plan(reference, target, /*keep_last_axis=*/true);
    const std::int64_t length = plan.shape[std::size_t(plan.rank - 1)];
    std::vector<double> reference_row(static_cast<std::size_t>(length)), target_row(static_cast<std::size_t>(length));
    for (std::int64_t start = 0; start < plan.count; start += length) {
        detail::gather(plan, plan.reference, start, std::size_t(length), reference_row.data());
        detail::gather(plan, plan.target, start, std::size_t(length), target_row.data());
        row(std::span<const double>(reference_row), std::span<const double>(target_row));
    }
}

// Length of the rows for_each_row hands over (1 for a scalar).
inline std::int64_t row_length(const tensor_view& reference) noexcept {
    return reference.rank() == 0 ? 1 : reference.logical_shape()[std::size_t(reference.rank() - 1)];
}

} // namespace numgap::kernels
