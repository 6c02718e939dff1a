#pragma once
// for_each_row: the row-wise pass used by the row metrics (kl_div, topk).
// A row is the reference's last axis (in reference order, axis_order applied).
// For each row, row(const row_blocks&) is called; row_blocks::for_each(block)
// dequantizes the row into float64 and hands it over in consecutive blocks,
// block(std::span<const double> reference, std::span<const double> target,
// std::int64_t offset_in_row), and may be called several times per row (a
// metric that needs the row's maximum first makes one pass for it).
// This is a separate pass from the fused kernel: row metrics need a whole
// row's statistics (softmax normalisation, ranking) before they can use it.
//
// Memory bound: two float64 buffers of min(row length, row_block_elements)
// elements each — at most 1 MiB, whatever the row length or tensor size (a
// 1-D tensor is one row, and a 2 GiB one must not need 4 GiB of doubles). A
// row that fits in one block is gathered once and reused by every pass.
// Precondition: validate_pair() accepted the views.
// Complexity: O(n) per pass, plus the callback; allocates the two buffers
// once per call. Throws: std::bad_alloc, or what the callback throws.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/plan/gather.hpp>
#include <numgap/kernels/plan/pair_plan.hpp>

namespace numgap::kernels {

// Elements of one side gathered at a time: 512 KiB of doubles, which keeps a
// block in L2 across the passes of a short row and bounds a long one.
inline constexpr std::int64_t row_block_elements = std::int64_t(1) << 16;

// One row of both sides, read block by block; see for_each_row.
class row_blocks {
public:
    std::int64_t length() const noexcept { return length_; }

    template <class Block>
    void for_each(Block&& block) const {
        const std::int64_t capacity = std::int64_t(reference_buffer_.size());
        for (std::int64_t offset = 0; offset < length_; offset += capacity) {
            const std::size_t count = std::size_t(std::min(capacity, length_ - offset));
            if (!gathered_) {
                detail::gather(plan_, plan_.reference, start_ + offset, count, reference_buffer_.data());
                detail::gather(plan_, plan_.target, start_ + offset, count, target_buffer_.data());
                // The whole row is in the buffers: later passes reuse it.
                gathered_ = count == std::size_t(length_);
            }
            block(std::span<const double>(reference_buffer_.data(), count),
                  std::span<const double>(target_buffer_.data(), count), offset);
        }
    }

private:
    template <class Row>
    friend void for_each_row(const tensor_view&, const tensor_view&, Row&&);

    explicit row_blocks(const pair_plan& plan)
        : plan_(plan), length_(plan.shape[std::size_t(plan.rank - 1)]),
          reference_buffer_(std::size_t(std::min(length_, row_block_elements))),
          target_buffer_(reference_buffer_.size()) {}

    void start_row(std::int64_t start) noexcept {
        start_ = start;
        gathered_ = false;
    }

    const pair_plan& plan_;
    std::int64_t length_;
    std::int64_t start_ = 0;
    mutable bool gathered_ = false;
    mutable std::vector<double> reference_buffer_, target_buffer_;
};

template <class Row>
void for_each_row(const tensor_view& reference, const tensor_view& target, Row&& row) {
    const pair_plan plan = make_pair_plan(reference, target, /*keep_last_axis=*/true);
    row_blocks blocks(plan);
    for (std::int64_t start = 0; start < plan.count; start += blocks.length()) {
        blocks.start_row(start);
        row(static_cast<const row_blocks&>(blocks));
    }
}

// Length of the rows for_each_row hands over (1 for a scalar).
inline std::int64_t row_length(const tensor_view& reference) noexcept {
    return reference.rank() == 0 ? 1 : reference.logical_shape()[std::size_t(reference.rank() - 1)];
}

} // namespace numgap::kernels
