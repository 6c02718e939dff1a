#pragma once
// numgap::io::detect_run_source and open_run_source: the one place that
// decides what a run path is, from its content, and opens it with the source
// for that kind. In order:
//   a directory without graph.json holding *.raw
//     files or Result_<N> folders (and no .npy or
//     .safetensors at its top)                    -> qnn_raw_source.hpp
//   any other directory                           -> directory_source.hpp
//   a file starting "PK\3\4" or "PK\5\6" (zip),
//     or named *.npz                              -> npz_source.hpp
//   a file starting with an 8-byte length and '{' -> safetensors_source.hpp
//   a file with the ETDump identifier "ED00" at
//     byte 8 (size-prefixed) or 4                 -> etdump_source.hpp
//   a JSON object under 4 KiB with a string
//     member "etdump"                             -> etdump_manifest.hpp
//   a file named *.index.json                     -> sharded safetensors
//   a JSON object whose first 4 KiB name a Polygraphy member ("lst",
//     "outputs", "polygraphy_class", "__polygraphy_encoded_...")
//                                                 -> polygraphy_source.hpp
// Anything else is refused with an error naming the run and the kinds tried;
// a run that cannot be opened, read or examined is an io error naming it and
// the system's reason. Only the first run_sniff_bytes of a file are read to
// decide.
//
// Selectors: a path that does not exist but whose part before the last '#'
// is a regular file or a directory is that file with a selector
// (`out.json#RUNNER@N`, `dump.etdp#run=N`, `qnn_out#1`); only sources that
// take one accept it (Polygraphy JSON, ETDump or its manifest, QNN raw
// folder), others refuse it.
//
// To add a kind: a value in run_source_kind, a test on the sniffed bytes
// below (magic bytes first, the name only where the content cannot tell), a
// case in open_run_source_of_kind, and a line in the table above. Every kind
// but a directory is a container whose graph may come from an overlay
// (run_overlay.hpp).
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

#include <unistd.h>

#include <numgap/core/error.hpp>
#include <numgap/io/byte_signature.hpp>
#include <numgap/io/directory_source.hpp>
#include <numgap/io/etdump_manifest.hpp>
#include <numgap/io/etdump_source.hpp>
#include <numgap/io/npz_source.hpp>
#include <numgap/io/polygraphy_source.hpp>
#include <numgap/io/qnn_raw_source.hpp>
#include <numgap/io/read_policy.hpp>
#include <numgap/io/run_overlay.hpp>
#include <numgap/io/run_source.hpp>
#include <numgap/io/safetensors.hpp>
#include <numgap/io/safetensors_source.hpp>

