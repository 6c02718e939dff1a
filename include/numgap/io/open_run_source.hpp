#pragma once
// numgap::io::detect_run_source and open_run_source: the one place that
// decides what a run path is, from its content, and opens it with the source
// for that kind. In order:
//   a file (optionally followed by #run=N) with the
//     ETDump identifier "ED00" at byte 8 or 4     -> etdump_source.hpp
//   a directory                                   -> directory_source.hpp
//   a file starting "PK\3\4" or "PK\5\6" (zip),
//     or named *.npz                              -> npz_source.hpp
//   a file starting with an 8-byte length and '{' -> safetensors_source.hpp
//   a file named *.index.json                     -> sharded safetensors
// Anything else is refused with an error naming the run and the kinds tried.
// Only the first bytes of a file are read to decide (kSniffBytes).
//
// To add a kind: a value in run_source_kind, a test on the sniffed bytes
// below (magic bytes first, the name only where the content cannot tell), a
// case in open_run_source, and a line in the table above.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

#include <unistd.h>

#include <numgap/core/error.hpp>
#include <numgap/io/directory_source.hpp>
#include <numgap/io/etdump_source.hpp>
#include <numgap/io/npz_source.hpp>
#include <numgap/io/read_policy.hpp>
#include <numgap/io/run_source.hpp>
#include <numgap/io/safetensors.hpp>
#include <numgap/io/safetensors_source.hpp>

namespace numgap::io {

enum class run_source_kind { directory, npz, safetensors_file, safetensors_index, etdump };

namespace detail {

inline constexpr std::size_t run_sniff_bytes = 64;

inline bool starts_with_bytes(std::span<const std::byte> head, std::string_view magic) noexcept {
    if (head.size() < magic.size()) return false;
    for (std::size_t i = 0; i < magic.size(); ++i)
        if (head[i] != std::byte(static_cast<unsigned char>(magic[i]))) return false;
    return true;
}

// The first non-blank byte is '{' (JSON whitespace: space, tab, CR, LF).
inline bool starts_like_json_object(std::span<const std::byte> head) noexcept {
    for (const std::byte b : head) {
        const char c = char(b);
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
        return c == '{';
    }
    return false;
}

} // namespace detail

inline run_source_kind detect_run_source(const std::filesystem::path& path) {
    // First, because its path may carry a run selector (dump.etdp#run=1) and so not exist as given.
    if (is_etdump_run(path)) return run_source_kind::etdump;
    std::error_code failure;
    const std::filesystem::file_status status = std::filesystem::status(path, failure);
    if (status.type() == std::filesystem::file_type::not_found)
        throw error(error_kind::io, "run '" + path.string() + "' does not exist", error_location::in_file(path.string()));
    if (failure)
        throw error(error_kind::io, "cannot read run '" + path.string() + "': " + failure.message(),
                    error_location::in_file(path.string()));
    if (std::filesystem::is_directory(status)) return run_source_kind::directory;
    const bool regular = std::filesystem::is_regular_file(status);
    if (regular) {
        std::byte head[detail::run_sniff_bytes];
        const file_descriptor file = detail::open_run_file(path);
        const ::ssize_t got = ::pread(file.get(), head, sizeof head, 0);
        const std::span<const std::byte> sniffed(head, got < 0 ? 0 : std::size_t(got));
        using namespace std::string_view_literals;
        if (detail::starts_with_bytes(sniffed, "PK\x03\x04"sv) || detail::starts_with_bytes(sniffed, "PK\x05\x06"sv) ||
            path.extension() == ".npz")
            return run_source_kind::npz;
        if (has_safetensors_signature(sniffed)) return run_source_kind::safetensors_file;
        // The name decides here (a JSON object is all the content says); a
        // damaged index is then reported by the index reader, not as "no run".
        if (path.filename().string().ends_with(".index.json")) return run_source_kind::safetensors_index;
    }
    throw error(error_kind::format,
                "run '" + path.string() +
                    "' is neither a directory nor an .npz file (nor a safetensors file, *.index.json or ETDump)",
                error_location::in_file(path.string()));
}

inline opened_run_source open_run_source(const std::filesystem::path& path, const read_policy& policy = {}) {
    switch (detect_run_source(path)) {
    case run_source_kind::directory: return directory_source::open(path, policy);
    case run_source_kind::npz: return open_npz(path, policy);
    case run_source_kind::safetensors_file: return open_safetensors_file(path);
    case run_source_kind::safetensors_index: return open_sharded_safetensors(path, policy);
    case run_source_kind::etdump: return open_etdump(path, policy);
    }
    NUMGAP_ASSERT(false);
    return {};
}

} // namespace numgap::io
