#pragma once
// numgap::io::detail::load_sharded_tensor: a run entry stored as tensor-parallel
// shards (graph.json "shards", run_manifest.hpp) loaded as one loaded_tensor
// whose segments() the comparison walks (metric/evaluate_segments.hpp) - the
// shards stay where they are mapped; nothing is concatenated.
//
// Each shard is loaded by the source's own file loader (`load_file`, given a
// spec naming that shard's file), so every shard is opened beneath the run
// exactly like "file" (confined_open.hpp) and read by the same .npy / raw
// code. Per shard, graph.json's "dtype" and "axis_order" apply as given;
// "shape" (the logical tensor's, when given) becomes the shard's shape with
// the split dimension's length taken from the offsets (a raw shard needs it:
// it has no header). Quantization is applied after loading: per tensor to
// every shard; per channel along another dimension with the same scales; per
// channel along the split dimension with each shard's own range of them.
//
// The rules (core/segmented_view.hpp's segmented_extent, the one statement of
// them): one dtype, equal shapes but along the split dimension, offsets that
// tile [0, length) with no gap or overlap, every shard non-empty; graph.json's
// "shape", when given, must equal the tiled shape. Errors are numgap::error
// naming the shard's file; run_directory prefixes the run and the key.
//
// A single shard (offset 0) is loaded as the tensor in one file it is.
// The logical view (loaded_tensor::view()) has the tiled shape, the dtype,
// axis_order and quantization, and null data: reports read its shape and
// dtype, and anything that would read it as one tensor is refused.
// Also here: what a directory run does with a sharded entry before loading -
// claim_shard_files when the run is opened, sharded_shape for a shape hint.
// Complexity: O(shards) loads. Throws: numgap::error; std::bad_alloc.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/core/quantization.hpp>
#include <numgap/core/segmented_view.hpp>
#include <numgap/core/shape.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/io/confined_open.hpp>
#include <numgap/io/file_descriptor.hpp>
#include <numgap/io/loaded_tensor.hpp>
#include <numgap/io/run_manifest.hpp>
#include <numgap/io/run_source.hpp>

