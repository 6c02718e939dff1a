#pragma once
// numgap::io::run_directory: one run's tensors on disk, and loaded_tensor, a
// tensor read from it.
//
// A run is a directory or a single .npz file (run directory format version 1,
// see run_manifest.hpp for graph.json):
//  - every *.npy below the directory is a tensor keyed by its path relative to
//    the directory without ".npy", '/'-separated ("block1/conv.npy" -> "block1/conv");
//  - in an .npz, every member "<key>.npy" is the tensor <key> (stored members
//    are mapped in place, deflated ones inflated); other members are ignored;
//  - graph.json's "tensors" entries add or re-key files: raw headerless files
//    (dtype and shape from graph.json, size must match exactly), .npy files
//    anywhere (a file claimed by an entry is known only under the entry's key),
//    and layout/quantization for any tensor.
// open() fails (numgap::error naming the run and file) on a path that is
// neither a directory nor an .npz, a graph.json syntax or schema error (with
// line and column), a "tensors" entry whose explicitly written "file" does not
// exist (or is not a regular file), and a key claimed both by an entry and by a
// different <key>.npy file. A key a node lists without any file is not an
// error here, nor is an entry that leaves "file" at its default "<key>.npy"
// (it only gives layout or quantization) when that file is absent: the tensor
// was not dumped, contains() is false, load() throws, and the compare layer
// reports it as missing. (An entry that writes "file": "<key>.npy" explicitly
// names the default file and is treated the same way.)
//
// load() maps the file (MAP_POPULATE up to 1 GiB: the whole tensor is read
// next) - no copy - except where the data would be misaligned for its element type
// (possible in a stored .npz member or a hand-made header), which is copied
// into an aligned buffer, and for deflated .npz members, inflated into one.
// It validates the header and size, applies graph.json's dtype/shape (raw
// files; checked against .npy headers), axis_order and quantization, and
// names the tensor: the view's name() is the key. A file is read as .npy when
// it starts with the .npy magic, otherwise as raw.
//
// Not supported: graph.json next to or inside an .npz run (an .npz run has no
// graph; use a directory), and directory symlinks (not followed while listing).
// A file truncated by another process while mapped raises SIGBUS on access,
// as with any mapping.
//
// load() and every other const member are safe to call from several threads
// at once. Complexity: open is O(files + graph.json); load is O(1) for mapped
// data, O(size) for inflated or realigned data.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/quantization.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/io/mapped_file.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/npz.hpp>
#include <numgap/io/run_manifest.hpp>

namespace numgap::io {

class run_directory;

// Move-only owner of one tensor's bytes (mapping or buffer) and of the
// per-channel arrays and name its view points to. Moving keeps view() valid.
class loaded_tensor {
public:
    loaded_tensor(loaded_tensor&&) noexcept = default;
    loaded_tensor& operator=(loaded_tensor&&) noexcept = default;
    loaded_tensor(const loaded_tensor&) = delete;
    loaded_tensor& operator=(const loaded_tensor&) = delete;

    const tensor_view& view() const noexcept { return state_->view; }
    const std::string& key() const noexcept { return state_->key; }
    // As named in the run: a path relative to the run directory, or the .npz member name.
    const std::string& file() const noexcept { return state_->file; }

private:
    friend class run_directory;
    // On the heap so that the view's pointers survive moves of loaded_tensor.
    struct state {
        std::string key, file;
        std::shared_ptr<const mapped_file> mapping;
        std::vector<std::byte> buffer;
        std::vector<std::byte> aligned;
        std::vector<float> scales;
        std::vector<std::int32_t> zero_points;
        tensor_view view;
    };
    loaded_tensor() : state_(std::make_unique<state>()) {}
    std::unique_ptr<state> state_;
};

class run_directory {
public:
    static run_directory open(const std::filesystem::path& path) {
        run_directory run;
        run.path_ = path;
        std::error_code failure;
        const std::filesystem::file_status status = std::filesystem::status(path, failure);
        if (status.type() == std::filesystem::file_type::not_found)
            throw error("run '" + path.string() + "' does not exist");
        if (failure) throw error("cannot read run '" + path.string() + "': " + failure.message());
        if (std::filesystem::is_directory(status))
            run.open_directory();
        else if (std::filesystem::is_regular_file(status) && path.extension() == ".npz")
            run.open_archive();
        else
            throw error("run '" + path.string() + "' is neither a directory nor an .npz file");
        return run;
    }

    const std::filesystem::path& path() const noexcept { return path_; }
    const run_manifest& manifest() const noexcept { return manifest_; }

