#pragma once
// numgap::io::etdump_tensors: the tensors of one run of an ExecuTorch ETDump
// (etdump.hpp), viewed in the mapped debug buffer, keyed and ordered as a
// numgap run. run_directory owns one when the run is an ETDump.
//
// Keys (one per tensor, in event order):
//  - an event's key is its `name` when not empty, else its string delegate
//    debug id when not empty, else "delegate_<N>" for an integer delegate
//    debug id N >= 0, else "instruction_<N>" for an instruction id N >= 0,
//    else "event_<E>" (E: the event's index in RunData.events);
//  - an event carrying one Tensor has the one tensor <key>; an event carrying
//    a TensorList has the tensors <key>.0, <key>.1, ... (as the capture
//    script keys a node's several outputs), even when the list holds one;
//    an empty TensorList gives nothing;
//  - repeats: when an event's key (or one of its list keys) is already taken
//    by an earlier event, the event is keyed "<key>#2", or "#3", ... the
//    first suffix that makes it and its list keys unique (an operator run
//    in a loop gives conv, conv#2, conv#3 in execution order).
// Graph: every tensor event is a node named by its key, listed in event
// order, so event order is the run's topological order (first divergence is
// the first failing event); the nodes have no edges (an ETDump records none)
// and an integer delegate debug id N >= 0 is the node's debug handle, for
// handle matching against a reference graph that carries the same handles.
//
// Runs: an ETDump holds one RunData per execution. `run_index` picks one
// (0-based; CLI: "dump.etdp#run=N"); without it, a file of exactly one run
// reads that run, and a file of several is refused with a list of them
// (index, name, tensor count): comparing an arbitrary execution silently is
// worse than asking. A file without runs, or whose run has no tensor events,
// is an empty run (no keys).
//
// Data: a tensor of E elements of S bytes occupies bytes [offset, offset +
// E*S) of the debug buffer (ExecuTorch writes each tensor's bytes contiguously
// there, `strides` giving their layout in elements, so a dim-order such as
// channels-last is read as the logical tensor it is). Checked at open for
// every scalar type of known size: the byte count does not overflow, offset
// >= 0 and offset + E*S <= the buffer's size (an empty tensor needs no data
// and may have offset -1), and the strides reach no element beyond E - 1.
// Views point into the mapped buffer (no copy); data misaligned for its
// dtype is copied once by run_directory, as for .npy and .npz members. A
// scalar type numgap does not compute with (Long, the quantized and float8
// types, ...) or does not know is no error at open: view() of it throws
// "unsupported scalar type N (Name) in event '<key>' of ETDump '<file>'"
// (kind dtype), and the run's other tensors stay usable. A run with tensor
// events but no debug buffer is refused at open unless all its tensors are empty.
//
// Thread safety: after open, every const member may be called from several
// threads at once. Complexity: open O(file + events log events); find
// O(log keys).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/io/etdump.hpp>
#include <numgap/io/file_descriptor.hpp>
#include <numgap/io/mapped_file.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/run_manifest.hpp>
#include <numgap/io/selector_index.hpp>

namespace numgap::io {

// The run index a path's selector names: "run=N" (from "dump.etdp#run=N",
// split off by open_run_source.hpp) -> N; `file` names the ETDump in errors.
inline std::size_t parse_etdump_run_selector(std::string_view selector, const std::string& file) {
    constexpr std::string_view prefix = "run=";
    const std::optional<std::size_t> run =
        selector.starts_with(prefix) ? detail::selector_index(selector.substr(prefix.size())) : std::nullopt;
    if (!run)
        throw error(error_kind::usage,
                    "ETDump '" + file + "': the selector must be #run=N with N a run index (0, 1, ...), not '#" +
                        std::string(selector) + "'",
                    error_location::in_file(file));
    return *run;
}

class etdump_tensors {
public:
    struct entry {
        std::string key;
        const etdump_debug_event* event = nullptr;
        const etdump_tensor* tensor = nullptr;
        const etdump_scalar_type* scalar = nullptr; // nullptr: a number ExecuTorch does not define
    };

