#pragma once
// numgap::io::etdump_source: an ExecuTorch ETDump (+ its debug buffer) as a
// run (run_source.hpp). The keys, nodes, run selection and data rules are
// etdump_run.hpp's; this file opens the files and serves loads.
//
// The run path is the ETDump file, optionally followed by "#run=N" to pick
// one of several runs (dump.etdp#run=1; open_run_source.hpp splits it off).
// It is recognised by its content (etdump.hpp: the "ED00" identifier after
// the size prefix, or after the root offset), whatever its name. The debug buffer is read_policy::debug_buffer
// (CLI: --debug-buffer FILE for the target, --reference-debug-buffer FILE for
// the reference); both files are opened as given, like any file named as a
// run (the user named them), and mapped for the run's lifetime. An ETDump
// manifest (etdump_manifest.hpp) names both instead and opens them confined
// to its folder, through open_etdump_files.
//
// The manifest has a graph: one node per tensor event, in event order (so
// run_graph's topological order is the execution order), with the integer
// delegate debug id as debug handle; one tensor_spec per key. notes() says
// which run of the file was read. An overlay graph.json (run_overlay.hpp)
// next to the ETDump adds tensor metadata (quantization of raw integer
// outputs, axis order) and, when it lists nodes, replaces the event graph.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/io/etdump.hpp>
#include <numgap/io/etdump_run.hpp>
#include <numgap/io/loaded_tensor.hpp>
#include <numgap/io/read_policy.hpp>
#include <numgap/io/run_manifest.hpp>
#include <numgap/io/run_source.hpp>

namespace numgap::io {

class etdump_source final : public run_source {
public:
    explicit etdump_source(etdump_tensors tensors) : tensors_(std::move(tensors)) {}

    loaded_tensor load(const tensor_spec& spec) const override {
        const etdump_tensors::entry* entry = tensors_.find(spec.key);
        NUMGAP_ASSERT(entry != nullptr);
        std::unique_ptr<detail::loaded_tensor_state> state = detail::start_loading(spec, tensors_.file());
        state->mapping = tensors_.buffer_mapping();
        state->view = tensors_.view(*entry);
        if (spec.type && *spec.type != state->view.type()) // an overlay's dtype must be the stored one
            throw error(error_kind::dtype,
                        "the overlay gives dtype " + std::string(name_of(*spec.type)) + " but ETDump '" +
                            tensors_.file() + "' stores tensor '" + spec.key + "' as " +
                            std::string(name_of(state->view.type())),
                        error_location::at_item(tensors_.file(), spec.key));
        detail::finish_loaded_tensor(spec, *state, detail::tensor_place{tensors_.file(), "event", spec.key});
        return loaded_tensor(std::move(state));
    }
    std::optional<std::vector<std::int64_t>> stored_shape(const tensor_spec& spec) const override {
        const etdump_tensors::entry* entry = tensors_.find(spec.key);
        if (entry == nullptr) return std::nullopt;
        return entry->tensor->sizes;
    }
    void release_cached_pages() const noexcept override {
        if (tensors_.buffer_mapping()) tensors_.buffer_mapping()->release_all_pages();
    }
    std::string missing_reason(std::string_view, const run_manifest&) const override {
        return "no debug event of the ETDump's run carries a tensor so keyed";
    }
    const etdump_tensors& tensors() const noexcept { return tensors_; }

private:
    etdump_tensors tensors_;
};

// Opens the ETDump held by `etdump` (named `shown` in messages) with the debug
// buffer held by `buffer` (named `buffer_shown`), if any; `selector` is what
// followed '#' in the run path ("run=N").
inline opened_run_source open_etdump_files(file_descriptor etdump, const std::filesystem::path& shown,
                                           std::optional<file_descriptor> buffer, const std::filesystem::path& buffer_shown,
                                           const std::optional<std::string>& selector) {
    std::optional<std::size_t> run_index;
    if (selector) run_index = parse_etdump_run_selector(*selector, shown.string());
    etdump_tensors tensors;
    tensors.open(std::move(etdump), shown, std::move(buffer), buffer_shown, run_index);
    opened_run_source opened;
    opened.total_bytes = tensors.total_bytes();
    opened.manifest.has_graph = true;
    opened.manifest.nodes.reserve(tensors.nodes().size());
    for (const node_spec& node : tensors.nodes()) opened.manifest.nodes.push_back(node);
    std::vector<tensor_spec> specs;
    for (const etdump_tensors::entry& entry : tensors.entries()) {
        tensor_spec spec;
        spec.key = entry.key;
        spec.file = tensors.file();
        specs.push_back(std::move(spec));
    }
    detail::merge_specs(opened.manifest, std::move(specs));
    const std::vector<etdump_run_data>& runs = tensors.contents().runs;
    if (!runs.empty()) {
        const std::size_t chosen = run_index.value_or(0);
        opened.notes.push_back("ETDump '" + shown.string() + "': read run #run=" + std::to_string(chosen) + " '" +
                               runs[chosen].name + "' of " + std::to_string(runs.size()) + ", " +
                               std::to_string(tensors.entries().size()) + " tensors from " +
                               std::to_string(tensors.nodes().size()) + " debug events");
    }
    opened.source = std::make_shared<const etdump_source>(std::move(tensors));
    return opened;
}

// Opens the ETDump `file` with read_policy::debug_buffer (both as named).
inline opened_run_source open_etdump(const std::filesystem::path& file, const std::optional<std::string>& selector,
                                     const read_policy& policy) {
    std::optional<file_descriptor> buffer;
    if (!policy.debug_buffer.empty()) buffer.emplace(detail::open_run_file(policy.debug_buffer, "debug buffer"));
    return open_etdump_files(detail::open_run_file(file), file, std::move(buffer), policy.debug_buffer, selector);
}

} // namespace numgap::io