namespace numgap::io::detail {

// How errors name a shard: "shard file 'w.rank1.npy'" or, for a key of a
// safetensors file, "shard 'w' of file 'rank1.safetensors'".
inline std::string shard_label(const tensor_spec::shard_file& shard) {
    return shard.key.empty() ? "shard file '" + shard.file + "'"
                             : "shard '" + shard.key + "' of file '" + shard.file + "'";
}

// What graph.json says about shard `i` of `spec`, as the spec of a tensor in
// one file: its file, and the shard's own shape when the logical one is given.
inline tensor_spec shard_spec(const tensor_spec& spec, std::size_t i) {
    tensor_spec shard;
    shard.key = spec.key;
    shard.file = spec.shards[i].file;
    shard.type = spec.type;
    shard.axis_order = spec.axis_order;
    if (spec.shape) {
        const int rank = int(spec.shape->size());
        const std::size_t axis = std::size_t(resolved_axis(spec.shard_axis, rank));
        const std::int64_t end = i + 1 < spec.shards.size() ? spec.shards[i + 1].offset : (*spec.shape)[axis];
        if (end <= spec.shards[i].offset)
            throw error(error_kind::shape,
                        shard_label(spec.shards[i]) + " starts at offset " + std::to_string(spec.shards[i].offset) +
                            ", at or beyond the end (" + std::to_string(end) + ") of its range along axis " +
                            std::to_string(spec.shard_axis) + " of shape " + numgap::detail::shape_text(*spec.shape));
        shard.shape = spec.shape;
        (*shard.shape)[axis] = end - spec.shards[i].offset;
    }
    return shard;
}

// load_file(shard spec, graph.json's entry for the shard) loads one shard.
template <class LoadFile>
loaded_tensor load_sharded_tensor(const tensor_spec& spec, LoadFile&& load_file) {
    if (spec.shards.size() == 1) {
        // One shard is the whole tensor in one file: loaded as such (so its
        // view has data), once its entry is checked like any shard's.
        const tensor_spec::shard_file& only = spec.shards.front();
        if (only.offset != 0)
            throw error(error_kind::shape, shard_label(only) + " starts at offset " + std::to_string(only.offset) +
                                               " but the first shard must start at 0");
        tensor_spec whole = spec;
        whole.file = only.file;
        whole.shards.clear();
        loaded_tensor tensor = load_file(whole, only);
        const int rank = tensor.view().rank(), axis = resolved_axis(spec.shard_axis, rank);
        if (axis < 0 || axis >= rank)
            throw error(error_kind::shape, shard_label(only) + " has rank " + std::to_string(rank) +
                                               ", so it cannot be split along axis " + std::to_string(spec.shard_axis));
        return tensor;
    }
    std::vector<loaded_tensor> parts;
    parts.reserve(spec.shards.size());
    for (std::size_t i = 0; i < spec.shards.size(); ++i) {
        const tensor_spec shard = shard_spec(spec, i);
        try {
            parts.push_back(load_file(shard, spec.shards[i]));
        } catch (const error& failure) {
            if (!spec.shape || failure.kind() != error_kind::shape) throw;
            // Its shape came from graph.json's logical "shape" and the offsets: say so.
            throw error(failure.kind(),
                        shard_label(spec.shards[i]) + " should be " + numgap::detail::shape_text(*shard.shape) +
                            " (graph.json's shape " + numgap::detail::shape_text(*spec.shape) + " from offset " +
                            std::to_string(spec.shards[i].offset) + " along axis " + std::to_string(spec.shard_axis) +
                            "): " + failure.what(),
                        failure.where());
        }
    }

    const tensor_view& first = parts.front().view();
    const int rank = first.rank();
    const int stored_axis = resolved_axis(spec.shard_axis, rank);
    if (stored_axis < 0 || stored_axis >= rank)
        throw error(error_kind::shape, shard_label(spec.shards.front()) + " has rank " + std::to_string(rank) +
                                           ", so it cannot be split along axis " + std::to_string(spec.shard_axis));
    const int axis = spec.axis_order && int(spec.axis_order->size()) == rank
                         ? (*spec.axis_order)[std::size_t(stored_axis)]
                         : stored_axis;
    std::vector<tensor_segment> segments;
    segments.reserve(parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i) segments.push_back({parts[i].view(), spec.shards[i].offset});
    const std::array<std::int64_t, max_rank> logical =
        segmented_extent(segmented_view{segments, axis}, [&](std::size_t i) { return shard_label(spec.shards[i]); });

    // The logical view: the stored shape of a shard with the split dimension's
    // full length; finish_loaded_tensor checks graph.json's "shape" against it
    // and applies axis_order and quantization as for a tensor in one file.
    auto state = std::make_unique<loaded_tensor_state>();
    state->key = spec.key;
    state->file = spec.shards.front().file + (parts.size() > 1 ? " and " + std::to_string(parts.size() - 1) + " more shards" : "");
    std::vector<std::int64_t> stored_shape(first.shape().begin(), first.shape().end());
    stored_shape[std::size_t(stored_axis)] = logical[std::size_t(axis)];
    // Each shard's header was checked alone; the whole tensor's element count
    // (zero-sized shards may claim huge other dimensions) is checked here.
    if (!numgap::detail::checked_storage_bytes(stored_shape, first.type()))
        throw error(error_kind::limit, "the shards of tensor '" + spec.key + "' (first " +
                                           shard_label(spec.shards.front()) + ") tile a tensor of shape " +
                                           numgap::detail::shape_text(stored_shape) + ", whose size overflows 64 bits");
    state->view = tensor_view(nullptr, first.type(), stored_shape);
    tensor_spec whole = spec;
    whole.shards.clear();
    finish_loaded_tensor(whole, *state, spec.shards.front().file);

    const tensor_view& view = state->view;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        std::unique_ptr<loaded_tensor_state> part = std::move(parts[i]).release_state();
        if (view.is_quantized()) {
            quantization q = view.quant();
            if (q.per_channel() && resolved_axis(q.axis, rank) == stored_axis) {
                const std::size_t begin = std::size_t(spec.shards[i].offset);
                const std::size_t length = std::size_t(part->view.shape(stored_axis));
                q.scales = q.scales.subspan(begin, length);
                if (!q.zero_points.empty()) q.zero_points = q.zero_points.subspan(begin, length);
            }
            part->view.with_quantization(q);
        }
        part->view.with_name(state->key);
        state->segments.push_back({part->view, spec.shards[i].offset});
        state->shards.push_back(std::move(part));
    }
    state->segment_axis = axis;
    return loaded_tensor(std::move(state));
}