    // Maps and parses the ETDump open as `etdump` (`shown` names it), selects
    // run `run_index` (see the top), maps the debug buffer (`buffer`, named
    // `buffer_shown`; none when not given) and checks every tensor against it.
    void open(file_descriptor etdump, const std::filesystem::path& shown, std::optional<file_descriptor> buffer,
              const std::filesystem::path& buffer_shown, std::optional<std::size_t> run_index) {
        file_ = shown.string();
        file_mapping_ = std::make_shared<const mapped_file>(mapped_file::map(std::move(etdump), shown));
        contents_ = std::make_shared<const etdump_contents>(parse_etdump(file_mapping_->bytes(), file_));
        file_mapping_->check_intact();
        run_ = select_run(run_index);
        if (buffer) {
            buffer_name_ = buffer_shown.string();
            buffer_mapping_ = std::make_shared<const mapped_file>(mapped_file::map(std::move(*buffer), buffer_shown));
        }
        if (run_ == nullptr) return;
        // Keys repeat an event's name once per tensor of its list, so a long
        // name on a long list of shared Tensor offsets could ask for far more
        // memory than the file holds: the keys built may total at most 64
        // times the file's size plus 16 MiB (far above any real dump).
        key_bytes_left_ = std::uint64_t(file_mapping_->size()) * 64 + (std::uint64_t(16) << 20);
        std::set<std::string, std::less<>> taken;
        for (const etdump_debug_event& event : run_->tensor_events) add_event(event, taken);
        std::sort(sorted_.begin(), sorted_.end(),
                  [&](std::size_t a, std::size_t b) { return entries_[a].key < entries_[b].key; });
    }

    const etdump_contents& contents() const noexcept { return *contents_; }
    const std::string& file() const noexcept { return file_; }
    const std::shared_ptr<const mapped_file>& buffer_mapping() const noexcept { return buffer_mapping_; }

    const entry* find(std::string_view key) const {
        const auto found = std::lower_bound(sorted_.begin(), sorted_.end(), key,
                                            [&](std::size_t index, std::string_view k) { return entries_[index].key < k; });
        return found != sorted_.end() && entries_[*found].key == key ? &entries_[*found] : nullptr;
    }
    // In event order.
    const std::vector<entry>& entries() const noexcept { return entries_; }
    // Sorted, like every key list of a run.
    std::vector<std::string> keys() const {
        std::vector<std::string> keys;
        keys.reserve(sorted_.size());
        for (std::size_t index : sorted_) keys.push_back(entries_[index].key);
        return keys;
    }
    // One node per tensor event, in event order (see the top).
    const std::vector<node_spec>& nodes() const noexcept { return nodes_; }
    std::uint64_t total_bytes() const noexcept {
        return (file_mapping_ ? file_mapping_->size() : 0) + (buffer_mapping_ ? buffer_mapping_->size() : 0);
    }

    // The view of `tensor` in the mapped debug buffer (no copy; may be
    // misaligned for its dtype). Throws for a scalar type numgap does not
    // compute with.
    tensor_view view(const entry& tensor) const {
        if (tensor.scalar == nullptr || !tensor.scalar->type)
            throw error(error_kind::dtype,
                        "unsupported scalar type " + std::to_string(int(tensor.tensor->scalar_type)) + " (" +
                            std::string(tensor.scalar ? tensor.scalar->name : "not an ExecuTorch ScalarType") +
                            ") in event '" + tensor.key + "' of ETDump '" + file_ +
                            "' (numgap computes with Byte, Char, Short, UInt16, Int, Half, BFloat16, Float, Double, Bool)",
                        error_location::at_offset(file_, tensor.tensor->file_offset, tensor.key));
        const std::uint64_t bytes = byte_count(tensor);
        const std::byte* data = bytes == 0 ? nullptr : buffer_mapping_->bytes().data() + tensor.tensor->offset;
        return tensor_view(data, *tensor.scalar->type, tensor.tensor->sizes, tensor.tensor->strides);
    }

private:
    const etdump_run_data* select_run(std::optional<std::size_t> run_index) const {
        const std::vector<etdump_run_data>& runs = contents_->runs;
        if (run_index) {
            if (*run_index >= runs.size())
                throw error(error_kind::usage,
                            "ETDump '" + file_ + "' has " + std::to_string(runs.size()) + " run(s); #run=" +
                                std::to_string(*run_index) + " does not exist" + list_runs(),
                            error_location::in_file(file_));
            return &runs[*run_index];
        }
        if (runs.empty()) return nullptr;
        if (runs.size() == 1) return &runs.front();
        throw error(error_kind::usage,
                    "ETDump '" + file_ + "' holds " + std::to_string(runs.size()) +
                        " runs; choose one by appending #run=N to its path" + list_runs(),
                    error_location::in_file(file_));
    }

