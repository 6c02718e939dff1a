#pragma once
// numgap::io::run_source: one kind of run container (a directory of .npy and
// raw files, an .npz, safetensors files, a Polygraphy JSON, ...) behind the
// interface run_directory reads every run through. open_run_source.hpp detects
// which kind a path is and opens it into an opened_run_source: the run's
// manifest (graph.json's nodes, when the container has a graph, and one
// tensor_spec per tensor key, sorted by key, except for container keys:
// below), the source that loads those specs, the byte count for progress,
// and notes (what was chosen or inferred while opening, one sentence each,
// e.g. which Polygraphy runner was read).
//
// Adding a container: derive from run_source, write an open function that
// fills an opened_run_source, and add its detection (magic bytes first) and
// its case to open_run_source.hpp. load() is called only with specs of the
// manifest it returned; it builds the state of a loaded_tensor and ends with
// detail::finish_loaded_tensor, so graph.json's shape, layout and
// quantization apply the same way in every container.
//
// Thread safety: every const member may be called from several threads at once.
#include <algorithm>
#include <cerrno>
#include <cstddef>
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
#include <sys/stat.h>
#include <unistd.h>

#include <numgap/core/error.hpp>
#include <numgap/core/shape.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/io/confined_open.hpp>
#include <numgap/io/file_descriptor.hpp>
#include <numgap/io/loaded_tensor.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/read_policy.hpp>
#include <numgap/io/run_manifest.hpp>

namespace numgap::io {

class run_source {
public:
    virtual ~run_source() = default;
    // The tensor `spec` (an entry of the manifest this source was opened with)
    // describes. Throws numgap::error naming the file and the reason.
    virtual loaded_tensor load(const tensor_spec& spec) const = 0;
    // The tensor `spec` describes, to be compared with `reference`: a source
    // whose files do not say their dtype and shape (a QNN raw output folder)
    // infers them from the reference's shape; every other source ignores
    // the reference and loads as load() does.
    virtual loaded_tensor load_like(const tensor_spec& spec, const tensor_view& reference) const {
        (void)reference;
        return load(spec);
    }
    // The tensor's shape in stored dimension order, read without reading its
    // data; nullopt when not known that cheaply or the header is unreadable
    // (load() reports a bad file on its own). Never throws for bad data.
    virtual std::optional<std::vector<std::int64_t>> stored_shape(const tensor_spec& spec) const = 0;
    // Why `key` is not a tensor of the run, in parentheses after "has no tensor 'key'".
    virtual std::string missing_reason(std::string_view key, const run_manifest& manifest) const = 0;

    // Container keys: the keys of a file that holds many tensors and indexes
    // them itself (a safetensors file). The manifest lists no spec for such
    // a key unless graph.json describes it (a spec of ~160 bytes a key, for a
    // run of a million keys, was a third of what the run held); run_directory
    // lists and finds them here, and loads one through a spec holding only
    // its key and slot (tensor_spec::source_slot). A key may also have a
    // spec (then that spec describes it). Sources without such files keep
    // these defaults.
    // Every container key's slot, sorted by key.
    virtual std::vector<std::uint32_t> sorted_container_keys() const { return {}; }
    // Precondition: `slot` is one of sorted_container_keys().
    virtual std::string_view container_key(std::uint32_t slot) const noexcept {
        (void)slot;
        return {};
    }
    virtual std::optional<std::uint32_t> find_container_key(std::string_view key) const {
        (void)key;
        return std::nullopt;
    }