    std::vector<std::string> keys() const {
        std::vector<std::string> keys;
        keys.reserve(manifest_.tensors.size());
        for (const tensor_spec& spec : manifest_.tensors) keys.push_back(spec.key);
        return keys;
    }
    bool contains(std::string_view key) const { return manifest_.find_tensor(key) != nullptr; }
    // For progress and throughput: the sizes of the tensor files (.npy headers
    // included, a few hundred bytes each) or the uncompressed sizes of the .npz
    // members; known at open() without reading any tensor.
    std::uint64_t total_bytes() const noexcept { return total_bytes_; }

    loaded_tensor load(std::string_view key) const {
        const tensor_spec* spec = manifest_.find_tensor(key);
        if (spec == nullptr)
            throw error("run '" + path_.string() + "' has no tensor '" + std::string(key) + "' (no " +
                        (archive_ ? "member '" : "file '") + std::string(key) + ".npy'" +
                        (manifest_.has_graph ? " and no \"tensors\" entry in graph.json)" : ")"));
        try {
            return archive_ ? load_member(*spec) : load_file(*spec);
        } catch (const error& failure) {
            throw error("run '" + path_.string() + "', tensor '" + spec->key + "': " + failure.what());
        }
    }

    // The shape of tensor `key` in reference dimension order (axis_order
    // applied), read without reading the data: graph.json's "shape" when it
    // gives one, else the .npy header (only the header's bytes are read; an
    // .npz member only when stored, since a deflated one would have to be
    // inflated whole). nullopt when the run has no such tensor, the shape is
    // not known that cheaply, or the header cannot be read: a shape is a hint
    // for matching here, and load() reports a bad file on its own.
    // Cost: one open and two small reads per .npy file, about 3 us per file
    // with a warm page cache (10^4 files of a run: 30 ms on top of 3 ms for
    // the graph itself, g++ -O2), so callers read headers only when
    // structural matching may run. Thread-safe.
    std::optional<std::vector<std::int64_t>> stored_shape(std::string_view key) const {
        const tensor_spec* spec = manifest_.find_tensor(key);
        if (spec == nullptr) return std::nullopt;
        if (spec->shape) return reference_order_shape(*spec, *spec->shape);
        try {
            std::optional<npy_header> header;
            if (archive_) {
                const npz_member* member = archive_->find(spec->file);
                if (member == nullptr || member->method != 0) return std::nullopt;
                std::vector<std::byte> unused;
                header = parse_npy_header(archive_->member_bytes(*member, unused), archive_->describe(*member),
                                          spec->type);
            } else {
                header = read_npy_file_header(path_ / spec->file, spec->type);
            }
            if (!header) return std::nullopt;
            return reference_order_shape(*spec, header->shape);
        } catch (const error&) {
            return std::nullopt;
        }
    }

private:
    run_directory() = default;

    // The header of the .npy file at `file`, reading only its first bytes;
    // nullopt when the file does not start with the .npy magic (a raw dump).
    static std::optional<npy_header> read_npy_file_header(const std::filesystem::path& file,
                                                          std::optional<dtype> declared) {
        std::unique_ptr<std::FILE, int (*)(std::FILE*)> stream(std::fopen(file.c_str(), "rb"), &std::fclose);
        if (!stream) return std::nullopt;
        // Magic (6), version (2), header length (2 bytes in version 1, 4 after).
        std::vector<std::byte> bytes(12);
        const std::size_t prefix_read = std::fread(bytes.data(), 1, bytes.size(), stream.get());
        bytes.resize(prefix_read);
        if (!has_npy_magic(bytes) || prefix_read < 10) return std::nullopt;
        const bool short_length = std::to_integer<int>(bytes[6]) == 1;
        const std::size_t prefix = short_length ? 10 : 12;
        if (prefix_read < prefix) return std::nullopt;
        const std::uint64_t header_length = detail::read_little_endian(bytes.data() + 8, short_length ? 2 : 4);
        // NumPy's headers are a few hundred bytes; a larger claim is a bad file,
        // and bounding it bounds what a hostile file makes us allocate.
        constexpr std::uint64_t max_header_length = 1 << 20;
        if (header_length > max_header_length) return std::nullopt;
        const std::size_t total = prefix + std::size_t(header_length);
        const std::size_t have = std::min(prefix_read, total);
        bytes.resize(total);
        const std::size_t rest = total - have;
        if (std::fread(bytes.data() + have, 1, rest, stream.get()) != rest) return std::nullopt;
        return parse_npy_header_only(bytes, file.string(), declared);
    }