    std::string list_runs() const {
        std::string text;
        for (std::size_t r = 0; r < contents_->runs.size(); ++r) {
            std::size_t tensors = 0;
            for (const etdump_debug_event& event : contents_->runs[r].tensor_events) tensors += event.tensors.size();
            text += (r == 0 ? ": " : ", ") + std::string("#run=") + std::to_string(r) + " '" + contents_->runs[r].name +
                    "' (" + std::to_string(tensors) + " tensors)";
        }
        return text;
    }

    static std::string base_key(const etdump_debug_event& event) {
        if (!event.name.empty()) return event.name;
        if (!event.delegate_debug_id_str.empty()) return event.delegate_debug_id_str;
        if (event.delegate_debug_id_int >= 0) return "delegate_" + std::to_string(event.delegate_debug_id_int);
        if (event.instruction_id >= 0) return "instruction_" + std::to_string(event.instruction_id);
        return "event_" + std::to_string(event.event_index);
    }

    std::vector<std::string> output_keys(const etdump_debug_event& event, const std::string& key) {
        // Each key is stored three times (taken set, entry, node outputs).
        const std::uint64_t cost = (std::uint64_t(key.size()) + 24) * 3 * std::max<std::uint64_t>(1, event.tensors.size());
        if (cost > key_bytes_left_)
            throw error(error_kind::limit,
                        "ETDump '" + file_ + "': the tensor keys of event " + std::to_string(event.event_index) +
                            " would exceed 64 times the file's size (a long name repeated over a long tensor list)",
                        error_location::at_item(file_, key.substr(0, 200)));
        key_bytes_left_ -= cost;
        if (!event.tensor_list) return {key};
        std::vector<std::string> keys;
        keys.reserve(event.tensors.size());
        for (std::size_t i = 0; i < event.tensors.size(); ++i) keys.push_back(key + "." + std::to_string(i));
        return keys;
    }

    void add_event(const etdump_debug_event& event, std::set<std::string, std::less<>>& taken) {
        if (event.tensors.empty()) return; // an empty TensorList: no tensor, no node
        const std::string base = base_key(event);
        std::string key = base;
        std::vector<std::string> outputs = output_keys(event, key);
        const auto free = [&] {
            return taken.count(key) == 0 &&
                   std::none_of(outputs.begin(), outputs.end(), [&](const std::string& k) { return taken.count(k) != 0; });
        };
        // The search for a free suffix resumes where the last event with this
        // base key stopped, so an operator run n times costs O(n), not O(n^2);
        // a failed try consumes a key some other event took.
        std::size_t& occurrence = next_occurrence_[base];
        while (!free()) {
            occurrence = std::max<std::size_t>(occurrence, 2);
            key = base + "#" + std::to_string(occurrence++);
            outputs = output_keys(event, key);
        }
        taken.insert(key);
        node_spec node;
        node.name = key;
        if (event.delegate_debug_id_int >= 0) node.debug_handles.push_back(event.delegate_debug_id_int);
        for (std::size_t i = 0; i < outputs.size(); ++i) {
            taken.insert(outputs[i]);
            entry added{outputs[i], &event, &event.tensors[i], find_etdump_scalar_type(event.tensors[i].scalar_type)};
            check_data(added);
            sorted_.push_back(entries_.size());
            entries_.push_back(std::move(added));
        }
        node.outputs = std::move(outputs);
        nodes_.push_back(std::move(node));
    }

