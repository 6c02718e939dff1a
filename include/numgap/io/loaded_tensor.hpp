#pragma once
// numgap::io::loaded_tensor: one tensor read from a run, owning its bytes (a
// mapping of the file it lies in, or a buffer it was inflated, decoded or
// realigned into) and the per-channel arrays and name its view points to.
//
// Every run source (run_source.hpp) builds one by filling a
// detail::loaded_tensor_state and calling detail::finish_loaded_tensor, which
// applies what graph.json says about the tensor whatever its container: the
// declared shape (checked), axis_order, quantization and the name. Data
// misaligned for its element type (a stored .npz member, a hand-made header,
// a safetensors offset) is copied once into an aligned buffer there, because
// typed loads from a misaligned address are undefined behaviour.
//
// Errors: shape, rank and dtype disagreements between graph.json and the
// stored tensor throw numgap::error (kind shape or dtype) naming `where`.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/quantization.hpp>
#include <numgap/core/segmented_view.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/io/mapped_file.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/npy/repack_codes.hpp>
#include <numgap/io/run_manifest.hpp>

namespace numgap::io {

namespace detail {
// On the heap so that the view's pointers survive moves of loaded_tensor.
struct loaded_tensor_state {
    std::string key, file;
    std::shared_ptr<const mapped_file> mapping;
    std::unique_ptr<std::byte[]> buffer; // inflated or decoded bytes, when not mapped in place
    std::vector<std::byte> aligned;
    std::vector<float> scales;
    std::vector<std::int32_t> zero_points;
    std::string note; // what was inferred rather than read (a QNN raw file's dtype and shape)
    tensor_view view;
    // A tensor stored as shards (graph.json "shards", sharded_tensor.hpp):
    // the shards' own states and one segment per shard, along reference
    // dimension segment_axis; `view` then has the logical shape, dtype,
    // layout and quantization but no data (null), so nothing reads it as a
    // whole by mistake (validation refuses null data).
    std::vector<std::unique_ptr<loaded_tensor_state>> shards;
    std::vector<tensor_segment> segments;
    int segment_axis = 0;

    // The mapping is a container the run keeps mapped for its whole
    // lifetime (a safetensors file): whether it shrank may be checked once
    // after many of its tensors were read (compare_runs does).
    bool mapping_held_by_run = false;

    // The view reads the mapping in place (nothing was copied out of it).
    bool reads_mapping() const noexcept { return mapping != nullptr && buffer == nullptr && aligned.empty(); }
    // Hands back the pages lying wholly inside the bytes the view reads in
    // place from a mapping the run keeps (mapped_file::release_pages).
    void release_run_pages() const noexcept {
        // No page (4 KiB at least) lies wholly inside fewer bytes: a run of a
        // million small tensors skips the call.
        constexpr std::uint64_t smallest_page = 4096;
        const std::uint64_t bytes = view.size() > 0 ? storage_bytes(view.type(), std::uint64_t(view.size())) : 0;
        if (reads_mapping() && mapping_held_by_run && view.data() != nullptr && bytes >= smallest_page) {
            const auto begin = reinterpret_cast<std::uintptr_t>(view.data());
            const auto base = reinterpret_cast<std::uintptr_t>(mapping->data());
            if (begin >= base && begin - base < mapping->size())
                mapping->release_pages(std::size_t(begin - base), std::size_t(bytes));
        }
        for (const auto& shard : shards) shard->release_run_pages();
    }
    void check_intact(bool except_run_mapping_size = false) const {
        if (reads_mapping()) {
            if (except_run_mapping_size && mapping_held_by_run) mapping->check_not_faulted();
            else mapping->check_intact();
        }
        for (const auto& shard : shards) shard->check_intact(except_run_mapping_size);
    }
};
} // namespace detail

// Move-only; moving keeps view() valid.
class loaded_tensor {
public:
    // For run sources: takes over a state whose view finish_loaded_tensor set.
    explicit loaded_tensor(std::unique_ptr<detail::loaded_tensor_state> state) noexcept : state_(std::move(state)) {}
    loaded_tensor(loaded_tensor&&) noexcept = default;
    loaded_tensor& operator=(loaded_tensor&&) noexcept = default;
    loaded_tensor(const loaded_tensor&) = delete;
    loaded_tensor& operator=(const loaded_tensor&) = delete;

