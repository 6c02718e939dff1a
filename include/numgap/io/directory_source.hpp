#pragma once
// numgap::io::directory_source: a run directory (run directory format version
// 1; graph.json's rules in run_manifest.hpp):
//  - every *.npy below the directory is a tensor keyed by its path relative to
//    the directory without ".npy", '/'-separated ("block1/conv.npy" -> "block1/conv");
//  - every key of every *.safetensors file below it is a tensor (the same key
//    in two files, or as a key and a <key>.npy, is an error naming both);
//    *.index.json files inside a directory are ignored (their shards are
//    listed anyway);
//  - graph.json's "tensors" entries add or re-key files: raw headerless files
//    (dtype and shape from graph.json, size must match exactly), .npy files
//    anywhere (a file claimed by an entry is known only under the entry's
//    key), and layout/quantization for any tensor; an entry for a
//    safetensors key that names no file of its own gives that tensor's layout
//    and quantization (its dtype and shape must match the header's);
//  - graph.json's "shards" entries claim their files, or keys of safetensors
//    files (per-rank dumps that repeat the same keys): such a file is indexed
//    on its own, its keys are the run's tensors only through those entries,
//    and a key it lacks is an error when the run is opened.
// A file is read as .npy when it starts with the .npy magic, otherwise as raw.
//
// Trust: every file - graph.json, its "file" entries, the files found while
// listing, symbolic links among them - is opened beneath a descriptor of the
// run directory held for the run's lifetime (confined_open.hpp): `..` out of
// the run, absolute paths and links that leave it are refused unless they
// land in one of read_policy::allowed_roots. Directory symbolic links are not
// entered while listing; FIFOs and other non-regular files are no tensors.
//
// Opening fails on a graph.json syntax or schema error, a "tensors" entry
// whose explicitly written "file" does not exist, is not a regular file or
// leads outside the run, a listed .npy link that leads outside it, a
// subdirectory that cannot be listed, and a key claimed both by an entry and
// by a different <key>.npy file. An entry that leaves "file" at its default
// "<key>.npy" (it only gives layout or quantization) when that file is absent
// is not an error: the tensor was not dumped and the compare layer reports it
// as missing.
//
// load() maps the file (MAP_POPULATE up to 1 GiB: the whole tensor is read
// next) - no copy - except files up to small_file_limit (8 KiB), which one
// pread copies into a buffer: cheaper than a mapping for tiny tensors. Complexity: open is O(files + graph.json); load
// O(1).
#include <algorithm>
#include <cerrno>
#include <cstdint>
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

#include <numgap/core/error.hpp>
#include <numgap/io/confined_open.hpp>
#include <numgap/io/loaded_tensor.hpp>
#include <numgap/io/mapped_file.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/run_manifest.hpp>
#include <numgap/io/run_source.hpp>
#include <numgap/io/safetensors_run.hpp>
#include <numgap/io/sharded_tensor.hpp>
#include <numgap/io/safetensors_source.hpp>

namespace numgap::io {

class directory_source final : public run_source {
public:
    static opened_run_source open(const std::filesystem::path& path, const read_policy& policy) {
        auto source = std::shared_ptr<directory_source>(new directory_source());
        source->path_ = path;
        source->roots_ = detail::run_roots(path, policy);
        opened_run_source opened;
        source->read(opened);
        opened.source = std::move(source);
        return opened;
    }

    loaded_tensor load(const tensor_spec& spec) const override {
        if (!spec.shards.empty())
            return detail::load_sharded_tensor(spec,
                                               [&](const tensor_spec& shard, const tensor_spec::shard_file& entry) {
                                                   if (entry.key.empty()) return load_file(shard);
                                                   return detail::load_safetensors_tensor(shard, find_shard_key(entry),
                                                                                          entry.key);
                                               });
        if (const std::optional<safetensors_tensors::location> where = safetensors_.find(spec.key, spec.source_slot))
            return detail::load_safetensors_tensor(spec, *where);
        return load_file(spec);
    }