namespace numgap::io {

enum class run_source_kind {
    directory,
    npz,
    safetensors_file,
    safetensors_index,
    polygraphy_json,
    etdump,
    etdump_manifest,
    qnn_raw
};

// A run path split into the file and what followed its last '#', if the
// whole path does not exist but the part before '#' is a regular file.
struct run_path {
    std::filesystem::path file;
    std::optional<std::string> selector;
};

namespace detail {

inline constexpr std::size_t run_sniff_bytes = 4096;

// The first non-blank byte is '{' (JSON whitespace: space, tab, CR, LF).
inline bool starts_like_json_object(std::span<const std::byte> head) noexcept {
    for (const std::byte b : head) {
        const char c = char(b);
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
        return c == '{';
    }
    return false;
}

inline bool mentions_polygraphy_member(std::span<const std::byte> head) noexcept {
    const std::string_view text(reinterpret_cast<const char*>(head.data()), head.size());
    for (const std::string_view marker : {"\"lst\"", "\"outputs\"", "\"polygraphy_class\"", "\"__polygraphy_encoded_"})
        if (text.find(marker) != std::string_view::npos) return true;
    return false;
}

} // namespace detail

inline run_path split_run_selector(const std::filesystem::path& path) {
    std::error_code failure;
    const std::string text = path.string();
    const std::size_t hash = text.rfind('#');
    if (hash == std::string::npos || std::filesystem::exists(path, failure)) return {path, std::nullopt};
    const std::filesystem::path file = text.substr(0, hash);
    if (!std::filesystem::is_regular_file(file, failure) && !std::filesystem::is_directory(file, failure))
        return {path, std::nullopt};
    return {file, text.substr(hash + 1)};
}

inline run_source_kind detect_run_source(const std::filesystem::path& path) {
    std::error_code failure;
    const std::filesystem::file_status status = std::filesystem::status(path, failure);
    if (status.type() == std::filesystem::file_type::not_found)
        throw error(error_kind::io, "run '" + path.string() + "' does not exist", error_location::in_file(path.string()));
    if (failure)
        throw error(error_kind::io, "cannot read run '" + path.string() + "': " + failure.message(),
                    error_location::in_file(path.string()));
    if (std::filesystem::is_directory(status))
        return qnn_raw_source::looks_like(path) ? run_source_kind::qnn_raw : run_source_kind::directory;
    const bool regular = std::filesystem::is_regular_file(status);
    if (regular) {
        std::byte head[detail::run_sniff_bytes];
        const file_descriptor file = detail::open_run_file(path);
        ::ssize_t got = 0;
        do got = ::pread(file.get(), head, sizeof head, 0);
        while (got < 0 && errno == EINTR);
        // A file that cannot be read is an I/O error, not "no run of a known kind".
        if (got < 0)
            throw error(error_kind::io,
                        "cannot read run '" + path.string() + "' to tell what it is: " +
                            std::generic_category().message(errno),
                        error_location::in_file(path.string()));
        const std::span<const std::byte> sniffed(head, std::size_t(got));
        using namespace std::string_view_literals;
        if (detail::has_bytes_at(sniffed, 0, "PK\x03\x04"sv) || detail::has_bytes_at(sniffed, 0, "PK\x05\x06"sv) ||
            path.extension() == ".npz")
            return run_source_kind::npz;
        if (has_safetensors_signature(sniffed)) return run_source_kind::safetensors_file;
        if (has_etdump_signature(sniffed)) return run_source_kind::etdump;
        // A manifest is small: only a file read whole here can be one.
        if (std::size_t(got) < sizeof head && detail::starts_like_json_object(sniffed) &&
            is_etdump_manifest(std::string_view(reinterpret_cast<const char*>(head), std::size_t(got))))
            return run_source_kind::etdump_manifest;
        // The name decides here (a JSON object is all the content says); a
        // damaged index is then reported by the index reader, not as "no run".
        if (path.filename().string().ends_with(".index.json")) return run_source_kind::safetensors_index;
        if (detail::starts_like_json_object(sniffed) && detail::mentions_polygraphy_member(sniffed))
            return run_source_kind::polygraphy_json;
    }
    throw error(error_kind::format,
                "run '" + path.string() +
                    "' is neither a directory nor an .npz file (nor a safetensors file, *.index.json, Polygraphy JSON, "
                    "ETDump or ETDump manifest)",
                error_location::in_file(path.string()));
}

// Whether `given` (possibly with a '#' selector) is an ETDump file or an
// ETDump manifest (both take a debug buffer); never throws (what is no run at
// all is reported when it is opened).
inline bool is_etdump_run(const std::filesystem::path& given) noexcept {
    try {
        const run_source_kind kind = detect_run_source(split_run_selector(given).file);
        return kind == run_source_kind::etdump || kind == run_source_kind::etdump_manifest;
    } catch (...) {
        return false;
    }
}

namespace detail {
inline opened_run_source open_run_source_of_kind(run_source_kind kind, const std::filesystem::path& path,
                                                 const std::optional<std::string>& selector, const read_policy& policy) {
    switch (kind) {
    case run_source_kind::directory: return directory_source::open(path, policy);
    case run_source_kind::npz: return open_npz(path, policy);
    case run_source_kind::safetensors_file: return open_safetensors_file(path);
    case run_source_kind::safetensors_index: return open_sharded_safetensors(path, policy);
    case run_source_kind::polygraphy_json: return open_polygraphy_json(path, selector);
    case run_source_kind::etdump: return open_etdump(path, selector, policy);
    case run_source_kind::etdump_manifest: return open_etdump_manifest(path, selector, policy);
    case run_source_kind::qnn_raw: return qnn_raw_source::open(path, selector, policy);
    }
    NUMGAP_ASSERT(false);
    return {};
}
} // namespace detail

// Opens the run at `given` (a path, possibly with a '#' selector). A
// container run (every kind but a directory) takes its graph and tensor
// metadata from `overlay` when given, else from a graph.json next to it
// (run_overlay.hpp; a QNN raw folder only from `overlay`); a directory has
// its own graph.json, and an overlay given for one is an error.
inline opened_run_source open_run_source(const std::filesystem::path& given, const read_policy& policy = {},
                                         const std::optional<std::filesystem::path>& overlay = std::nullopt) {
    const auto [path, selector] = split_run_selector(given);
    const run_source_kind kind = detect_run_source(path);
    if (selector && kind != run_source_kind::polygraphy_json && kind != run_source_kind::etdump &&
        kind != run_source_kind::etdump_manifest && kind != run_source_kind::qnn_raw)
        throw error(error_kind::usage,
                    "run '" + given.string() + "': '#" + *selector + "' selects a runner or run, but '" + path.string() +
                        "' is neither a Polygraphy JSON, an ETDump nor a QNN raw output folder",
                    error_location::in_file(path.string()));
    if (overlay && kind == run_source_kind::directory)
        throw error(error_kind::usage,
                    "run '" + path.string() + "' is a directory: it takes its graph from its own graph.json, not from "
                    "the overlay '" + overlay->string() + "'",
                    error_location::in_file(path.string()));
    opened_run_source opened = detail::open_run_source_of_kind(kind, path, selector, policy);
    // A QNN raw folder takes only an overlay given with it: a graph.json
    // inside it makes it a run directory, and one beside it describes another run.
    if (kind != run_source_kind::directory && (kind != run_source_kind::qnn_raw || overlay))
        if (auto read = read_run_overlay(path, overlay, policy))
            apply_run_overlay(opened, read->first, read->second, given.string());
    return opened;
}

} // namespace numgap::io