    const tensor_view& view() const noexcept { return state_->view; }
    const std::string& key() const noexcept { return state_->key; }
    // As named in the run: a path relative to the run directory, the .npz
    // member name, the safetensors file, or the container file and its key.
    const std::string& file() const noexcept { return state_->file; }
    // What the source inferred rather than read, one sentence (empty when the
    // file said everything): compare_runs puts it in the group's message.
    const std::string& note() const noexcept { return state_->note; }
    // Throws numgap::error naming the file when the file the view points into
    // was truncated while mapped (see truncation_guard.hpp): call it after
    // reading the view; compare_runs does.
    // For run_directory: block quantization (core/quantization.hpp) whose
    // parameters it read from other tensors of the run; the view points into
    // this tensor's own copies of them.
    void set_block_quantization(int axis, std::int64_t block_size, std::vector<float> scales,
                                std::vector<std::int32_t> zero_points) {
        state_->scales = std::move(scales);
        state_->zero_points = std::move(zero_points);
        state_->view.with_quantization(quantization::blocks(axis, block_size, state_->scales, state_->zero_points));
    }
    void check_intact() const { state_->check_intact(); }
    // The mapping the view reads in place when the run keeps it mapped for
    // its whole lifetime (a key of a safetensors file), else nullptr. A
    // caller reading many such tensors may call
    // check_intact_except_run_mapping_size() after each (no system call) and
    // that mapping's check_intact() once after the last: one fstat per file
    // instead of one per tensor.
    std::shared_ptr<const mapped_file> run_mapping() const noexcept {
        return state_->reads_mapping() && state_->mapping_held_by_run ? state_->mapping : nullptr;
    }
    void check_intact_except_run_mapping_size() const { state_->check_intact(true); }
    // For a caller done with the data: the pages lying wholly inside this
    // tensor's bytes in a mapping the run keeps (run_mapping()) leave the
    // process's resident memory; they stay in the page cache and are read
    // again if touched. Comparing the tensors of one large safetensors file
    // then holds about one pair's pages at a time, not the whole file's
    // (compare_runs calls it). Pages shared with a neighbouring tensor stay.
    // No effect on other tensors; advisory, it never changes a value read.
    void release_run_pages() const noexcept { state_->release_run_pages(); }

    // Stored as tensor-parallel shards: the segments to compare
    // (metric/evaluate_segments.hpp) instead of view(), whose data is null.
    bool is_sharded() const noexcept { return !state_->segments.empty(); }
    segmented_view segments() const noexcept { return {state_->segments, state_->segment_axis}; }
    // For run sources assembling shards: gives up the state (this tensor is empty afterwards).
    std::unique_ptr<detail::loaded_tensor_state> release_state() && noexcept { return std::move(state_); }

private:
    std::unique_ptr<detail::loaded_tensor_state> state_;
};

namespace detail {

// Where a tensor lies, as errors name it: "<file>" or "<file>' <kind> '<item>"
// (a container file and its key). The text is built only for an error: a
// million-tensor run loads two million tensors, and none of them fails.
struct tensor_place {
    std::string_view file;
    std::string_view kind = {}; // "key", "event"; empty: the file alone names the tensor
    std::string_view item = {};