    // The tensor in the file spec.file names (no safetensors key lookup).
    loaded_tensor load_file(const tensor_spec& spec) const {
        std::unique_ptr<detail::loaded_tensor_state> state = detail::start_loading(spec, spec.file);
        const std::filesystem::path file = path_ / spec.file;
        file_descriptor descriptor = detail::open_tensor_file(*roots_, spec, file.string());
        // Populating is ~20% faster when the tensor is read right away (see mapped_file.hpp),
        // but for a file near the size of RAM it would read everything once more than the
        // comparison does; above populate_limit pages fault in lazily instead.
        constexpr std::uintmax_t populate_limit = std::uintmax_t(1) << 30;
        const std::uint64_t size = detail::size_of_open(descriptor);
        std::span<const std::byte> bytes;
        if (size <= small_file_limit) {
            // A small file is read into a buffer: mapping and unmapping it (two
            // system calls, a page fault and a VMA) costs more than copying a
            // few KiB, and for a million tiny tensors those costs dominate.
            bytes = read_small_file(descriptor, std::size_t(size), *state, file.string());
        } else {
            const map_hint hint = size <= populate_limit ? map_hint::populate : map_hint::sequential;
            state->mapping = std::make_shared<const mapped_file>(mapped_file::map(std::move(descriptor), file, hint));
            bytes = state->mapping->bytes();
        }
        if (has_npy_magic(bytes)) {
            state->view = npy_view(bytes, parse_npy_header(bytes, file.string(), spec.type));
        } else {
            state->view = detail::raw_tensor_view(bytes, spec, file.string());
        }
        detail::finish_loaded_tensor(spec, *state, file.string());
        return loaded_tensor(std::move(state));
    }

    // Only the .npy header's bytes are read, from the file opened inside the
    // run like load() does (about 3 us per file with a warm page cache).
    std::optional<std::vector<std::int64_t>> stored_shape(const tensor_spec& spec) const override {
        if (!spec.shards.empty())
            return detail::sharded_shape(spec, [&](const tensor_spec& shard, const tensor_spec::shard_file& entry) {
                if (entry.key.empty()) return stored_shape(shard);
                const safetensors_tensors::location where = find_shard_key(entry);
                return std::optional(std::vector<std::int64_t>(where.shape.begin(), where.shape.end()));
            });
        if (const std::optional<safetensors_tensors::location> where = safetensors_.find(spec.key, spec.source_slot))
            return std::vector<std::int64_t>(where->shape.begin(), where->shape.end());
        try {
            const file_descriptor file = open_confined(*roots_, spec.file, confined_target::file);
            const std::optional<npy_header> header = detail::read_npy_header(
                [&](std::span<std::byte> prefix) {
                    const ssize_t got = ::pread(file.get(), prefix.data(), prefix.size(), 0);
                    return std::span<const std::byte>(prefix.data(), got < 0 ? 0 : std::size_t(got));
                },
                detail::size_of_open(file), path_.string() + "/" + spec.file, spec.type);
            if (!header) return std::nullopt;
            return header->shape;
        } catch (const error&) {
            return std::nullopt;
        }
    }

    std::string missing_reason(std::string_view key, const run_manifest& manifest) const override {
        return "no file '" + std::string(key) + ".npy'" +
               (manifest.has_graph ? " and no \"tensors\" entry in graph.json" : "");
    }

    // The keys of the run's *.safetensors files (run_source.hpp).
    std::vector<std::uint32_t> sorted_container_keys() const override { return safetensors_.sorted_positions(); }
    std::string_view container_key(std::uint32_t slot) const noexcept override { return safetensors_.key_at(slot); }
    std::optional<std::uint32_t> find_container_key(std::string_view key) const override {
        return safetensors_.position_of(key);
    }
    void release_cached_pages() const noexcept override {
        safetensors_.release_pages();
        for (const auto& [file, keys] : shard_containers_) keys.release_pages();
    }

    // Files up to this size are read into a buffer rather than mapped.
    static constexpr std::uint64_t small_file_limit = 8 * 1024;

private:
    directory_source() = default;

    // Where a shard stored as a key of a safetensors file is: in its
    // container, indexed when the run was opened (which also checked the key).
    safetensors_tensors::location find_shard_key(const tensor_spec::shard_file& shard) const {
        const auto name = container_names_.find(detail::run_relative(path_, shard.file));
        const auto container =
            name == container_names_.end() ? shard_containers_.end() : shard_containers_.find(name->second);
        std::optional<safetensors_tensors::location> where;
        if (container != shard_containers_.end()) where = container->second.find(shard.key);
        // Only a spec made by hand, not the run's own, can get here.
        if (!where)
            throw error(error_kind::usage,
                        detail::shard_label(shard) + " is not a shard the run '" + path_.string() +
                            "' found when it was opened",
                        error_location::at_item(shard.file, shard.key));
        return *where;
    }

