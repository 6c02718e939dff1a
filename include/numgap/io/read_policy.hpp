#pragma once
// numgap::io::read_policy: what a run may make numgap read, and how much.
//
// The default trusts nothing in a run: every file a run names (graph.json
// "file" entries, .npy files found while listing, symbolic links among them)
// must resolve inside the run directory; `..` that climbs out of it, absolute
// paths and symbolic links whose target leaves it are refused with a
// numgap::error naming the run, the entry and the reason (see
// confined_open.hpp for the exact rule). `allowed_roots` is the explicit
// opt-in for dumps spread over several folders: entries may also resolve
// into these directories (and only these). The CLI fills it from
// `--allow-outside-run DIR`.
//
// `max_inflated_bytes` caps each deflated .npz member, the only tensor data
// numgap must hold in its own memory (files and stored members are mapped,
// not copied). A member declaring more is refused before anything is
// allocated or inflated; raise the cap for genuinely larger compressed
// tensors. See npz.hpp for the other, fixed, limits (inflate ratio).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include <numgap/core/dtype.hpp>

namespace numgap::io {

// How the headerless files of a QNN raw output folder that nothing describes
// are laid out relative to the reference tensor they are matched with
// (qnn_raw_source.hpp): channels-last storage of the reference's
// channels-first shape, or the reference's own shape.
enum class raw_layout { nhwc, nchw, as_reference };

struct read_policy {
    // 4 GiB: larger than any activation of the models numgap is used on, small
    // enough that one hostile archive cannot exhaust a workstation.
    static constexpr std::uint64_t default_max_inflated_bytes = std::uint64_t(4) << 30;

    std::vector<std::filesystem::path> allowed_roots;
    std::uint64_t max_inflated_bytes = default_max_inflated_bytes;
    // The debug buffer holding the tensor data of an ETDump run
    // (etdump_source.hpp); empty: none. The CLI fills it from --debug-buffer
    // (target) and --reference-debug-buffer (reference). Ignored by other runs.
    std::filesystem::path debug_buffer;
    // QNN raw output folders (qnn_raw_source.hpp): the converter's model JSON
    // describing their tensors (empty: none; CLI --qnn-net-json), and for
    // tensors nothing describes, the dtype (nullopt: float32; --raw-dtype)
    // and layout (--raw-layout) inferred from the matched reference tensor.
    // Ignored by other runs.
    std::filesystem::path qnn_net_json;
    std::optional<dtype> raw_dtype;
    raw_layout raw_tensor_layout = raw_layout::nhwc;
};

} // namespace numgap::io
