#pragma once
// numgap::slice_along: the part [offset, offset + length) of a view along one
// dimension, as a view into the same memory (no copy). The dimension is given
// in *reference* order (axis_order applied), because that is the order in
// which two sides of a comparison agree; the stored dimension it maps to keeps
// its stride, the data pointer moves by offset * stride elements.
//
// Why it exists: a tensor stored as tensor-parallel shards is compared piece
// by piece (metric/evaluate_segments.hpp); the unsplit side's piece is this
// slice, so no concatenated copy of either side is ever made.
//
// Quantization follows the slice: per-tensor parameters are kept, per-channel
// ones along the sliced dimension are narrowed to the slice's channels (and
// kept as they are along any other dimension). Refused with numgap::error
// (kind usage): a range outside the dimension, block quantization (its
// parameters are laid out over the whole tensor: a slice is not a sub-span of
// them), and packed 4-bit data whose slice would start inside a byte.
// Complexity: O(rank). Throws: numgap::error as above.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/quantization.hpp>
#include <numgap/core/tensor_view.hpp>

namespace numgap {

inline tensor_view slice_along(const tensor_view& view, int axis, std::int64_t offset, std::int64_t length) {
    const error_location where = error_location::of_item(std::string(view.name()));
    if (axis < 0 || axis >= view.rank())
        throw error(error_kind::usage,
                    view.describe() + ": cannot slice along dimension " + std::to_string(axis) + " of a rank " +
                        std::to_string(view.rank()) + " tensor",
                    where);
    int stored = axis;
    for (int d = 0; d < view.rank() && view.has_axis_order(); ++d)
        if (view.axis_order()[std::size_t(d)] == axis) stored = d;
    const std::int64_t extent = view.shape(stored);
    if (offset < 0 || length < 0 || offset > extent || length > extent - offset)
        throw error(error_kind::usage,
                    view.describe() + ": slice [" + std::to_string(offset) + ", " + std::to_string(offset + length) +
                        ") lies outside dimension " + std::to_string(axis) + " of length " + std::to_string(extent),
                    where);
    const quantization& q = view.quant();
    if (view.is_quantized() && q.per_block())
        throw error(error_kind::usage,
                    view.describe() + " is block-quantized; its blocks' parameters cover the whole tensor, so it "
                                      "cannot be compared piece by piece against shards split along another layout",
                    where);
    const std::int64_t element_offset = offset * view.stride(stored);
    if (is_packed(view.type()) && element_offset % 2 != 0)
        throw error(error_kind::usage,
                    view.describe() + " stores packed 4-bit values and the slice at " + std::to_string(offset) +
                        " along dimension " + std::to_string(axis) + " would start inside a byte",
                    where);
    const std::int64_t byte_offset =
        is_packed(view.type()) ? element_offset / 2 : element_offset * std::int64_t(size_of(view.type()));
    std::array<std::int64_t, max_rank> shape{};
    for (int d = 0; d < view.rank(); ++d) shape[std::size_t(d)] = view.shape(d);
    shape[std::size_t(stored)] = length;
    const auto* base = static_cast<const std::byte*>(view.data());
    tensor_view slice(base == nullptr ? nullptr : base + byte_offset, view.type(),
                      std::span<const std::int64_t>(shape.data(), std::size_t(view.rank())), view.strides());
    if (view.is_quantized()) {
        quantization narrowed = q;
        if (q.per_channel() && resolved_axis(q.axis, view.rank()) == stored &&
            q.scales.size() == std::size_t(extent)) {
            narrowed.scales = q.scales.subspan(std::size_t(offset), std::size_t(length));
            if (q.zero_points.size() == std::size_t(extent))
                narrowed.zero_points = q.zero_points.subspan(std::size_t(offset), std::size_t(length));
        }
        slice.with_quantization(narrowed);
    }
    if (view.has_axis_order()) {
        std::array<int, max_rank> order{};
        for (int d = 0; d < view.rank(); ++d) order[std::size_t(d)] = view.axis_order()[std::size_t(d)];
        slice.with_axis_order(std::span<const int>(order.data(), std::size_t(view.rank())));
    }
    return slice.with_name(view.name());
}

} // namespace numgap
