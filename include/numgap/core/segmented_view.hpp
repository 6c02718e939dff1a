#pragma once
// numgap::segmented_view: one logical tensor stored as several segments, each
// a tensor_view of one slice along one dimension (tensor-parallel shards: rank
// r holds [offset, offset + length) of a weight or activation along `axis`).
// An unsplit tensor is the one-segment case (one segment at offset 0).
//
// `axis` is a dimension in *reference* order (axis_order applied), because
// both sides of a comparison agree on that order; every segment's logical
// shape equals the logical tensor's except along `axis`.
//
// The views are not owned: whoever built the segments (io::loaded_tensor for
// a sharded run entry, or the caller's own buffers) keeps them alive.
//
// segmented_extent checks what evaluate_segments needs before it slices
// anything, and is the one statement of the rules (io's graph.json reader
// sorts its shards and calls it too): at least one segment and at most
// max_segments; one dtype; axis within the rank; equal logical shapes off the
// axis; offsets that tile [0, length) exactly, in order - no gap, no overlap,
// no empty segment. Errors (numgap::error, kind shape, dtype or limit) name
// each segment through `label(i)` (io passes the shard's file), so the check
// is stated once for every caller.
// Complexity: O(segments * rank). Throws: numgap::error; std::bad_alloc.
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include <numgap/core/config.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/shape.hpp>
#include <numgap/core/tensor_view.hpp>

namespace numgap {

struct tensor_segment {
    tensor_view view;
    std::int64_t offset = 0; // along the segmented_view's axis, in elements
};

struct segmented_view {
    std::span<const tensor_segment> segments;
    int axis = 0;

    bool is_split() const noexcept { return segments.size() > 1; }
};

// Far above any tensor-parallel degree in use (8-64), low enough that a
// hostile file cannot make numgap open a million files for one tensor.
inline constexpr std::size_t max_segments = 4096;

// The logical shape (reference order) the segments tile, after checking the
// rules above; `label(i)` names segment i in errors ("shard file 'w.1.npy'").
template <class Label>
std::array<std::int64_t, max_rank> segmented_extent(const segmented_view& tensor, Label&& label) {
    if (tensor.segments.empty()) throw error(error_kind::shape, "a segmented tensor needs at least one segment");
    if (tensor.segments.size() > max_segments)
        throw error(error_kind::limit, "a tensor split into " + std::to_string(tensor.segments.size()) +
                                           " segments is above numgap's limit of " + std::to_string(max_segments));
    const tensor_view& first = tensor.segments.front().view;
    if (tensor.axis < 0 || tensor.axis >= first.rank())
        throw error(error_kind::shape, std::string(label(0)) + " has rank " + std::to_string(first.rank()) +
                                           ", so it cannot be split along axis " + std::to_string(tensor.axis));
    std::array<std::int64_t, max_rank> logical = first.logical_shape();
    const std::size_t axis = std::size_t(tensor.axis);
    std::int64_t next = 0;
    for (std::size_t i = 0; i < tensor.segments.size(); ++i) {
        const tensor_segment& segment = tensor.segments[i];
        const tensor_view& view = segment.view;
        if (view.type() != first.type())
            throw error(error_kind::dtype, std::string(label(i)) + " stores " + std::string(name_of(view.type())) +
                                               " but " + std::string(label(0)) + " stores " +
                                               std::string(name_of(first.type())) + "; shards share one dtype");
        const std::array<std::int64_t, max_rank> shape = view.logical_shape();
        bool same = view.rank() == first.rank();
        for (std::size_t d = 0; same && d < std::size_t(first.rank()); ++d)
            same = d == axis || shape[d] == logical[d];
        if (!same)
            throw error(error_kind::shape,
                        std::string(label(i)) + " has shape " +
                            detail::shape_text(std::span<const std::int64_t>(shape.data(), std::size_t(view.rank()))) +
                            " but " + std::string(label(0)) + " has shape " +
                            detail::shape_text(std::span<const std::int64_t>(logical.data(), std::size_t(first.rank()))) +
                            "; shards may differ only along axis " + std::to_string(tensor.axis));
        if (shape[axis] == 0)
            throw error(error_kind::shape, std::string(label(i)) + " is empty along axis " + std::to_string(tensor.axis) +
                                               "; a shard holds at least one index");
        if (segment.offset != next)
            throw error(error_kind::shape,
                        std::string(label(i)) + " starts at offset " + std::to_string(segment.offset) + " but " +
                            (i == 0 ? std::string("the first shard must start at 0")
                                    : "the shards before it end at " + std::to_string(next) +
                                          (segment.offset > next ? " (a gap)" : " (an overlap)")));
        if (shape[axis] > std::numeric_limits<std::int64_t>::max() - next)
            throw error(error_kind::limit, std::string(label(i)) + " makes the tensor longer than 2^63 along axis " +
                                               std::to_string(tensor.axis));
        next += shape[axis];
    }
    logical[axis] = next;
    return logical;
}

inline std::array<std::int64_t, max_rank> segmented_extent(const segmented_view& tensor) {
    return segmented_extent(tensor, [](std::size_t i) { return "segment " + std::to_string(i); });
}

} // namespace numgap
