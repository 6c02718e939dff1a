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
// interface over all of them: keys() sorted, load() by key, graph.json's nodes
// in manifest() when the container has a graph (and its tensor specs, but
// not a container's keys: run_source.hpp). A tensor with graph.json's
// "block" gets its block scales and zero points from the tensors (or files
// of the run) it names, at load().
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
#include <type_traits>
#include <utility>
#include <vector>

#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/float8.hpp>
#include <numgap/core/half.hpp>
#include <numgap/core/key_index.hpp>
#include <numgap/core/quantization.hpp>
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
        run.index_tensors();
        return run;
    }

    const std::filesystem::path& path() const noexcept { return path_; }
    const run_manifest& manifest() const noexcept { return manifest_; }
    // Frees graph.json's node list (manifest().nodes) for a caller that has
    // built its graph from it (run_graph) and needs only the tensors now: a
    // few hundred bytes a node the comparison never reads (~0.4 GB for two
    // runs of a million nodes). has_graph and the tensors are unchanged.
    void release_nodes() noexcept { manifest_.nodes.clear(); }
    // See run_source::release_cached_pages.
    void release_cached_pages() const noexcept {
        if (source_) source_->release_cached_pages();
    }
    // What open() chose or inferred that the user did not say, one sentence
    // each (e.g. which runner of a Polygraphy file was read); the CLI prints them.
    const std::vector<std::string>& notes() const noexcept { return notes_; }

    // Every tensor key of the run, sorted: the manifest's specs and the
    // container keys (run_source.hpp) that have none.
    // (Sorting a million container keys is ~0.1 s: done here, not at open(),
    // since a run with graph.json takes its nodes from it, not from keys().)
    std::vector<std::string> keys() const {
        const std::vector<tensor_spec>& specs = manifest_.tensors;
        const std::vector<std::uint32_t> container_order = container_keys_without_spec();
        std::vector<std::string> keys;
        keys.reserve(specs.size() + container_order.size());
        std::size_t next_spec = 0;
        for (const std::uint32_t slot : container_order) {
            const std::string_view key = source_->container_key(slot);
            for (; next_spec < specs.size() && specs[next_spec].key < key; ++next_spec)
                keys.push_back(specs[next_spec].key);
            keys.emplace_back(key);
        }
        for (; next_spec < specs.size(); ++next_spec) keys.push_back(specs[next_spec].key);
        return keys;
    }
    bool contains(std::string_view key) const {
        return find_tensor(key) != nullptr || source_->find_container_key(key).has_value();
    }
    // The spec describing tensor `key`, or nullptr: what
    // manifest().find_tensor(key) finds, through a hash index built at open()
    // instead of a binary search (whose cache misses over a million 300-byte
    // specs were ~5% of a comparison's own time, two lookups a pair). A
    // container key that graph.json does not describe has no spec (nullptr
    // here, yet contains() and load() find it).
    const tensor_spec* find_tensor(std::string_view key) const {
        const std::uint32_t* found = tensor_index_.find(key, spec_key_equals{&manifest_.tensors});
        return found == nullptr ? nullptr : &manifest_.tensors[*found];
    }
    // For progress and throughput: the bytes of the run's tensor files or
    // members (headers included), known at open() without reading any tensor.
    std::uint64_t total_bytes() const noexcept { return total_bytes_; }

    loaded_tensor load(std::string_view key) const {
        return load_spec(require_tensor(key).spec(), [&](const tensor_spec& spec) { return source_->load(spec); });
    }

    // load(), for comparison with `reference`: a run whose files do not say
    // their dtype and shape (a QNN raw output folder) infers them from the
    // reference's shape (run_source::load_like); other runs ignore it.
    loaded_tensor load_like(std::string_view key, const tensor_view& reference) const {
        return load_spec(require_tensor(key).spec(),
                         [&](const tensor_spec& spec) { return source_->load_like(spec, reference); });
    }

    // load() and load_like(), but nullopt when the run has no tensor `key`
    // (other failures still throw): `contains` and `load` in one lookup.
    std::optional<loaded_tensor> try_load(std::string_view key) const {
        const std::optional<found_tensor> found = find(key);
        if (!found) return std::nullopt;
        return load_spec(found->spec(), [&](const tensor_spec& spec) { return source_->load(spec); });
    }
    std::optional<loaded_tensor> try_load_like(std::string_view key, const tensor_view& reference) const {
        const std::optional<found_tensor> found = find(key);
        if (!found) return std::nullopt;
        return load_spec(found->spec(), [&](const tensor_spec& spec) { return source_->load_like(spec, reference); });
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
        const std::optional<found_tensor> found = find(key);
        if (!found) return std::nullopt;
        const tensor_spec& spec = found->spec();
        if (spec.shape) return reference_order_shape(spec, *spec.shape);
        std::optional<std::vector<std::int64_t>> stored = source_->stored_shape(spec);
        if (!stored) return std::nullopt;
        return reference_order_shape(spec, *stored);
    }