    // Reads a whole small file into state.buffer (aligned like new[]: the
    // .npy data offset is a multiple of 64, so typed loads stay aligned). A
    // file that shrank since its size was taken yields the bytes there are,
    // which the header check then reports as truncated.
    static std::span<const std::byte> read_small_file(const file_descriptor& descriptor, std::size_t size,
                                                      detail::loaded_tensor_state& state, const std::string& shown) {
        state.buffer = std::make_unique<std::byte[]>(size == 0 ? 1 : size);
        std::size_t done = 0;
        while (done < size) {
            const ssize_t got = ::pread(descriptor.get(), state.buffer.get() + done, size - done, off_t(done));
            if (got == 0) break;
            if (got < 0) {
                if (errno == EINTR) continue;
                throw error(error_kind::io, "cannot read '" + shown + "': " + std::generic_category().message(errno),
                            error_location::in_file(shown));
            }
            done += std::size_t(got);
        }
        return {state.buffer.get(), done};
    }

    [[noreturn]] void fail_listing(const std::string& shown, int code) const {
        throw error(error_kind::io,
                    "cannot list '" + shown + "' in run '" + path_.string() + "': " + std::generic_category().message(code),
                    error_location::at_item(path_.string(), shown));
    }

    void read(opened_run_source& opened) {
        run_manifest& manifest = opened.manifest;
        // Discovered .npy and .safetensors files: relative path -> size.
        std::map<std::string, std::uint64_t> listed;
        file_descriptor top(::openat(roots_->front().descriptor(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!top.valid()) fail_listing(".", errno);
        list_files(std::move(top), "", listed);

        const std::string graph = (path_ / "graph.json").string();
        std::optional<file_descriptor> graph_file;
        try {
            graph_file = open_confined(*roots_, "graph.json", confined_target::file);
        } catch (const confined_open_error& failure) {
            if (failure.reason_kind() != confined_open_error::kind::not_found)
                throw error(error_kind::io, "cannot read '" + graph + "': " + failure.what(),
                            error_location::in_file(graph));
        }
        if (graph_file) {
            const mapped_file text = mapped_file::map(std::move(*graph_file), graph);
            manifest = parse_run_manifest(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()), graph);
            text.check_intact();
        }
        std::map<std::string, std::string> claimed; // relative file -> key of the entry
        std::vector<std::string> not_dumped;         // keys whose default-named file is absent
        const auto claim = [&](const tensor_spec& spec) {
            const auto [where, inserted] = claimed.emplace(detail::run_relative(path_, spec.file), spec.key);
            // Keys are sorted, so a shard may have claimed the file first; the
            // reverse order is refused by claim_shard_files.
            if (!inserted && !manifest.find_tensor(where->second)->shards.empty())
                throw error(error_kind::schema,
                            graph + ": tensor '" + spec.key + "': file '" + spec.file +
                                "' is already a shard file of tensor '" + where->second + "'",
                            error_location::at_item(graph, spec.key));
        };
        // A shard named by a key of a safetensors file: the file is indexed
        // once, on its own (per-rank files repeat their keys), and the key
        // must be there and be the shard of one entry only (as a shard file
        // is). Files are told apart by identity, not spelling: "./r0.safetensors"
        // or a link to it is the same container, and no other name of it
        // stays among the run's own files.
        std::map<std::pair<dev_t, ino_t>, std::string> container_identity;       // -> the container's name
        std::map<std::pair<std::string, std::string>, std::string> claimed_keys; // (container, key) -> tensor
        const auto claim_key = [&](const tensor_spec& spec, const tensor_spec::shard_file& shard) {
            const auto refused = [&](error_kind kind, const std::string& reason) {
                return error(kind, graph + ": tensor '" + spec.key + "': " + detail::shard_label(shard) + ": " + reason,
                             error_location::at_item(graph, spec.key));
            };
            const std::string spelled = detail::run_relative(path_, shard.file);
            auto name = container_names_.find(spelled);
            if (name == container_names_.end()) {
                file_descriptor file;
                try {
                    file = open_confined(*roots_, shard.file, confined_target::file);
                } catch (const confined_open_error& failure) {
                    throw refused(error_kind::io,
                                  "the file " + detail::refusal(failure) + " in run '" + path_.string() + "'");
                }
                struct stat identity {};
                if (::fstat(file.get(), &identity) != 0)
                    throw refused(error_kind::io, "cannot stat the file: " + std::generic_category().message(errno));
                const auto [known, is_new] =
                    container_identity.try_emplace({identity.st_dev, identity.st_ino}, spelled);
                if (is_new) {
                    safetensors_tensors& keys = shard_containers_[spelled];
                    try {
                        keys.add(spelled, std::move(file), path_ / spelled);
                    } catch (const error& failure) {
                        throw error(failure.kind(), graph + ": tensor '" + spec.key + "': " + failure.what(),
                                    failure.where());
                    }
                    keys.shrink_to_fit();
                    opened.total_bytes += keys.total_bytes();
                }
                name = container_names_.emplace(spelled, known->second).first;
            }
            if (!shard_containers_.at(name->second).find(shard.key))
                throw refused(error_kind::schema, "the file has no such key");
            const auto [owner, inserted] = claimed_keys.try_emplace({name->second, shard.key}, spec.key);
            if (!inserted)
                throw refused(error_kind::schema, owner->second == spec.key
                                                      ? std::string("named twice (the same file and key)")
                                                      : "already a shard of tensor '" + owner->second + "'");
        };
        for (const tensor_spec& spec : manifest.tensors) {
            if (!spec.shards.empty()) {
                detail::claim_shard_files(*roots_, path_, spec, graph, claimed, opened.total_bytes,
                                          [&](const tensor_spec::shard_file& shard) { claim_key(spec, shard); });
                continue;
            }
            // A file the listing found at exactly this path is a regular file
            // inside the run (the listing enters no directory link) and its
            // size is known: no second open here (10^5 of them for a run of
            // 10^5 tensors). Loading opens it confined again, as it always does.
            if (const auto found = listed.find(spec.file); found != listed.end()) {
                claim(spec);
                opened.total_bytes += found->second;
                continue;
            }
            file_descriptor file;
            try {
                file = open_confined(*roots_, spec.file, confined_target::file);
            } catch (const confined_open_error& failure) {
                // An entry that only adds layout or quantization keeps the default
                // file name; that tensor may simply not have been dumped, which the
                // compare layer reports as `missing` rather than failing the run.
                if (failure.reason_kind() == confined_open_error::kind::not_found && spec.file == spec.key + ".npy") {
                    not_dumped.push_back(spec.key);
                    continue;
                }
                throw error(error_kind::io,
                            graph + ": tensor '" + spec.key + "': file '" + spec.file + "' " +
                                detail::refusal(failure) + " in run '" + path_.string() + "'",
                            error_location::at_item(graph, spec.key));
            }
            claim(spec);
            opened.total_bytes += detail::size_of_open(file);
        }
        // manifest.tensors stays sorted: erasing keeps the order. The erased
        // entries may still describe tensors held in safetensors files.
        std::vector<tensor_spec> overlays;
        std::erase_if(manifest.tensors, [&](tensor_spec& spec) {
            if (!std::binary_search(not_dumped.begin(), not_dumped.end(), spec.key)) return false;
            overlays.push_back(std::move(spec));
            return true;
        });
        // The containers of keyed shards are not files of tensors of their
        // own, nor part of the run's keys.
        for (const auto& [spelled, name] : container_names_) {
            if (const auto plain = claimed.find(spelled); plain != claimed.end())
                throw error(error_kind::schema,
                            graph + ": tensor '" + plain->second + "': file '" + spelled +
                                "' is also a safetensors file holding shards by key",
                            error_location::at_item(graph, plain->second));
            listed.erase(spelled);
        }
        add_listed_safetensors(listed, container_identity);
        opened.total_bytes += safetensors_.total_bytes();
        std::vector<tensor_spec> discovered =
            detail::safetensors_specs(safetensors_, manifest, std::move(overlays), path_.string());
        for (const auto& [relative, size] : listed) {
            if (claimed.count(relative) != 0) continue;
            const std::string key = relative.substr(0, relative.size() - 4);
            if (const tensor_spec* spec = manifest.find_tensor(key))
                throw error(error_kind::schema,
                            graph + ": tensor '" + key + "' is " +
                                (spec->shards.empty() ? "mapped to file '" + spec->file + "'" : std::string("stored as shards")) +
                                ", but '" + relative +
                                "' also exists in run '" + path_.string() + "'; rename one of them",
                            error_location::at_item(graph, key));
            if (const std::optional<safetensors_tensors::location> where = safetensors_.find(key))
                throw error(error_kind::schema,
                            "run '" + path_.string() + "': tensor '" + key + "' is both the file '" + relative +
                                "' and a key of '" + where->source->name + "'; rename one of them",
                            error_location::at_item(path_.string(), key));
            tensor_spec spec;
            spec.key = key;
            spec.file = relative;
            discovered.push_back(std::move(spec));
            opened.total_bytes += size;
        }
        detail::merge_specs(manifest, std::move(discovered));
    }

    // Adds every *.npy and *.safetensors below `directory` (whose path
    // relative to the run is `prefix`) to `found`. Directories are opened
    // relative to their parent with O_NOFOLLOW, so a directory symbolic link
    // is never entered and a rename during the listing cannot lead it outside
    // the run; a file symbolic link is resolved with open_confined and
    // refused if it leaves.
    void list_files(file_descriptor directory, const std::string& prefix, std::map<std::string, std::uint64_t>& found) const {
        const std::string shown = prefix.empty() ? "." : prefix.substr(0, prefix.size() - 1);
        const int descriptor = directory.get();
        DIR* listing = ::fdopendir(descriptor);
        if (listing == nullptr) fail_listing(shown, errno);
        (void)directory.release(); // closedir closes it now
        const std::unique_ptr<DIR, int (*)(DIR*)> owner(listing, ::closedir);
        for (;;) {
            errno = 0;
            const dirent* entry = ::readdir(listing);
            if (entry == nullptr) {
                if (errno != 0) fail_listing(shown, errno);
                break;
            }
            const std::string_view name = entry->d_name;
            if (name == "." || name == "..") continue;
            const bool named_tensor_file = (name.size() > 4 && name.substr(name.size() - 4) == ".npy") ||
                                           (name.size() > 12 && name.ends_with(".safetensors"));
            unsigned char type = entry->d_type;
            if (type != DT_UNKNOWN && type != DT_DIR && !named_tensor_file) continue;
            struct stat status {};
            // The size of a regular file, and the type where the file system does not report it.
            if (type == DT_UNKNOWN || type == DT_REG) {
                if (::fstatat(descriptor, entry->d_name, &status, AT_SYMLINK_NOFOLLOW) != 0) continue; // gone
                type = S_ISDIR(status.st_mode)   ? DT_DIR
                       : S_ISREG(status.st_mode) ? DT_REG
                       : S_ISLNK(status.st_mode) ? DT_LNK
                                                 : DT_UNKNOWN;
            }
            const std::string relative = prefix + std::string(name);
            if (type == DT_DIR) {
                file_descriptor child(::openat(descriptor, entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (!child.valid()) {
                    if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR) continue; // gone or replaced
                    fail_listing(relative, errno);
                }
                list_files(std::move(child), relative + "/", found);
                continue;
            }
            if (!named_tensor_file) continue;
            if (type == DT_REG) {
                found.emplace(relative, std::uint64_t(status.st_size));
            } else if (type == DT_LNK) {
                try {
                    found.emplace(relative, detail::size_of_open(open_confined(*roots_, relative, confined_target::file)));
                } catch (const confined_open_error& failure) {
                    using kind = confined_open_error::kind;
                    // A dangling link, or one to a directory, is no tensor (as without links).
                    if (failure.reason_kind() == kind::not_found || failure.reason_kind() == kind::not_regular)
                        continue;
                    throw error(error_kind::io, "run '" + path_.string() + "': '" + relative + "' " + detail::refusal(failure),
                                error_location::at_item(path_.string(), relative));
                }
            }
        }
    }

    // Indexes the *.safetensors files the listing found (and removes them from it).
    // `containers`: files already indexed as shard containers (by identity),
    // skipped here under any other name.
    void add_listed_safetensors(std::map<std::string, std::uint64_t>& listed,
                                const std::map<std::pair<dev_t, ino_t>, std::string>& containers) {
        for (auto entry = listed.begin(); entry != listed.end();) {
            if (!entry->first.ends_with(".safetensors")) {
                ++entry;
                continue;
            }
            file_descriptor file;
            try {
                file = open_confined(*roots_, entry->first, confined_target::file);
            } catch (const confined_open_error& failure) {
                throw error(error_kind::io, "run '" + path_.string() + "': '" + entry->first + "' " + detail::refusal(failure),
                            error_location::at_item(path_.string(), entry->first));
            }
            struct stat identity {};
            if (!containers.empty() && ::fstat(file.get(), &identity) == 0 &&
                containers.count({identity.st_dev, identity.st_ino}) != 0) {
                entry = listed.erase(entry);
                continue;
            }
            try {
                safetensors_.add(entry->first, std::move(file), path_ / entry->first);
            } catch (const error& failure) {
                throw error(failure.kind(), "run '" + path_.string() + "': " + failure.what(), failure.where());
            }
            entry = listed.erase(entry);
        }
        safetensors_.shrink_to_fit();
    }

    // Safetensors files holding shards by key (graph.json "shards" entries
    // with "key"), each indexed on its own: name (the first spelling met,
    // relative to the run) -> its keys; and every spelling -> that name.
    std::map<std::string, safetensors_tensors> shard_containers_;
    std::map<std::string, std::string> container_names_;
    std::filesystem::path path_;
    // The run directory (first) and the allowed roots, held open: every file is opened beneath them.
    std::shared_ptr<const std::vector<confined_root>> roots_;
    safetensors_tensors safetensors_;
};

} // namespace numgap::io