    // E * S, or 0 for an empty tensor. Precondition: check_data passed.
    static std::uint64_t byte_count(const entry& tensor) {
        return *detail::checked_byte_count(tensor.tensor->sizes, std::size_t(tensor.scalar->bytes));
    }

    void check_data(const entry& tensor) const {
        if (tensor.scalar == nullptr || tensor.scalar->bytes == 0) return; // view() refuses it
        const etdump_tensor& stored = *tensor.tensor;
        const auto fail = [&](error_kind kind, const std::string& reason) {
            throw error(kind,
                        "ETDump '" + file_ + "', tensor '" + tensor.key + "' (Tensor table at byte offset " +
                            std::to_string(stored.file_offset) + "): " + reason,
                        error_location::at_offset(file_, stored.file_offset, tensor.key));
        };
        const std::optional<std::uint64_t> bytes =
            detail::checked_byte_count(stored.sizes, std::size_t(tensor.scalar->bytes));
        if (!bytes) fail(error_kind::limit, "shape " + detail::shape_text(stored.sizes) + " is absurd: its size overflows");
        if (*bytes == 0) return;
        std::uint64_t last = 0; // the element farthest from the first, in elements
        for (std::size_t d = 0; d < stored.strides.size(); ++d) {
            std::uint64_t reach = 0;
            if (__builtin_mul_overflow(std::uint64_t(stored.sizes[d] - 1), std::uint64_t(stored.strides[d]), &reach) ||
                __builtin_add_overflow(last, reach, &last))
                fail(error_kind::format, "its strides overflow");
        }
        const std::uint64_t elements = *bytes / std::uint64_t(tensor.scalar->bytes);
        if (!stored.strides.empty() && last >= elements)
            fail(error_kind::format, "strides " + detail::shape_text(stored.strides) + " reach element " +
                                         std::to_string(last) + " of a tensor of " + std::to_string(elements) +
                                         " elements");
        if (!buffer_mapping_)
            throw error(error_kind::usage,
                        "ETDump '" + file_ + "' keeps tensor '" + tensor.key +
                            "' in a debug buffer, which was not given (CLI: --debug-buffer FILE for the target, "
                            "--reference-debug-buffer FILE for the reference)",
                        error_location::at_item(file_, tensor.key));
        const std::uint64_t size = buffer_mapping_->size();
        if (stored.offset < 0 || std::uint64_t(stored.offset) > size || *bytes > size - std::uint64_t(stored.offset))
            throw error(error_kind::format,
                        "ETDump '" + file_ + "', tensor '" + tensor.key + "': its " + std::to_string(*bytes) +
                            " bytes at offset " + std::to_string(stored.offset) + " of debug buffer '" + buffer_name_ +
                            "' lie outside its " + std::to_string(size) + " bytes (Tensor table at byte offset " +
                            std::to_string(stored.file_offset) + " of the ETDump)",
                        error_location::at_offset(buffer_name_, std::uint64_t(std::max<std::int64_t>(stored.offset, 0)),
                                                  tensor.key));
    }

    std::string file_, buffer_name_;
    std::shared_ptr<const mapped_file> file_mapping_, buffer_mapping_;
    // Shared and immutable: entries_ and run_ point into it, and copies share it.
    std::shared_ptr<const etdump_contents> contents_ = std::make_shared<const etdump_contents>();
    const etdump_run_data* run_ = nullptr;
    std::vector<entry> entries_;     // event order
    std::vector<std::size_t> sorted_; // indices of entries_ by key
    std::vector<node_spec> nodes_;
    std::map<std::string, std::size_t, std::less<>> next_occurrence_; // base key -> next "#n" to try (open only)
    std::uint64_t key_bytes_left_ = 0; // open only: see open()
};

} // namespace numgap::io