private:
    run_directory() = default;

    // A tensor of the run: the manifest's spec, or one made on the spot (a
    // container key without a spec: its key and slot are all a source needs;
    // a file named as a block parameter: its key and file).
    class found_tensor {
    public:
        explicit found_tensor(const tensor_spec* listed) noexcept : listed_(listed) {}
        explicit found_tensor(tensor_spec made) noexcept : made_(std::move(made)) {}
        const tensor_spec& spec() const noexcept { return listed_ != nullptr ? *listed_ : made_; }

    private:
        const tensor_spec* listed_ = nullptr;
        tensor_spec made_;
    };
    std::optional<found_tensor> find(std::string_view key) const {
        if (const tensor_spec* spec = find_tensor(key)) return found_tensor(spec);
        const std::optional<std::uint32_t> slot = source_->find_container_key(key);
        if (!slot) return std::nullopt;
        tensor_spec made;
        made.key = key;
        made.source_slot = *slot;
        return found_tensor(std::move(made));
    }

    // The slots of the container keys without a spec, by key: keys() merges them with the specs.
    std::vector<std::uint32_t> container_keys_without_spec() const {
        std::vector<std::uint32_t> slots = source_->sorted_container_keys();
        std::erase_if(slots,
                      [this](std::uint32_t slot) { return find_tensor(source_->container_key(slot)) != nullptr; });
        return slots;
    }

    // Payload: a position in manifest_.tensors, which open() fixes (a move of
    // the run moves the vector's buffer with the index).
    struct spec_key_equals {
        const std::vector<tensor_spec>* tensors;
        bool operator()(std::uint32_t i, std::string_view key) const { return (*tensors)[i].key == key; }
    };
    void index_tensors() {
        const std::vector<tensor_spec>& tensors = manifest_.tensors;
        if (tensors.size() >= numgap::detail::max_key_positions)
            throw error(error_kind::limit, "run '" + path_.string() + "' holds more than 2^31 - 1 tensors",
                        error_location::in_file(path_.string()));
        tensor_index_.reserve(tensors.size());
        // The specs are sorted by key; the first of equal keys is the one
        // run_manifest::find_tensor's binary search finds.
        for (std::size_t i = 0; i < tensors.size(); ++i)
            tensor_index_.insert(tensors[i].key, std::uint32_t(i), spec_key_equals{&tensors});
    }

    // graph.json's "block" (run_manifest.hpp): reads the scales and zero
    // points it names (keys of the run, else files inside it, confined like
    // every run path) and attaches them to `tensor`'s view.
    void attach_blocks(loaded_tensor& tensor, const tensor_spec& spec) const {
        const tensor_spec::block_spec& block = *spec.block;
        const tensor_view& view = tensor.view();
        const error_location location = error_location::at_item(path_.string(), spec.key);
        if (!is_integer(view.type()) && !is_mx_element(view.type()))
            throw error(error_kind::dtype,
                        "graph.json gives \"block\" but the tensor stores " + std::string(name_of(view.type())) +
                            ", neither an integer type nor an MX element format",
                        location);
        if (is_mx_element(view.type()) && !block.zero_points.empty())
            throw error(error_kind::schema,
                        "graph.json gives \"block\" \"zero_points\" for " + std::string(name_of(view.type())) +
                            "; an MX element format takes scales only",
                        location);
        if (view.has_axis_order())
            throw error(error_kind::shape,
                        "graph.json gives \"block\" and \"axis_order\"; block parameters are laid out over the "
                        "tensor's own dimension order, so drop \"axis_order\"",
                        location);
        const std::optional<std::int64_t> expected = block_parameter_count(view.shape(), block.axis, block.size);
        if (!expected)
            throw error(error_kind::shape,
                        "graph.json gives \"block\" axis " + std::to_string(block.axis) + " but the tensor has rank " +
                            std::to_string(view.rank()),
                        location);
        std::vector<float> scales = block_parameters<float>(block.scales, "scales", spec, *expected);
        std::vector<std::int32_t> zero_points;
        if (!block.zero_points.empty())
            zero_points = block_parameters<std::int32_t>(block.zero_points, "zero_points", spec, *expected);
        tensor.set_block_quantization(block.axis, block.size, std::move(scales), std::move(zero_points));
    }

    // The values of tensor (or file) `name` as T: float scales from any
    // float dtype, int32 zero points from any byte-addressed integer dtype.
    template <class T>
    std::vector<T> block_parameters(const std::string& name, std::string_view what, const tensor_spec& owner,
                                    std::int64_t expected) const {
        std::optional<found_tensor> named = find(name);
        if (!named) {
            tensor_spec by_file;
            by_file.key = name;
            by_file.file = name;
            named.emplace(std::move(by_file));
        }
        const tensor_spec* found = &named->spec();
        const error_location location = error_location::at_item(path_.string(), owner.key);
        const std::string label = "block " + std::string(what) + " '" + name + "'";
        if (found->block || found->affine)
            throw error(error_kind::schema, label + " is quantized itself; block parameters must be plain numbers",
                        location);
        // A sharded tensor's view has its shape but no data (io/sharded_tensor.hpp).
        if (found->shards.size() > 1)
            throw error(error_kind::schema,
                        label + " is stored as " + std::to_string(found->shards.size()) +
                            " shards; block parameters must be one tensor in one file",
                        location);
        const loaded_tensor parameters = source_->load(*found);
        const tensor_view& values = parameters.view();
        if (values.size() != expected)
            throw error(error_kind::shape,
                        label + " holds " + std::to_string(values.size()) + " values but blocks of " +
                            std::to_string(owner.block->size) + " along axis " + std::to_string(owner.block->axis) +
                            " need " + std::to_string(expected) +
                            " (one per block: outer x ceil(axis length / size) x inner)",
                        location);
        const bool usable = std::is_same_v<T, float> ? is_floating(values.type())
                                                     : is_integer(values.type()) && !is_packed(values.type());
        if (!usable || !values.is_contiguous())
            throw error(error_kind::dtype,
                        label + " stores " + std::string(name_of(values.type())) +
                            (usable ? " non-contiguously" : "") + "; block " + std::string(what) + " must be " +
                            (std::is_same_v<T, float> ? "floating point" : "integers of 8 to 32 bits") +
                            ", stored contiguously",
                        location);
        std::vector<T> converted(static_cast<std::size_t>(expected));
        const void* data = values.data();
        for (std::size_t i = 0; i < converted.size(); ++i) {
            switch (values.type()) {
            case dtype::float32: converted[i] = T(static_cast<const float*>(data)[i]); break;
            case dtype::float64: converted[i] = T(static_cast<const double*>(data)[i]); break;
            case dtype::float16: converted[i] = T(to_float(static_cast<const float16*>(data)[i])); break;
            case dtype::bfloat16: converted[i] = T(to_float(static_cast<const bfloat16*>(data)[i])); break;
            case dtype::int8: converted[i] = T(static_cast<const std::int8_t*>(data)[i]); break;
            case dtype::uint8: converted[i] = T(static_cast<const std::uint8_t*>(data)[i]); break;
            case dtype::int16: converted[i] = T(static_cast<const std::int16_t*>(data)[i]); break;
            case dtype::uint16: converted[i] = T(static_cast<const std::uint16_t*>(data)[i]); break;
            case dtype::int32: converted[i] = T(static_cast<const std::int32_t*>(data)[i]); break;
            case dtype::float8_e4m3fn: converted[i] = T(to_float(static_cast<const float8_e4m3fn*>(data)[i])); break;
            case dtype::float8_e5m2: converted[i] = T(to_float(static_cast<const float8_e5m2*>(data)[i])); break;
            case dtype::float8_e8m0fnu: converted[i] = T(to_float(static_cast<const float8_e8m0fnu*>(data)[i])); break;
            case dtype::boolean:
            case dtype::int4:
            case dtype::uint4:
            case dtype::float4_e2m1fn:
            case dtype::float6_e2m3fn:
            case dtype::float6_e3m2fn:
                throw error(error_kind::dtype,
                            label + " stores " + std::string(name_of(values.type())) + ", which block " +
                                std::string(what) + " cannot be",
                            location);
            }
        }
        parameters.check_intact();
        return converted;
    }

    found_tensor require_tensor(std::string_view key) const {
        std::optional<found_tensor> found = find(key);
        if (!found)
            throw error(error_kind::schema,
                        "run '" + path_.string() + "' has no tensor '" + std::string(key) + "' (" +
                            source_->missing_reason(key, manifest_) + ")",
                        error_location::at_item(path_.string(), std::string(key)));
        return std::move(*found);
    }

    template <class Read>
    loaded_tensor load_spec(const tensor_spec& spec, Read&& read) const {
        try {
            loaded_tensor tensor = read(spec);
            if (spec.block) attach_blocks(tensor, spec);
            return tensor;
        } catch (const error& failure) {
            error_location where = failure.where();
            if (where.file.empty()) where.file = path_.string();
            if (where.item.empty()) where.item = spec.key;
            throw error(failure.kind(), "run '" + path_.string() + "', tensor '" + spec.key + "': " + failure.what(),
                        std::move(where));
        }
    }

    std::filesystem::path path_;
    run_manifest manifest_;
    std::shared_ptr<const run_source> source_;
    numgap::detail::key_index tensor_index_;
    std::uint64_t total_bytes_ = 0;
    std::vector<std::string> notes_;
};

} // namespace numgap::io
