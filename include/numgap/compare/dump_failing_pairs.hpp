#pragma once
// dump_failing_pairs: writes the reference and target tensors of every failing
// group as float32 .npy files, dequantized and in reference layout, for
// further study in NumPy ("<NNN>_<node>.reference.npy" / ".target.npy", NNN
// the group's reference topological position so files sort in execution order).
//
// Why float32 in reference layout: that is the form both sides were compared
// in, so np.load(a) - np.load(b) shows exactly the error the metrics measured,
// whatever the target's dtype, quantization or axis_order. Tensors are reloaded
// from the sources one pair at a time, so memory stays at one pair.
// Node names are made file-safe (anything but letters, digits, '.', '-' and
// '_' becomes '_').
// Complexity: O(elements of the failing pairs). Throws: numgap::error when the
// directory cannot be created, a file cannot be written, or a tensor can no
// longer be loaded; std::bad_alloc. Returns the number of pairs written.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include <numgap/compare/tensor_source.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/segmented_view.hpp>
#include <numgap/io/atomic_file.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/kernels/plan/copy_as_float.hpp>
#include <numgap/report/comparison_report.hpp>

namespace numgap {

namespace detail {
inline std::string file_safe(std::string_view name) {
    std::string safe(name);
    for (char& c : safe) {
        const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                          c == '.' || c == '-' || c == '_';
        if (!keep) c = '_';
    }
    if (safe.empty() || safe == "." || safe == "..") safe = "_" + safe;
    return safe;
}

// The tensor under `key`, read as compare_runs read it (`like`: the reference
// it was compared with, for a target that infers its shape from it).
template <class Source>
auto fetch_for_dump(Source& source, const std::string& key, const tensor_view* like = nullptr) {
    auto held = like != nullptr ? fetch_tensor_like(source, key, *like) : fetch_tensor(source, key);
    if (!held)
        throw error(error_kind::io, "cannot dump tensor '" + key + "': the run no longer has it",
                    error_location::of_item(key));
    return held;
}

// A sharded tensor (graph.json "shards") is written whole, as the file a
// user compares by hand: each shard's values go to their place in it.
inline void dump_one(const tensor_view& view, const segmented_view& segments, const std::filesystem::path& path) {
    std::vector<float> values(static_cast<std::size_t>(view.size()));
    if (!segments.is_split()) {
        copy_as_float(view, std::span<float>(values));
    } else {
        const auto shape = view.logical_shape();
        std::int64_t outer = 1, inner = 1;
        for (int d = 0; d < segments.axis; ++d) outer *= shape[std::size_t(d)];
        for (int d = segments.axis + 1; d < view.rank(); ++d) inner *= shape[std::size_t(d)];
        const std::int64_t length = shape[std::size_t(segments.axis)];
        std::vector<float> part;
        for (const tensor_segment& segment : segments.segments) {
            part.resize(static_cast<std::size_t>(segment.view.size()));
            copy_as_float(segment.view, std::span<float>(part));
            const std::int64_t run = part.empty() ? 0 : std::int64_t(part.size()) / outer;
            for (std::int64_t o = 0; o < outer; ++o)
                std::copy_n(part.begin() + o * run, run, values.begin() + (o * length + segment.offset) * inner);
        }
    }
    const auto logical = view.logical_shape();
    const std::vector<std::int64_t> shape(logical.begin(), logical.begin() + view.rank());
    io::temporary_file temporary(path, "failing-pair dump"); // complete or absent
    io::write_npy(temporary.path(), values.data(), shape);
    temporary.commit();
}
} // namespace detail

template <class ReferenceSource, class TargetSource>
    requires tensor_source<std::remove_reference_t<ReferenceSource>> &&
             tensor_source<std::remove_reference_t<TargetSource>>
std::size_t dump_failing_pairs(const comparison_report& report, ReferenceSource&& reference_source,
                               TargetSource&& target_source, const std::filesystem::path& directory) {
    std::error_code failure;
    std::filesystem::create_directories(directory, failure);
    if (failure)
        throw error(error_kind::io,
                    "cannot create the directory '" + directory.string() + "' for failing pairs: " + failure.message(),
                    error_location::in_file(directory.string()));
    std::size_t written = 0;
    for (const group_report& group : report.groups) {
        if (group.status != group_status::fail) continue;
        char order[24];
        std::snprintf(order, sizeof order, "%03zu_", group.order);
        const std::string stem =
            order + detail::file_safe(group.reference_nodes.empty() ? group.reference_tensor : group.reference_nodes.back());
        const auto reference = detail::fetch_for_dump(reference_source, group.reference_tensor);
        const tensor_view reference_view = detail::view_of(*reference);
        tensor_segment whole;
        detail::dump_one(reference_view, detail::segments_of(*reference, whole), directory / (stem + ".reference.npy"));
        const auto target = detail::fetch_for_dump(target_source, group.target_tensor, &reference_view);
        detail::dump_one(detail::view_of(*target), detail::segments_of(*target, whole),
                         directory / (stem + ".target.npy"));
        ++written;
    }
    return written;
}

} // namespace numgap