    void open_directory() {
        // Discovered .npy files: relative path -> size.
        std::map<std::string, std::uint64_t> npy_files;
        try {
            for (const auto& entry : std::filesystem::recursive_directory_iterator(path_)) {
                if (!entry.is_regular_file() || entry.path().extension() != ".npy") continue;
                npy_files.emplace(entry.path().lexically_relative(path_).generic_string(), entry.file_size());
            }
        } catch (const std::filesystem::filesystem_error& failure) {
            throw error("cannot list run '" + path_.string() + "': " + failure.code().message() + " (" +
                        failure.path1().string() + ")");
        }
        const std::filesystem::path graph = path_ / "graph.json";
        if (std::filesystem::exists(graph)) {
            const mapped_file text = mapped_file::open(graph);
            manifest_ = parse_run_manifest(
                std::string_view(reinterpret_cast<const char*>(text.data()), text.size()), graph.string());
        }
        std::map<std::string, std::string> claimed; // relative file -> key of the entry
        std::vector<std::string> not_dumped;         // keys whose default-named file is absent
        for (const tensor_spec& spec : manifest_.tensors) {
            const std::filesystem::path file = path_ / spec.file;
            std::error_code failure;
            const std::filesystem::file_status status = std::filesystem::status(file, failure);
            // An entry that only adds layout or quantization keeps the default
            // file name; that tensor may simply not have been dumped, which the
            // compare layer reports as `missing` rather than failing the run.
            if (!std::filesystem::exists(status) && spec.file == spec.key + ".npy") {
                not_dumped.push_back(spec.key);
                continue;
            }
            if (!std::filesystem::is_regular_file(status))
                throw error(graph.string() + ": tensor '" + spec.key + "': file '" + spec.file + "' " +
                            (std::filesystem::exists(status) ? "is not a regular file" : "does not exist") +
                            " in run '" + path_.string() + "'");
            const std::string relative = file.lexically_normal().lexically_relative(path_.lexically_normal()).generic_string();
            claimed.emplace(relative.empty() ? spec.file : relative, spec.key);
            total_bytes_ += std::filesystem::file_size(file);
        }
        // manifest_.tensors stays sorted: erasing keeps the order.
        std::erase_if(manifest_.tensors, [&](const tensor_spec& spec) {
            return std::binary_search(not_dumped.begin(), not_dumped.end(), spec.key);
        });
        std::vector<tensor_spec> discovered;
        for (const auto& [relative, size] : npy_files) {
            if (claimed.count(relative) != 0) continue;
            const std::string key = relative.substr(0, relative.size() - 4);
            if (const tensor_spec* spec = manifest_.find_tensor(key))
                throw error(graph.string() + ": tensor '" + key + "' is mapped to file '" + spec->file +
                            "', but '" + relative + "' also exists in run '" + path_.string() +
                            "'; rename one of them");
            tensor_spec spec;
            spec.key = key;
            spec.file = relative;
            discovered.push_back(std::move(spec));
            total_bytes_ += size;
        }
        merge(std::move(discovered));
    }

    void open_archive() {
        archive_ = std::make_shared<const npz_archive>(npz_archive::open(path_));
        std::vector<tensor_spec> discovered;
        for (const npz_member& member : archive_->members()) {
            const std::string_view name = member.name;
            if (name.size() <= 4 || name.substr(name.size() - 4) != ".npy") continue;
            tensor_spec spec;
            spec.key = std::string(name.substr(0, name.size() - 4));
            spec.file = member.name;
            discovered.push_back(std::move(spec));
            total_bytes_ += member.uncompressed_size;
        }
        merge(std::move(discovered));
    }

    void merge(std::vector<tensor_spec> discovered) {
        for (tensor_spec& spec : discovered) manifest_.tensors.push_back(std::move(spec));
        std::sort(manifest_.tensors.begin(), manifest_.tensors.end(),
                  [](const tensor_spec& a, const tensor_spec& b) { return a.key < b.key; });
    }

