#pragma once
// numgap::io::run_directory: one run's tensors on disk, and loaded_tensor, a
// tensor read from it.
//
// A run is a directory, a single .npz file, a single safetensors file or a
// sharded safetensors set's *.index.json (run directory format version 1, see
// run_manifest.hpp for graph.json; safetensors.hpp and safetensors_run.hpp for
// the safetensors rules):
//  - every *.npy below the directory is a tensor keyed by its path relative to
//    the directory without ".npy", '/'-separated ("block1/conv.npy" -> "block1/conv");
//  - in an .npz, every member "<key>.npy" is the tensor <key> (stored members
//    are mapped in place, deflated ones inflated); other members are ignored;
//  - every key of every *.safetensors file below the directory is a tensor
//    (the same key in two files, or as a key and a <key>.npy, is an error
//    naming both); a file given as the run is read as safetensors when its
//    content starts like one (8-byte length, then '{'), whatever its name; an
//    *.index.json run holds the keys its "weight_map" names, in the shards it
//    names (resolved beneath the index's folder); *.index.json files inside a
//    directory are ignored (all its shards are listed anyway);
//  - graph.json's "tensors" entries add or re-key files: raw headerless files
//    (dtype and shape from graph.json, size must match exactly), .npy files
//    anywhere (a file claimed by an entry is known only under the entry's key),
//    and layout/quantization for any tensor.
//
// Trust: nothing in a run is trusted. Every file a run names - graph.json
// itself, its "file" entries, the .npy files found while listing, symbolic
// links among them - is opened beneath a descriptor of the run directory held
// for the run's lifetime (confined_open.hpp): `..` out of the run, absolute
// paths and links that leave it are refused unless they land in one of
// read_policy::allowed_roots (CLI: --allow-outside-run DIR). Directory
// symbolic links are not entered while listing; FIFOs and other non-regular
// files are no tensors. Deflated .npz members are bounded as npz.hpp and
// read_policy.hpp say; their .npy header is checked against the member's
// declared size before the member is allocated or inflated.
//
// open() fails (numgap::error naming the run and file) on a path that is
// neither a directory nor an .npz, a graph.json syntax or schema error (with
// line and column), a "tensors" entry whose explicitly written "file" does not
// exist, is not a regular file or leads outside the run, a listed .npy link
// that leads outside it, a subdirectory that cannot be listed (named, with the
// reason), and a key claimed both by an entry and by a
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
// A graph.json entry for a safetensors key that names no file of its own
// gives that tensor's layout and quantization (its dtype and shape must match
// the header's).
//
// Not supported: graph.json next to or inside an .npz run or a single-file or
// sharded safetensors run (they have no graph; use a directory), and directory symlinks while listing (an entry may
// still name a file through one that stays inside the run).
// A file truncated by another process while mapped raises SIGBUS on access, as
// with any mapping, unless the truncation guard is installed (the CLI does):
// then loaded_tensor::check_intact() throws an error naming the file.
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

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/quantization.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/io/confined_open.hpp>
#include <numgap/io/file_descriptor.hpp>
#include <numgap/io/mapped_file.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/npz.hpp>
#include <numgap/io/read_policy.hpp>
#include <numgap/io/run_manifest.hpp>
#include <numgap/io/safetensors.hpp>
#include <numgap/io/safetensors_run.hpp>

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
    // Throws numgap::error naming the file when the file the view points into
    // was truncated while mapped (see truncation_guard.hpp): call it after
    // reading the view; compare_runs does.
    void check_intact() const {
        if (state_->mapping != nullptr && state_->buffer == nullptr && state_->aligned.empty())
            state_->mapping->check_intact();
    }