    std::string text() const {
        std::string where(file);
        if (!kind.empty()) where.append("' ").append(kind).append(" '").append(item);
        return where;
    }
};

inline void check_declared_shape(const tensor_spec& spec, std::span<const std::int64_t> stored,
                                 const tensor_place& place) {
    if (spec.shape && !std::equal(spec.shape->begin(), spec.shape->end(), stored.begin(), stored.end())) {
        const std::string where = place.text();
        throw error(error_kind::shape,
                    "graph.json gives shape " + shape_text(*spec.shape) + " but '" + where + "' stores shape " +
                        shape_text(stored),
                    error_location::at_item(where, spec.key));
    }
}
inline void check_declared_shape(const tensor_spec& spec, std::span<const std::int64_t> stored,
                                 const std::string& where) {
    check_declared_shape(spec, stored, tensor_place{where});
}

// Shape check, alignment, axis order, quantization and name: common to all sources.
inline void finish_loaded_tensor(const tensor_spec& spec, loaded_tensor_state& state, const tensor_place& place) {
    tensor_view& view = state.view;
    check_declared_shape(spec, view.shape(), place);
    // float4_e2m1fn declared over one code a byte (an ml_dtypes .npy, which
    // io/npy/header.hpp hands over as uint8): packed here, once.
    if (spec.type == dtype::float4_e2m1fn && view.type() == dtype::uint8) {
        view = repack_float4_codes(view, state.aligned);
        if (state.mapping != nullptr && state.buffer == nullptr) state.mapping->check_intact(); // copied from the file
    }
    const std::size_t item = size_of(view.type());
    if (reinterpret_cast<std::uintptr_t>(view.data()) % item != 0) {
        std::int64_t extent = view.size() == 0 ? 0 : 1;
        for (int d = 0; d < view.rank() && extent != 0; ++d) extent += (view.shape(d) - 1) * view.stride(d);
        state.aligned.resize(std::size_t(extent) * item);
        if (extent != 0) std::memcpy(state.aligned.data(), view.data(), state.aligned.size());
        if (state.mapping != nullptr && state.buffer == nullptr) state.mapping->check_intact(); // copied from the file
        view = tensor_view(state.aligned.data(), view.type(), view.shape(), view.strides());
    }
    const auto refuse = [&](error_kind kind, const std::string& before, const std::string& after) {
        const std::string where = place.text();
        throw error(kind, before + where + after, error_location::at_item(where, spec.key));
    };
    if (spec.axis_order) {
        if (int(spec.axis_order->size()) != view.rank())
            refuse(error_kind::shape,
                   "graph.json gives axis_order of " + std::to_string(spec.axis_order->size()) + " entries but '",
                   "' has rank " + std::to_string(view.rank()));
        view.with_axis_order(std::span<const int>(*spec.axis_order));
    }
    if (spec.affine) {
        const tensor_spec::affine_spec& affine = *spec.affine;
        if (!is_integer(view.type()))
            refuse(error_kind::dtype, "graph.json gives \"scale\" but '",
                   "' stores " + std::string(name_of(view.type())) + ", not an integer type");
        if (affine.axis < 0) {
            view.with_quantization(quantization::per_tensor(affine.scales.front(), affine.zero_points.front()));
        } else {
            if (affine.axis >= view.rank())
                refuse(error_kind::shape, "graph.json gives quant_axis " + std::to_string(affine.axis) + " but '",
                       "' has rank " + std::to_string(view.rank()));
            if (std::int64_t(affine.scales.size()) != view.shape(affine.axis))
                refuse(error_kind::shape,
                       "graph.json gives " + std::to_string(affine.scales.size()) +
                           " per-channel scales but dimension " + std::to_string(affine.axis) + " of '",
                       "' has " + std::to_string(view.shape(affine.axis)) + " channels");
            state.scales = affine.scales;
            state.zero_points = affine.zero_points;
            view.with_quantization(quantization::along(affine.axis, state.scales, state.zero_points));
        }
    }
    view.with_name(state.key);
}
inline void finish_loaded_tensor(const tensor_spec& spec, loaded_tensor_state& state, const std::string& where) {
    finish_loaded_tensor(spec, state, tensor_place{where});
}

} // namespace detail
} // namespace numgap::io