    loaded_tensor load_file(const tensor_spec& spec) const {
        loaded_tensor tensor;
        loaded_tensor::state& state = *tensor.state_;
        state.key = spec.key;
        state.file = spec.file;
        const std::filesystem::path file = path_ / spec.file;
        // Populating is ~20% faster when the tensor is read right away (see mapped_file.hpp),
        // but for a file near the size of RAM it would read everything once more than the
        // comparison does; above populate_limit pages fault in lazily instead.
        constexpr std::uintmax_t populate_limit = std::uintmax_t(1) << 30;
        std::error_code size_failure;
        const std::uintmax_t size = std::filesystem::file_size(file, size_failure);
        const map_hint hint = !size_failure && size <= populate_limit ? map_hint::populate : map_hint::sequential;
        state.mapping = std::make_shared<const mapped_file>(mapped_file::open(file, hint));
        const std::span<const std::byte> bytes = state.mapping->bytes();
        if (has_npy_magic(bytes)) {
            state.view = npy_view(bytes, parse_npy_header(bytes, file.string(), spec.type));
        } else {
            if (!spec.type || !spec.shape)
                throw error("'" + file.string() +
                            "' has no .npy header, so graph.json must give its \"dtype\" and \"shape\"");
            const std::optional<std::uint64_t> needed = detail::checked_byte_count(*spec.shape, size_of(*spec.type));
            if (!needed || *needed != bytes.size())
                throw error("raw file '" + file.string() + "' has " + std::to_string(bytes.size()) +
                            " bytes but shape " + detail::shape_text(*spec.shape) + " of " +
                            std::string(name_of(*spec.type)) + " needs " +
                            (needed ? std::to_string(*needed) : std::string("more than 2^63")));
            state.view = tensor_view(bytes.data(), *spec.type, *spec.shape);
        }
        finish(spec, state, file.string());
        return tensor;
    }

    loaded_tensor load_member(const tensor_spec& spec) const {
        loaded_tensor tensor;
        loaded_tensor::state& state = *tensor.state_;
        state.key = spec.key;
        state.file = spec.file;
        state.mapping = archive_->mapping();
        const npz_member* member = archive_->find(spec.file);
        NUMGAP_ASSERT(member != nullptr);
        const std::string where = archive_->describe(*member);
        const std::span<const std::byte> bytes = archive_->member_bytes(*member, state.buffer);
        state.view = npy_view(bytes, parse_npy_header(bytes, where, spec.type));
        finish(spec, state, where);
        return tensor;
    }

    // Shape check, alignment, axis order, quantization and name: common to all sources.
    static void finish(const tensor_spec& spec, loaded_tensor::state& state, const std::string& where) {
        tensor_view& view = state.view;
        if (spec.shape && !std::equal(spec.shape->begin(), spec.shape->end(), view.shape().begin(), view.shape().end()))
            throw error("graph.json gives shape " + detail::shape_text(*spec.shape) + " but '" + where +
                        "' stores shape " + detail::shape_text(view.shape()));
        const std::size_t item = size_of(view.type());
        if (reinterpret_cast<std::uintptr_t>(view.data()) % item != 0) {
            // Typed loads from a misaligned address are undefined behaviour; copy once.
            std::int64_t extent = view.size() == 0 ? 0 : 1;
            for (int d = 0; d < view.rank() && extent != 0; ++d) extent += (view.shape(d) - 1) * view.stride(d);
            state.aligned.resize(std::size_t(extent) * item);
            if (extent != 0) std::memcpy(state.aligned.data(), view.data(), state.aligned.size());
            view = tensor_view(state.aligned.data(), view.type(), view.shape(), view.strides());
        }
        if (spec.axis_order) {
            if (int(spec.axis_order->size()) != view.rank())
                throw error("graph.json gives axis_order of " + std::to_string(spec.axis_order->size()) +
                            " entries but '" + where + "' has rank " + std::to_string(view.rank()));
            view.with_axis_order(std::span<const int>(*spec.axis_order));
        }
        if (spec.quantized) {
            if (!is_integer(view.type()))
                throw error("graph.json gives \"scale\" but '" + where + "' stores " +
                            std::string(name_of(view.type())) + ", not an integer type");
            if (spec.quant_axis < 0) {
                view.with_quantization(quantization::per_tensor(spec.scales.front(), spec.zero_points.front()));
            } else {
                if (spec.quant_axis >= view.rank())
                    throw error("graph.json gives quant_axis " + std::to_string(spec.quant_axis) + " but '" + where +
                                "' has rank " + std::to_string(view.rank()));
                if (std::int64_t(spec.scales.size()) != view.shape(spec.quant_axis))
                    throw error("graph.json gives " + std::to_string(spec.scales.size()) +
                                " per-channel scales but dimension " + std::to_string(spec.quant_axis) + " of '" +
                                where + "' has " + std::to_string(view.shape(spec.quant_axis)) + " channels");
                state.scales = spec.scales;
                state.zero_points = spec.zero_points;
                view.with_quantization(quantization::along(spec.quant_axis, state.scales, state.zero_points));
            }
        }
        view.with_name(state.key);
    }

    std::filesystem::path path_;
    run_manifest manifest_;
    std::shared_ptr<const npz_archive> archive_;
    std::uint64_t total_bytes_ = 0;
};

} // namespace numgap::io