private:
    friend class run_directory;
    // On the heap so that the view's pointers survive moves of loaded_tensor.
    struct state {
        std::string key, file;
        std::shared_ptr<const mapped_file> mapping;
        std::unique_ptr<std::byte[]> buffer; // an inflated .npz member
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
    static run_directory open(const std::filesystem::path& path, const read_policy& policy = {}) {
        run_directory run;
        run.path_ = path;
        run.policy_ = policy;
        std::error_code failure;
        const std::filesystem::file_status status = std::filesystem::status(path, failure);
        if (status.type() == std::filesystem::file_type::not_found)
            throw error("run '" + path.string() + "' does not exist");
        if (failure) throw error("cannot read run '" + path.string() + "': " + failure.message());
        const bool regular = std::filesystem::is_regular_file(status);
        if (std::filesystem::is_directory(status))
            run.open_directory();
        else if (regular && path.extension() == ".npz")
            run.open_archive();
        else if (regular && path.filename().string().ends_with(".index.json"))
            run.open_sharded_safetensors();
        else if (regular && starts_like_safetensors(path))
            run.open_safetensors_file();
        else
            throw error("run '" + path.string() +
                        "' is neither a directory nor an .npz file (nor a safetensors file or *.index.json)");
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
        if (spec == nullptr && safetensors_only_)
            throw error("run '" + path_.string() + "' has no tensor '" + std::string(key) + "' (no such safetensors key)");
        if (spec == nullptr)
            throw error("run '" + path_.string() + "' has no tensor '" + std::string(key) + "' (no " +
                        (archive_ ? "member '" : "file '") + std::string(key) + ".npy'" +
                        (manifest_.has_graph ? " and no \"tensors\" entry in graph.json)" : ")"));
        try {
            if (const safetensors_tensors::location* where = safetensors_.find(spec->key))
                return load_safetensors(*spec, *where);
            return archive_ ? load_member(*spec) : load_file(*spec);
        } catch (const error& failure) {
            throw error("run '" + path_.string() + "', tensor '" + spec->key + "': " + failure.what());
        }
    }

    // The shape of tensor `key` in reference dimension order (axis_order
    // applied), read without reading the data: graph.json's "shape" when it
    // gives one, else a safetensors header's (indexed at open()), else the
    // .npy header (only the header's bytes are read, from the file opened
    // inside the run like load() does, or inflated from the start of a
    // deflated .npz member). nullopt when the run has no such tensor, the
    // shape is not known that cheaply, or the header cannot be read: a shape
    // is a hint for matching here, and load() reports a bad file on its own.
    // Cost: one open and two small reads per .npy file, about 3 us per file
    // with a warm page cache (10^4 files of a run: 30 ms on top of 3 ms for
    // the graph itself, g++ -O2), so callers read headers only when
    // structural matching may run. Thread-safe.
    std::optional<std::vector<std::int64_t>> stored_shape(std::string_view key) const {
        const tensor_spec* spec = manifest_.find_tensor(key);
        if (spec == nullptr) return std::nullopt;
        if (spec->shape) return reference_order_shape(*spec, *spec->shape);
        if (const safetensors_tensors::location* where = safetensors_.find(spec->key))
            return reference_order_shape(*spec, where->entry->shape); // indexed at open()
        try {
            std::optional<npy_header> header;
            if (archive_) {
                const npz_member* member = archive_->find(spec->file);
                if (member == nullptr) return std::nullopt;
                // Deflated members inflate only their header's bytes.
                header = read_npy_header(
                    [&](std::span<std::byte> prefix) { return archive_->member_prefix(*member, prefix); },
                    member->uncompressed_size, archive_->describe(*member), spec->type);
            } else {
                const file_descriptor file = open_confined(*roots_, spec->file, confined_target::file);
                header = read_npy_header(
                    [&](std::span<std::byte> prefix) {
                        const ssize_t got = ::pread(file.get(), prefix.data(), prefix.size(), 0);
                        return std::span<const std::byte>(prefix.data(), got < 0 ? 0 : std::size_t(got));
                    },
                    size_of_open(file), path_.string() + "/" + spec->file, spec->type);
            }
            if (!header) return std::nullopt;
            return reference_order_shape(*spec, header->shape);
        } catch (const error&) {
            return std::nullopt;
        }
    }

private:
    run_directory() = default;

    // The header of .npy data of `total_size` bytes whose first bytes
    // `read_prefix(buffer)` reads into buffer (returning what it read): only
    // the header is read, never the data. nullopt when the bytes do not start
    // with the .npy magic (a raw dump) or the header is larger than
    // npy_header_read_limit.
    template <class ReadPrefix>
    static std::optional<npy_header> read_npy_header(ReadPrefix&& read_prefix, std::uint64_t total_size,
                                                     const std::string& where, std::optional<dtype> declared) {
        std::vector<std::byte> prefix(12);
        const std::uint64_t preamble = npy_preamble_size(read_prefix(std::span<std::byte>(prefix)));
        if (preamble == 0 || preamble > npy_header_read_limit) return std::nullopt;
        prefix.resize(std::size_t(preamble));
        return parse_npy_header(read_prefix(std::span<std::byte>(prefix)), total_size, where, declared);
    }

    void open_directory() {
        std::vector<confined_root> roots;
        roots.push_back(confined_root::open(path_));
        for (const std::filesystem::path& allowed : policy_.allowed_roots) roots.push_back(confined_root::open(allowed));
        roots_ = std::make_shared<const std::vector<confined_root>>(std::move(roots));

        // Discovered .npy files: relative path -> size.
        std::map<std::string, std::uint64_t> npy_files;
        file_descriptor top(::openat(roots_->front().descriptor(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!top.valid())
            throw error("cannot list run '" + path_.string() + "': " + std::generic_category().message(errno));
        list_npy_files(std::move(top), "", npy_files);

        const std::filesystem::path graph = path_ / "graph.json";
        std::optional<file_descriptor> graph_file;
        try {
            graph_file = open_confined(*roots_, "graph.json", confined_target::file);
        } catch (const confined_open_error& failure) {
            if (failure.reason_kind() != confined_open_error::kind::not_found)
                throw error("cannot read '" + graph.string() + "': " + failure.what());
        }
        if (graph_file) {
            const mapped_file text = mapped_file::map(std::move(*graph_file), graph);
            manifest_ = parse_run_manifest(
                std::string_view(reinterpret_cast<const char*>(text.data()), text.size()), graph.string());
            text.check_intact();
        }
        std::map<std::string, std::string> claimed; // relative file -> key of the entry
        std::vector<std::string> not_dumped;         // keys whose default-named file is absent
        for (const tensor_spec& spec : manifest_.tensors) {
            file_descriptor file;
            try {
                file = open_confined(*roots_, spec.file, confined_target::file);
            } catch (const confined_open_error& failure) {
                using kind = confined_open_error::kind;
                // An entry that only adds layout or quantization keeps the default
                // file name; that tensor may simply not have been dumped, which the
                // compare layer reports as `missing` rather than failing the run.
                if (failure.reason_kind() == kind::not_found && spec.file == spec.key + ".npy") {
                    not_dumped.push_back(spec.key);
                    continue;
                }
                throw error(graph.string() + ": tensor '" + spec.key + "': file '" + spec.file + "' " +
                            refusal(failure) + " in run '" + path_.string() + "'");
            }
            const std::string relative =
                (path_ / spec.file).lexically_normal().lexically_relative(path_.lexically_normal()).generic_string();
            claimed.emplace(relative.empty() ? spec.file : relative, spec.key);
            total_bytes_ += size_of_open(file);
        }
        // manifest_.tensors stays sorted: erasing keeps the order. The erased
        // entries may still describe tensors held in safetensors files.
        std::vector<tensor_spec> overlays;
        std::erase_if(manifest_.tensors, [&](tensor_spec& spec) {
            if (!std::binary_search(not_dumped.begin(), not_dumped.end(), spec.key)) return false;
            overlays.push_back(std::move(spec));
            return true;
        });
        add_listed_safetensors(npy_files);
        std::vector<tensor_spec> discovered = safetensors_specs(std::move(overlays));
        for (const auto& [relative, size] : npy_files) {
            if (claimed.count(relative) != 0 || relative.ends_with(".safetensors")) continue;
            const std::string key = relative.substr(0, relative.size() - 4);
            if (const tensor_spec* spec = manifest_.find_tensor(key))
                throw error(graph.string() + ": tensor '" + key + "' is mapped to file '" + spec->file +
                            "', but '" + relative + "' also exists in run '" + path_.string() +
                            "'; rename one of them");
            if (const safetensors_tensors::location* where = safetensors_.find(key))
                throw error("run '" + path_.string() + "': tensor '" + key + "' is both the file '" + relative +
                            "' and a key of '" + where->source->name + "'; rename one of them");
            tensor_spec spec;
            spec.key = key;
            spec.file = relative;
            discovered.push_back(std::move(spec));
            total_bytes_ += size;
        }
        merge(std::move(discovered));
    }

    void open_archive() {
        archive_ = std::make_shared<const npz_archive>(npz_archive::open(path_, policy_.max_inflated_bytes));
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

    // A file the user named as the run is opened as given (as an .npz is).
    static file_descriptor open_plain(const std::filesystem::path& path) {
        file_descriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
        if (!file.valid())
            throw error("cannot open run '" + path.string() + "': " + std::generic_category().message(errno));
        return file;
    }

    static bool starts_like_safetensors(const std::filesystem::path& path) {
        const file_descriptor file = open_plain(path);
        std::byte head[10];
        const ::ssize_t got = ::pread(file.get(), head, sizeof head, 0);
        return got == ::ssize_t(sizeof head) && has_safetensors_signature(head);
    }

    void open_safetensors_file() {
        safetensors_only_ = true;
        safetensors_.add(path_.string(), open_plain(path_), path_);
        total_bytes_ = safetensors_.total_bytes();
        merge(safetensors_specs({}));
    }

    // A sharded set: the index names its shards, resolved beneath the index's
    // folder (and the allowed roots) like any file a run names.
    void open_sharded_safetensors() {
        safetensors_only_ = true;
        const std::filesystem::path folder = path_.has_parent_path() ? path_.parent_path() : ".";
        std::vector<confined_root> roots;
        roots.push_back(confined_root::open(folder));
        for (const std::filesystem::path& allowed : policy_.allowed_roots) roots.push_back(confined_root::open(allowed));
        roots_ = std::make_shared<const std::vector<confined_root>>(std::move(roots));
        const mapped_file text = mapped_file::map(open_plain(path_), path_);
        const auto shards = parse_safetensors_weight_map(
            std::string_view(reinterpret_cast<const char*>(text.data()), text.size()), path_.string());
        text.check_intact();
        for (const auto& [shard, keys] : shards) {
            file_descriptor file;
            try {
                file = open_confined(*roots_, shard, confined_target::file);
            } catch (const confined_open_error& failure) {
                throw error("'" + path_.string() + "': shard '" + shard + "' " + refusal(failure));
            }
            safetensors_.add(shard, std::move(file), folder / shard, keys);
        }
        total_bytes_ = safetensors_.total_bytes();
        merge(safetensors_specs({}));
    }

    // Indexes the *.safetensors files the listing found (and removes them from it).
    void add_listed_safetensors(std::map<std::string, std::uint64_t>& listed) {
        for (auto entry = listed.begin(); entry != listed.end();) {
            if (!entry->first.ends_with(".safetensors")) {
                ++entry;
                continue;
            }
            file_descriptor file;
            try {
                file = open_confined(*roots_, entry->first, confined_target::file);
            } catch (const confined_open_error& failure) {
                throw error("run '" + path_.string() + "': '" + entry->first + "' " + refusal(failure));
            }
            try {
                safetensors_.add(entry->first, std::move(file), path_ / entry->first);
            } catch (const error& failure) {
                throw error("run '" + path_.string() + "': " + failure.what());
            }
            entry = listed.erase(entry);
        }
        total_bytes_ += safetensors_.total_bytes();
    }

    // One spec per safetensors key; a graph.json entry for the key that names
    // no file of its own (`overlays`, sorted) gives its layout, quantization,
    // dtype and shape, checked against the header at load.
    std::vector<tensor_spec> safetensors_specs(std::vector<tensor_spec> overlays) const {
        std::vector<tensor_spec> specs;
        for (std::string& key : safetensors_.keys()) {
            const safetensors_tensors::location& where = *safetensors_.find(key);
            if (const tensor_spec* claimed = manifest_.find_tensor(key))
                throw error("graph.json: tensor '" + key + "' is mapped to file '" + claimed->file + "', but '" +
                            where.source->name + "' also holds key '" + key + "' in run '" + path_.string() +
                            "'; rename one of them");
            const auto overlay = std::lower_bound(overlays.begin(), overlays.end(), key,
                                                  [](const tensor_spec& spec, const std::string& k) { return spec.key < k; });
            tensor_spec spec;
            if (overlay != overlays.end() && overlay->key == key) spec = std::move(*overlay);
            spec.key = std::move(key);
            spec.file = where.source->name;
            specs.push_back(std::move(spec));
        }
        return specs;
    }

    // What the run's entry does wrong, as the end of "file 'x' ...".
    static std::string refusal(const confined_open_error& failure) {
        switch (failure.reason_kind()) {
        case confined_open_error::kind::not_found: return "does not exist";
        case confined_open_error::kind::not_regular: return "is not a regular file";
        case confined_open_error::kind::outside:
            return std::string("is refused: ") + failure.what() +
                   " (a run may only name files inside it; to read dumps kept elsewhere, allow their "
                   "directory explicitly: read_policy::allowed_roots, or --allow-outside-run DIR in the CLI)";
        case confined_open_error::kind::os_failure: break;
        }
        return std::string("cannot be opened: ") + failure.what();
    }

    static std::uint64_t size_of_open(const file_descriptor& file) {
        struct stat status {};
        return ::fstat(file.get(), &status) == 0 ? std::uint64_t(status.st_size) : 0;
    }

    // Adds every *.npy below `directory` (whose path relative to the run is
    // `prefix`) to `found`. Directories are opened relative to their parent
    // with O_NOFOLLOW, so a directory symbolic link is never entered and a
    // rename during the listing cannot lead it outside the run; a .npy
    // symbolic link is resolved with open_confined and refused if it leaves.
    void list_npy_files(file_descriptor directory, const std::string& prefix,
                        std::map<std::string, std::uint64_t>& found) const {
        const std::string shown = prefix.empty() ? "." : prefix.substr(0, prefix.size() - 1);
        const auto fail = [&](int code) {
            throw error("cannot list '" + shown + "' in run '" + path_.string() +
                        "': " + std::generic_category().message(code));
        };
        const int descriptor = directory.get();
        DIR* listing = ::fdopendir(descriptor);
        if (listing == nullptr) fail(errno);
        (void)directory.release(); // closedir closes it now
        const std::unique_ptr<DIR, int (*)(DIR*)> owner(listing, ::closedir);
        for (;;) {
            errno = 0;
            const dirent* entry = ::readdir(listing);
            if (entry == nullptr) {
                if (errno != 0) fail(errno);
                break;
            }
            const std::string_view name = entry->d_name;
            if (name == "." || name == "..") continue;
            const bool named_npy = (name.size() > 4 && name.substr(name.size() - 4) == ".npy") ||
                                   (name.size() > 12 && name.ends_with(".safetensors"));
            unsigned char type = entry->d_type;
            if (type != DT_UNKNOWN && type != DT_DIR && !named_npy) continue;
            struct stat status {};
            // The size of a regular .npy, and the type where the file system does not report it.
            if (type == DT_UNKNOWN || type == DT_REG) {
                if (::fstatat(descriptor, entry->d_name, &status, AT_SYMLINK_NOFOLLOW) != 0) continue; // gone
                type = S_ISDIR(status.st_mode) ? DT_DIR : S_ISREG(status.st_mode) ? DT_REG
                                                       : S_ISLNK(status.st_mode) ? DT_LNK : DT_UNKNOWN;
            }
            const std::string relative = prefix + std::string(name);
            if (type == DT_DIR) {
                file_descriptor child(::openat(descriptor, entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (!child.valid()) {
                    if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR) continue; // gone or replaced
                    throw error("cannot list '" + relative + "' in run '" + path_.string() +
                                "': " + std::generic_category().message(errno));
                }
                list_npy_files(std::move(child), relative + "/", found);
                continue;
            }
            if (!named_npy) continue;
            if (type == DT_REG) {
                found.emplace(relative, std::uint64_t(status.st_size));
            } else if (type == DT_LNK) {
                try {
                    found.emplace(relative, size_of_open(open_confined(*roots_, relative, confined_target::file)));
                } catch (const confined_open_error& failure) {
                    using kind = confined_open_error::kind;
                    // A dangling link, or one to a directory, is no tensor (as without links).
                    if (failure.reason_kind() == kind::not_found || failure.reason_kind() == kind::not_regular)
                        continue;
                    throw error("run '" + path_.string() + "': '" + relative + "' " + refusal(failure));
                }
            }
        }
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
        file_descriptor descriptor;
        try {
            descriptor = open_confined(*roots_, spec.file, confined_target::file);
        } catch (const confined_open_error& failure) {
            throw error("file '" + spec.file + "' " + refusal(failure));
        }
        // Populating is ~20% faster when the tensor is read right away (see mapped_file.hpp),
        // but for a file near the size of RAM it would read everything once more than the
        // comparison does; above populate_limit pages fault in lazily instead.
        constexpr std::uintmax_t populate_limit = std::uintmax_t(1) << 30;
        const std::uint64_t size = size_of_open(descriptor);
        const map_hint hint = size <= populate_limit ? map_hint::populate : map_hint::sequential;
        state.mapping = std::make_shared<const mapped_file>(mapped_file::map(std::move(descriptor), file, hint));
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
        if (member->method != 0) {
            // Header, dtype and shape against the declared size before the
            // member is allocated and inflated: a bomb or a mismatch costs
            // the first bytes of its stream, not its claimed size.
            std::vector<std::byte> prefix(12);
            const std::uint64_t preamble = npy_preamble_size(archive_->member_prefix(*member, prefix));
            prefix.resize(std::size_t(std::clamp<std::uint64_t>(preamble, prefix.size(), npy_header_read_limit)));
            const std::span<const std::byte> head = archive_->member_prefix(*member, prefix);
            const npy_header header = parse_npy_header(head, member->uncompressed_size, where, spec.type);
            check_declared_shape(spec, header.shape, where);
        }
        const std::span<const std::byte> bytes = archive_->member_bytes(*member, state.buffer);
        if (state.buffer != nullptr) archive_->mapping()->check_intact(); // what was inflated was the file's
        state.view = npy_view(bytes, parse_npy_header(bytes, where, spec.type));
        finish(spec, state, where);
        return tensor;
    }

    loaded_tensor load_safetensors(const tensor_spec& spec, const safetensors_tensors::location& where) const {
        loaded_tensor tensor;
        loaded_tensor::state& state = *tensor.state_;
        state.key = spec.key;
        state.file = where.source->name;
        state.mapping = where.source->mapping;
        state.view = safetensors_view(state.mapping->bytes(), *where.entry, where.source->name);
        if (spec.type && *spec.type != state.view.type())
            throw error("graph.json gives dtype " + std::string(name_of(*spec.type)) + " but '" + where.source->name +
                        "' stores key '" + spec.key + "' as " + where.entry->dtype_name);
        finish(spec, state, where.source->name + "' key '" + spec.key);
        return tensor;
    }

    // NumPy writes version 1.0 headers (at most 65535 bytes) unless a structured
    // dtype needs more, and numgap reads no structured dtypes.
    static constexpr std::size_t npy_header_read_limit = 10 + 65535;

    static void check_declared_shape(const tensor_spec& spec, std::span<const std::int64_t> stored,
                                     const std::string& where) {
        if (spec.shape && !std::equal(spec.shape->begin(), spec.shape->end(), stored.begin(), stored.end()))
            throw error("graph.json gives shape " + detail::shape_text(*spec.shape) + " but '" + where +
                        "' stores shape " + detail::shape_text(stored));
    }

    // Shape check, alignment, axis order, quantization and name: common to all sources.
    static void finish(const tensor_spec& spec, loaded_tensor::state& state, const std::string& where) {
        tensor_view& view = state.view;
        check_declared_shape(spec, view.shape(), where);
        const std::size_t item = size_of(view.type());
        if (reinterpret_cast<std::uintptr_t>(view.data()) % item != 0) {
            // Typed loads from a misaligned address are undefined behaviour; copy once.
            std::int64_t extent = view.size() == 0 ? 0 : 1;
            for (int d = 0; d < view.rank() && extent != 0; ++d) extent += (view.shape(d) - 1) * view.stride(d);
            state.aligned.resize(std::size_t(extent) * item);
            if (extent != 0) std::memcpy(state.aligned.data(), view.data(), state.aligned.size());
            if (state.mapping != nullptr && state.buffer == nullptr) state.mapping->check_intact(); // copied from the file
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
    read_policy policy_;
    // The run directory (first) and the allowed roots, held open: every file is opened beneath them.
    std::shared_ptr<const std::vector<confined_root>> roots_;
    run_manifest manifest_;
    std::shared_ptr<const npz_archive> archive_;
    safetensors_tensors safetensors_;
    bool safetensors_only_ = false; // a single file or a sharded set: no .npy keys
    std::uint64_t total_bytes_ = 0;
};

} // namespace numgap::io
