#pragma once
// numgap::io overlay manifests: a graph.json that describes the tensors of a
// container run (.npz, safetensors file or index, Polygraphy JSON) that has no
// graph of its own. It is the graph.json of a run directory (run_manifest.hpp:
// same schema, same validation), read either from the file given with the run
// (run_directory::open's `overlay`, CLI --overlay FILE) or, when none is
// given, from a graph.json in the folder of the run file.
//
// Rules:
//  - "nodes" become the run's graph (inputs, outputs, op, debug handles), as
//    in a directory; keys in "inputs"/"outputs" are the container's keys. An
//    overlay without nodes keeps a graph the container has (an ETDump's).
//  - A "tensors" entry names a container key and adds what the container does
//    not say: "dtype" (checked against the stored dtype; what makes an opaque
//    '<V2' .npy payload bfloat16), "shape" (checked), "axis_order" and
//    quantization ("scale", "zero_point", "quant_axis"). It may not name a
//    "file": a container's tensors are its keys, and an entry that writes a
//    file other than the default "<key>.npy" is an error naming the entry.
//  - An entry for a key the container does not hold describes a tensor that
//    was not dumped: it is reported as missing, as in a directory.
//  - A directory run has its own graph.json; an overlay given for one is an
//    error (put it in the directory).
// Errors name the overlay file (with line and column for schema errors) and
// the key.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/io/confined_open.hpp>
#include <numgap/io/mapped_file.hpp>
#include <numgap/io/read_policy.hpp>
#include <numgap/io/run_manifest.hpp>
#include <numgap/io/run_source.hpp>

namespace numgap::io {

// Applies the overlay `overlay` (parsed from `overlay_name`) to a container run.
inline void apply_run_overlay(opened_run_source& opened, const run_manifest& overlay, const std::string& overlay_name,
                              const std::string& run) {
    // An overlay listing no nodes only adds tensor metadata: a container's
    // own graph (an ETDump's event order) stays.
    if (!overlay.nodes.empty() || !opened.manifest.has_graph) {
        opened.manifest.nodes = overlay.nodes;
        opened.manifest.has_graph = true;
    }
    std::vector<tensor_spec> container_specs; // sorted: made in the overlay's key order
    for (const tensor_spec& entry : overlay.tensors) {
        if (!entry.shards.empty())
            throw error(error_kind::schema,
                        "'" + overlay_name + "': tensor '" + entry.key + "' gives \"shards\", but shards are files of "
                        "a run directory and an overlay of the container run '" + run +
                            "' can only describe the container's keys",
                        error_location::at_item(overlay_name, entry.key));
        if (entry.file != entry.key + ".npy")
            throw error(error_kind::schema,
                        "'" + overlay_name + "': tensor '" + entry.key + "' names file '" + entry.file +
                            "', but an overlay of the container run '" + run +
                            "' can only describe the container's keys (leave \"file\" out)",
                        error_location::at_item(overlay_name, entry.key));
        const auto found = std::lower_bound(opened.manifest.tensors.begin(), opened.manifest.tensors.end(), entry.key,
                                            [](const tensor_spec& spec, const std::string& k) { return spec.key < k; });
        tensor_spec* described = nullptr;
        if (found != opened.manifest.tensors.end() && found->key == entry.key) {
            described = &*found;
        } else if (const std::optional<std::uint32_t> slot = opened.source->find_container_key(entry.key)) {
            // A container key has no spec until described (run_source.hpp).
            described = &container_specs.emplace_back();
            described->key = entry.key;
            described->file.clear();
            described->source_slot = *slot;
        } else {
            continue; // not dumped: missing
        }
        described->type = entry.type;
        described->shape = entry.shape;
        described->axis_order = entry.axis_order;
        described->affine = entry.affine;
        described->block = entry.block;
    }
    detail::merge_specs(opened.manifest, std::move(container_specs));
    opened.notes.push_back("'" + run + "': graph and tensor metadata from the overlay '" + overlay_name + "'");
}

// The graph.json that read_run_overlay picks up for the file run `run_file`
// when no overlay is given: the one beside it, if it is a regular file, else
// nullopt (also for a directory run, which has its own). Never throws. A
// caller opening two runs uses it to see that both would take the same one.
inline std::optional<std::filesystem::path> sibling_overlay_of(const std::filesystem::path& run_file) noexcept {
    std::error_code failure;
    if (!std::filesystem::is_regular_file(run_file, failure)) return std::nullopt;
    std::filesystem::path beside = (run_file.has_parent_path() ? run_file.parent_path() : ".") / "graph.json";
    if (!std::filesystem::is_regular_file(beside, failure)) return std::nullopt;
    return beside;
}

// The overlay of the container run `run_file`: `given` when set (opened as
// named: the user chose it), else a graph.json in the run file's folder
// (opened beneath that folder like any file of a run), else nullopt.
inline std::optional<std::pair<run_manifest, std::string>> read_run_overlay(const std::filesystem::path& run_file,
                                                                             const std::optional<std::filesystem::path>& given,
                                                                             const read_policy& policy) {
    file_descriptor file;
    std::filesystem::path name;
    if (given) {
        name = *given;
        file = detail::open_run_file(name);
    } else {
        const std::filesystem::path folder = run_file.has_parent_path() ? run_file.parent_path() : ".";
        name = folder / "graph.json";
        try {
            file = open_confined(*detail::run_roots(folder, policy), "graph.json", confined_target::file);
        } catch (const confined_open_error& failure) {
            if (failure.reason_kind() == confined_open_error::kind::not_found) return std::nullopt;
            throw error(error_kind::io, "cannot read '" + name.string() + "': " + failure.what(),
                        error_location::in_file(name.string()));
        }
    }
    const mapped_file text = mapped_file::map(std::move(file), name);
    run_manifest manifest =
        parse_run_manifest(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()), name.string());
    text.check_intact();
    return std::pair{std::move(manifest), name.string()};
}

} // namespace numgap::io