// The shape of a sharded entry without reading data: the shards' shapes
// (`stored_shape(shard spec)`, the source's header reader) added up along the
// split dimension; nullopt when one is unknown or they disagree in rank
// (load() then says what is wrong). Never throws for bad data.
template <class StoredShape>
std::optional<std::vector<std::int64_t>> sharded_shape(const tensor_spec& spec, StoredShape&& stored_shape) {
    std::optional<std::vector<std::int64_t>> total;
    for (std::size_t i = 0; i < spec.shards.size(); ++i) {
        std::optional<std::vector<std::int64_t>> shape;
        try {
            shape = stored_shape(shard_spec(spec, i), spec.shards[i]);
        } catch (const error&) {
            return std::nullopt;
        }
        if (!shape) return std::nullopt;
        const int axis = resolved_axis(spec.shard_axis, int(shape->size()));
        if (axis < 0 || axis >= int(shape->size()) || (total && total->size() != shape->size())) return std::nullopt;
        if (!total) {
            total = std::move(shape);
            continue;
        }
        if (__builtin_add_overflow((*total)[std::size_t(axis)], (*shape)[std::size_t(axis)],
                                   &(*total)[std::size_t(axis)]))
            return std::nullopt;
    }
    return total;
}

// A file's path relative to the run, as the run's listing spells it.
inline std::string run_relative(const std::filesystem::path& run, const std::string& file) {
    const std::string relative =
        (run / file).lexically_normal().lexically_relative(run.lexically_normal()).generic_string();
    return relative.empty() ? file : relative;
}

// When a run directory is opened: every shard file of a sharded entry must
// exist inside the run, opened beneath `roots` like any file the run names (a
// missing shard is an error, not a tensor that was not dumped: the entry names
// it explicitly). Each is claimed for the entry's key, so it is no tensor of
// its own, and counted in `total_bytes`. A shard that is a key of a
// safetensors file goes to claim_key(shard) instead (the run keeps those
// files apart from its own keys).
template <class ClaimKey>
void claim_shard_files(const std::vector<confined_root>& roots, const std::filesystem::path& run,
                       const tensor_spec& spec, const std::string& graph, std::map<std::string, std::string>& claimed,
                       std::uint64_t& total_bytes, ClaimKey&& claim_key) {
    for (const tensor_spec::shard_file& shard : spec.shards) {
        if (!shard.key.empty()) {
            claim_key(shard);
            continue;
        }
        file_descriptor file;
        try {
            file = open_confined(roots, shard.file, confined_target::file);
        } catch (const confined_open_error& failure) {
            throw error(error_kind::io,
                        graph + ": tensor '" + spec.key + "': shard file '" + shard.file + "' " + refusal(failure) +
                            " in run '" + run.string() + "'",
                        error_location::at_item(graph, spec.key));
        }
        const auto [where, inserted] = claimed.emplace(run_relative(run, shard.file), spec.key);
        if (!inserted)
            throw error(error_kind::schema,
                        graph + ": tensor '" + spec.key + "': shard file '" + shard.file +
                            "' is already the file of tensor '" + where->second + "'",
                        error_location::at_item(graph, spec.key));
        total_bytes += size_of_open(file);
    }
}

} // namespace numgap::io::detail
