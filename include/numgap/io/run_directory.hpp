#pragma once
// numgap::io::run_directory: one run's tensors, wherever they are stored, and
// loaded_tensor (loaded_tensor.hpp), a tensor read from it.
//
// A run is any container open_run_source.hpp recognises by its content: a
// directory of .npy/raw/safetensors files with an optional graph.json
// (directory_source.hpp), an .npz (npz_source.hpp), a safetensors file or a
// sharded set's *.index.json (safetensors_source.hpp), a Polygraphy JSON
// (polygraphy_source.hpp); a container's graph may come from an overlay
// graph.json (run_overlay.hpp). Each source's header
// states its exact rules (keys, dtypes, order, limits); this class is the one
// interface over all of them: keys sorted, load() by key, graph.json's nodes
// in manifest() when the container has a graph.
//
// Trust: nothing in a run is trusted; every file a run names is opened
// beneath the run (confined_open.hpp) unless it lands in one of
// read_policy::allowed_roots (CLI: --allow-outside-run DIR).
// A file truncated by another process while mapped raises SIGBUS on access, as
// with any mapping, unless the truncation guard is installed (the CLI does):
// then loaded_tensor::check_intact() throws an error naming the file.
//
// Errors: numgap::error with a kind and location; open() names the run and
// file, load() prefixes the run and tensor to the source's reason.
// load() and every other const member are safe to call from several threads
// at once. Complexity: open is O(files + graph.json) for a directory, O(index)
// otherwise; load is O(1) for mapped data, O(size) for inflated, decoded or
// realigned data.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/io/loaded_tensor.hpp>
#include <numgap/io/open_run_source.hpp>
#include <numgap/io/read_policy.hpp>
#include <numgap/io/run_manifest.hpp>
#include <numgap/io/run_source.hpp>

namespace numgap::io {

class run_directory {
public:
    // `overlay`: a graph.json for a container run (run_overlay.hpp); without
    // it, a graph.json next to a run file is used when there is one.
    static run_directory open(const std::filesystem::path& path, const read_policy& policy = {},
                              const std::optional<std::filesystem::path>& overlay = std::nullopt) {
        run_directory run;
        run.path_ = path;
        opened_run_source opened = open_run_source(path, policy, overlay);
        run.manifest_ = std::move(opened.manifest);
        run.source_ = std::move(opened.source);
        run.total_bytes_ = opened.total_bytes;
        run.notes_ = std::move(opened.notes);
        return run;
    }

    const std::filesystem::path& path() const noexcept { return path_; }
    const run_manifest& manifest() const noexcept { return manifest_; }
    // What open() chose or inferred that the user did not say, one sentence
    // each (e.g. which runner of a Polygraphy file was read); the CLI prints them.
    const std::vector<std::string>& notes() const noexcept { return notes_; }

    std::vector<std::string> keys() const {
        std::vector<std::string> keys;
        keys.reserve(manifest_.tensors.size());
        for (const tensor_spec& spec : manifest_.tensors) keys.push_back(spec.key);
        return keys;
    }
    bool contains(std::string_view key) const { return manifest_.find_tensor(key) != nullptr; }
    // For progress and throughput: the bytes of the run's tensor files or
    // members (headers included), known at open() without reading any tensor.
    std::uint64_t total_bytes() const noexcept { return total_bytes_; }

    loaded_tensor load(std::string_view key) const {
        return load_with(key, [&](const tensor_spec& spec) { return source_->load(spec); });
    }

    // load(), for comparison with `reference`: a run whose files do not say
    // their dtype and shape (a QNN raw output folder) infers them from the
    // reference's shape (run_source::load_like); other runs ignore it.
    loaded_tensor load_like(std::string_view key, const tensor_view& reference) const {
        return load_with(key, [&](const tensor_spec& spec) { return source_->load_like(spec, reference); });
    }

    // The shape of tensor `key` in reference dimension order (axis_order
    // applied), read without reading the data: graph.json's "shape" when it
    // gives one, else the container's header (indexed at open() for
    // safetensors and JSON containers; for .npy files and .npz members only
    // the header's bytes are read). nullopt when the run has no such tensor,
    // the shape is not known that cheaply, or the header cannot be read: a
    // shape is a hint for matching here, and load() reports a bad file on its
    // own. Cost: about 3 us per .npy file with a warm page cache (10^4 files:
    // 30 ms, g++ -O2), so callers read headers only when structural matching
    // may run. Thread-safe.
    std::optional<std::vector<std::int64_t>> stored_shape(std::string_view key) const {
        const tensor_spec* spec = manifest_.find_tensor(key);
        if (spec == nullptr) return std::nullopt;
        if (spec->shape) return reference_order_shape(*spec, *spec->shape);
        std::optional<std::vector<std::int64_t>> stored = source_->stored_shape(*spec);
        if (!stored) return std::nullopt;
        return reference_order_shape(*spec, *stored);
    }

private:
    run_directory() = default;

    template <class Read>
    loaded_tensor load_with(std::string_view key, Read&& read) const {
        const tensor_spec* spec = manifest_.find_tensor(key);
        if (spec == nullptr)
            throw error(error_kind::schema,
                        "run '" + path_.string() + "' has no tensor '" + std::string(key) + "' (" +
                            source_->missing_reason(key, manifest_) + ")",
                        error_location::at_item(path_.string(), std::string(key)));
        try {
            return read(*spec);
        } catch (const error& failure) {
            error_location where = failure.where();
            if (where.file.empty()) where.file = path_.string();
            if (where.item.empty()) where.item = spec->key;
            throw error(failure.kind(), "run '" + path_.string() + "', tensor '" + spec->key + "': " + failure.what(),
                        std::move(where));
        }
    }

    std::filesystem::path path_;
    run_manifest manifest_;
    std::shared_ptr<const run_source> source_;
    std::uint64_t total_bytes_ = 0;
    std::vector<std::string> notes_;
};

} // namespace numgap::io
