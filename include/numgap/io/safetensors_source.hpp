#pragma once
// numgap::io safetensors run sources: a single safetensors file given as the
// run (detected by content: an 8-byte length, then '{'), and a sharded set's
// *.index.json (its "weight_map" names the shards, resolved beneath the
// index's folder and the allowed roots like any file a run names). Keys are
// the safetensors keys, sorted; tensors are mapped, never copied (except data
// misaligned for its dtype, see loaded_tensor.hpp). Neither has a graph of
// its own; an overlay graph.json may give one (run_overlay.hpp).
//
// The keys are container keys (run_source.hpp): the manifest holds no spec
// for them unless an overlay graph.json describes them (run_overlay.hpp).
// The helpers below (safetensors_specs, load_safetensors_tensor) also serve
// directory_source.hpp, whose *.safetensors files are tensors of the run too.
#include <algorithm>
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
#include <numgap/io/mapped_file.hpp>
#include <numgap/io/run_manifest.hpp>
#include <numgap/io/run_source.hpp>
#include <numgap/io/safetensors.hpp>
#include <numgap/io/safetensors_run.hpp>

namespace numgap::io {
namespace detail {

// The specs of the safetensors keys graph.json describes (`overlays`: its
// entries that name no file of their own, sorted), each with the key's slot
// and no file of its own (tensor_spec::file is empty: the slot's record names
// the file); an entry for a key no file holds describes a tensor that was
// not dumped and gives no spec. Every other key needs none: run_directory
// finds it through the source (run_source's container keys). A key
// `manifest` already maps to a file of its own is an error naming both.
inline std::vector<tensor_spec> safetensors_specs(const safetensors_tensors& tensors, const run_manifest& manifest,
                                                  std::vector<tensor_spec> overlays, const std::string& run) {
    if (!manifest.tensors.empty())
        for (std::uint32_t position = 0; position < tensors.size(); ++position) {
            const std::string_view key = tensors.key_at(position);
            if (const tensor_spec* claimed = manifest.find_tensor(key))
                throw error(error_kind::schema,
                            "graph.json: tensor '" + std::string(key) + "' is " +
                                (claimed->shards.empty() ? "mapped to file '" + claimed->file + "'"
                                                         : std::string("stored as shards")) +
                                ", but '" + tensors.at(position).source->name + "' also holds key '" +
                                std::string(key) + "' in run '" + run + "'; rename one of them",
                            error_location::at_item(run, std::string(key)));
        }
    std::vector<tensor_spec> specs;
    for (tensor_spec& overlay : overlays) {
        const std::optional<std::uint32_t> position = tensors.position_of(overlay.key);
        if (!position) continue;
        tensor_spec& spec = specs.emplace_back(std::move(overlay));
        spec.file.clear();
        spec.source_slot = *position;
    }
    return specs;
}

// `stored_key`: the key in the file, when it is not spec.key (a shard's, sharded_tensor.hpp).
inline loaded_tensor load_safetensors_tensor(const tensor_spec& spec, const safetensors_tensors::location& where,
                                             std::string_view stored_key = {}) {
    if (stored_key.empty()) stored_key = spec.key;
    std::unique_ptr<loaded_tensor_state> state = start_loading(spec, where.source->name);
    state->mapping = where.source->mapping;
    state->mapping_held_by_run = true; // safetensors_tensors keeps every file mapped
    state->view = where.view();
    if (spec.type && *spec.type != state->view.type())
        throw error(error_kind::dtype,
                    "graph.json gives dtype " + std::string(name_of(*spec.type)) + " but '" + where.source->name +
                        "' stores key '" + std::string(stored_key) + "' as " + std::string(where.dtype_name),
                    error_location::at_item(where.source->name, std::string(stored_key)));
    finish_loaded_tensor(spec, *state, tensor_place{where.source->name, "key", stored_key});
    return loaded_tensor(std::move(state));
}

} // namespace detail

// Tensors held only in safetensors files (no .npy keys, no graph).
class safetensors_source final : public run_source {
public:
    explicit safetensors_source(safetensors_tensors tensors) : tensors_(std::move(tensors)) {}

    loaded_tensor load(const tensor_spec& spec) const override {
        const std::optional<safetensors_tensors::location> where = tensors_.find(spec.key, spec.source_slot);
        NUMGAP_ASSERT(where.has_value());
        return detail::load_safetensors_tensor(spec, *where);
    }
    std::optional<std::vector<std::int64_t>> stored_shape(const tensor_spec& spec) const override {
        const std::optional<safetensors_tensors::location> where = tensors_.find(spec.key, spec.source_slot);
        if (!where) return std::nullopt;
        return std::vector<std::int64_t>(where->shape.begin(), where->shape.end()); // indexed at open()
    }
    std::string missing_reason(std::string_view, const run_manifest&) const override {
        return "no such safetensors key";
    }
    std::vector<std::uint32_t> sorted_container_keys() const override { return tensors_.sorted_positions(); }
    std::string_view container_key(std::uint32_t slot) const noexcept override { return tensors_.key_at(slot); }
    std::optional<std::uint32_t> find_container_key(std::string_view key) const override {
        return tensors_.position_of(key);
    }
    void release_cached_pages() const noexcept override { tensors_.release_pages(); }
    const safetensors_tensors& tensors() const noexcept { return tensors_; }

private:
    safetensors_tensors tensors_;
};

namespace detail {
inline opened_run_source finish_safetensors_run(safetensors_tensors tensors) {
    tensors.shrink_to_fit();
    opened_run_source opened;
    opened.total_bytes = tensors.total_bytes();
    opened.source = std::make_shared<const safetensors_source>(std::move(tensors));
    return opened;
}
} // namespace detail

inline opened_run_source open_safetensors_file(const std::filesystem::path& path) {
    safetensors_tensors tensors;
    tensors.add(path.string(), detail::open_run_file(path), path);
    return detail::finish_safetensors_run(std::move(tensors));
}

// A sharded set: the index names its shards, resolved beneath the index's
// folder (and the allowed roots) like any file a run names.
inline opened_run_source open_sharded_safetensors(const std::filesystem::path& index, const read_policy& policy) {
    const std::filesystem::path folder = index.has_parent_path() ? index.parent_path() : ".";
    const auto roots = detail::run_roots(folder, policy);
    const mapped_file text = mapped_file::map(detail::open_run_file(index), index);
    const auto shards = parse_safetensors_weight_map(
        std::string_view(reinterpret_cast<const char*>(text.data()), text.size()), index.string());
    text.check_intact();
    safetensors_tensors tensors;
    for (const auto& [shard, keys] : shards) {
        file_descriptor file;
        try {
            file = open_confined(*roots, shard, confined_target::file);
        } catch (const confined_open_error& failure) {
            throw error(error_kind::io, "'" + index.string() + "': shard '" + shard + "' " + detail::refusal(failure),
                        error_location::at_item(index.string(), shard));
        }
        tensors.add(shard, std::move(file), folder / shard, keys);
    }
    return detail::finish_safetensors_run(std::move(tensors));
}

} // namespace numgap::io