    // Hands back the resident pages of the files the source keeps mapped
    // for its whole life (a safetensors file): they are read again from the
    // file (the page cache) when touched. A run of a million small tensors
    // read in place otherwise keeps every page it read resident to the end;
    // compare_groups calls this every few tens of MB compared. Safe while
    // other threads read the mapping (their reads fault the pages back in).
    virtual void release_cached_pages() const noexcept {}
};

struct opened_run_source {
    run_manifest manifest;
    std::shared_ptr<const run_source> source;
    std::uint64_t total_bytes = 0;
    std::vector<std::string> notes;
};

namespace detail {

// What the run's entry does wrong, as the end of "file 'x' ...".
inline std::string refusal(const confined_open_error& failure) {
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

inline std::uint64_t size_of_open(const file_descriptor& file) {
    struct stat status {};
    return ::fstat(file.get(), &status) == 0 ? std::uint64_t(status.st_size) : 0;
}

// A file the user named (the run, or one given with it: a debug buffer, an
// overlay, a model JSON) is opened as given, not confined. `what` names it in
// the error ("cannot open debug buffer 'b.bin': ...").
inline file_descriptor open_run_file(const std::filesystem::path& path, std::string_view what = "run") {
    file_descriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (!file.valid())
        throw error(error_kind::io,
                    "cannot open " + std::string(what) + " '" + path.string() + "': " + std::generic_category().message(errno),
                    error_location::in_file(path.string()));
    return file;
}

// `folder` (the run directory, or the folder of a run file that names other
// files) and the policy's allowed roots, held open: every file a run names is
// opened beneath them.
inline std::shared_ptr<const std::vector<confined_root>> run_roots(const std::filesystem::path& folder,
                                                                   const read_policy& policy) {
    std::vector<confined_root> roots;
    roots.push_back(confined_root::open(folder));
    for (const std::filesystem::path& allowed : policy.allowed_roots) roots.push_back(confined_root::open(allowed));
    return std::make_shared<const std::vector<confined_root>>(std::move(roots));
}

// NumPy writes version 1.0 headers (at most 65535 bytes) unless a structured
// dtype needs more, and numgap reads no structured dtypes.
inline constexpr std::size_t npy_header_read_limit = 10 + 65535;

// The header of .npy data of `total_size` bytes whose first bytes
// `read_prefix(buffer)` reads into buffer (returning what it read): only the
// header is read, never the data. nullopt when the bytes do not start with
// the .npy magic (a raw dump) or the header is larger than npy_header_read_limit.
template <class ReadPrefix>
std::optional<npy_header> read_npy_header(ReadPrefix&& read_prefix, std::uint64_t total_size, const std::string& where,
                                          std::optional<dtype> declared) {
    std::vector<std::byte> prefix(12);
    const std::uint64_t preamble = npy_preamble_size(read_prefix(std::span<std::byte>(prefix)));
    if (preamble == 0 || preamble > npy_header_read_limit) return std::nullopt;
    prefix.resize(std::size_t(preamble));
    return parse_npy_header(read_prefix(std::span<std::byte>(prefix)), total_size, where, declared);
}

// The file of the tensor `spec` describes, opened beneath `roots`; an error
// naming `shown` (the file as the user sees it) and the key when refused.
inline file_descriptor open_tensor_file(const std::vector<confined_root>& roots, const tensor_spec& spec,
                                        const std::string& shown) {
    try {
        return open_confined(roots, spec.file, confined_target::file);
    } catch (const confined_open_error& failure) {
        throw error(error_kind::io, "file '" + spec.file + "' " + refusal(failure), error_location::at_item(shown, spec.key));
    }
}

// The view of headerless bytes whose dtype and shape `spec` gives (all of
// them, exactly: a size that disagrees is an error naming `file`).
inline tensor_view raw_tensor_view(std::span<const std::byte> bytes, const tensor_spec& spec, const std::string& file) {
    if (!spec.type || !spec.shape)
        throw error(error_kind::schema,
                    "'" + file + "' has no .npy header, so graph.json must give its \"dtype\" and \"shape\"",
                    error_location::at_item(file, spec.key));
    const std::optional<std::uint64_t> needed = numgap::detail::checked_storage_bytes(*spec.shape, *spec.type);
    if (!needed || *needed != bytes.size())
        throw error(error_kind::shape,
                    "raw file '" + file + "' has " + std::to_string(bytes.size()) + " bytes but shape " +
                        shape_text(*spec.shape) + " of " + std::string(name_of(*spec.type)) + " needs " +
                        (needed ? std::to_string(*needed) : std::string("more than 2^63")),
                    error_location::at_item(file, spec.key));
    return tensor_view(bytes.data(), *spec.type, *spec.shape);
}

// Adds `discovered` to the manifest's tensors, keeping them sorted by key.
inline void merge_specs(run_manifest& manifest, std::vector<tensor_spec> discovered) {
    const auto by_key = [](const tensor_spec& a, const tensor_spec& b) { return a.key < b.key; };
    std::vector<tensor_spec>& tensors = manifest.tensors;
    const std::size_t kept = tensors.size();
    if (kept == 0) {
        tensors = std::move(discovered); // no spec moved, no second array touched
    } else {
        tensors.reserve(kept + discovered.size());
        for (tensor_spec& spec : discovered) tensors.push_back(std::move(spec));
    }
    // Listings and key sets come sorted, and graph.json's entries often are:
    // then checking is enough (sorting again moved each of a million
    // 312-byte specs several times).
    const auto middle = tensors.begin() + std::ptrdiff_t(kept);
    if (std::is_sorted(tensors.begin(), middle, by_key) && std::is_sorted(middle, tensors.end(), by_key) &&
        (kept == 0 || middle == tensors.end() || by_key(*(middle - 1), *middle)))
        return;
    std::sort(tensors.begin(), tensors.end(), by_key);
}

// A fresh state for the tensor `spec` describes, held in `file`.
inline std::unique_ptr<loaded_tensor_state> start_loading(const tensor_spec& spec, std::string file) {
    auto state = std::make_unique<loaded_tensor_state>();
    state->key = spec.key;
    state->file = std::move(file);
    return state;
}

} // namespace detail
} // namespace numgap::io
