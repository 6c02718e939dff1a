#pragma once
// numgap::io::etdump_source: an ExecuTorch ETDump (+ its debug buffer) as a
// run (run_source.hpp). The keys, nodes, run selection and data rules are
// etdump_run.hpp's; this file opens the files and serves loads.
//
// The run path is the ETDump file, optionally followed by "#run=N" to pick
// one of several runs (dump.etdp#run=1). It is recognised by its content
// (etdump.hpp: the "ED00" identifier after the size prefix, or after the root
// offset), whatever its name. The debug buffer is read_policy::debug_buffer
// (CLI: --debug-buffer FILE for the target, --reference-debug-buffer FILE for
// the reference); both files are opened as given, like any file named as a
// run (the user named them), and mapped for the run's lifetime.
//
// The manifest has a graph: one node per tensor event, in event order (so
// run_graph's topological order is the execution order), with the integer
// delegate debug id as debug handle; one tensor_spec per key. notes() says
// which run of the file was read.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

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
        detail::finish_loaded_tensor(spec, *state, tensors_.file() + "' event '" + spec.key);
        return loaded_tensor(std::move(state));
    }
    std::optional<std::vector<std::int64_t>> stored_shape(const tensor_spec& spec) const override {
        const etdump_tensors::entry* entry = tensors_.find(spec.key);
        if (entry == nullptr) return std::nullopt;
        return entry->tensor->sizes;
    }
    std::string missing_reason(std::string_view, const run_manifest&) const override {
        return "no debug event of the ETDump's run carries a tensor so keyed";
    }
    const etdump_tensors& tensors() const noexcept { return tensors_; }

private:
    etdump_tensors tensors_;
};

// Whether `path` (with or without a #run=N suffix) is an ETDump file. Never
// throws: anything unreadable is simply not one (its own detection reports it).
inline bool is_etdump_run(const std::filesystem::path& path) noexcept {
    try {
        const etdump_path split = split_etdump_run_selector(path);
        std::error_code failure;
        if (!std::filesystem::is_regular_file(split.file, failure)) return false;
        const file_descriptor file = detail::open_run_file(split.file);
        std::byte head[12];
        const ::ssize_t got = ::pread(file.get(), head, sizeof head, 0);
        return got > 0 && has_etdump_signature(std::span<const std::byte>(head, std::size_t(got)));
    } catch (...) {
        return false;
    }
}

inline opened_run_source open_etdump(const std::filesystem::path& path, const read_policy& policy) {
    const etdump_path split = split_etdump_run_selector(path);
    std::optional<file_descriptor> buffer;
    if (!policy.debug_buffer.empty()) {
        buffer.emplace(::open(policy.debug_buffer.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
        if (!buffer->valid())
            throw error(error_kind::io,
                        "cannot open debug buffer '" + policy.debug_buffer.string() + "' of ETDump '" +
                            split.file.string() + "': " + std::generic_category().message(errno),
                        error_location::in_file(policy.debug_buffer.string()));
    }
    etdump_tensors tensors;
    tensors.open(detail::open_run_file(split.file), split.file, std::move(buffer), policy.debug_buffer, split.run);
    opened_run_source opened;
    opened.total_bytes = tensors.total_bytes();
    opened.manifest.has_graph = true;
    opened.manifest.nodes = tensors.nodes();
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
        const std::size_t chosen = split.run.value_or(0);
        opened.notes.push_back("ETDump '" + split.file.string() + "': read run #run=" + std::to_string(chosen) + " '" +
                               runs[chosen].name + "' of " + std::to_string(runs.size()) + ", " +
                               std::to_string(tensors.entries().size()) + " tensors from " +
                               std::to_string(tensors.nodes().size()) + " debug events");
    }
    opened.source = std::make_shared<const etdump_source>(std::move(tensors));
    return opened;
}

} // namespace numgap::io
