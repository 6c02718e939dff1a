#pragma once
// numgap::io safetensors: the header of a .safetensors file parsed into an
// index (key -> dtype, shape, byte range), and a tensor_view of one entry.
//
// Format (the safetensors project's own description): an 8-byte little-endian
// unsigned header length N; N bytes of UTF-8 JSON, an object mapping each
// tensor key to {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}
// with offsets relative to the first byte after the header, plus an optional
// "__metadata__" object of string -> string; then the data, row-major,
// little-endian.
//
// Rules (a file breaking one is refused with a numgap::error naming the file,
// the key and the offset or reason - where() holds the file, the key and the
// byte offset where known; the header is read member by member, never held
// as one JSON tree). Kinds: format for a truncated file, limit for an over-limit header or
// an absurd size, dtype for an undefined dtype, shape for a byte count that
// disagrees with the shape, schema for everything else the header gets wrong:
//  - N is at most 100,000,000 bytes (the reference implementation's limit)
//    and 8 + N fits in the file; the header is a strict JSON object (json.hpp:
//    valid UTF-8, no duplicate keys); trailing spaces are allowed;
//  - each entry is an object with "dtype" (a string), "shape" (an array of
//    non-negative integers, at most 2^63 - 1 elements and bytes in total) and
//    "data_offsets" ([begin, end], integers, begin <= end); other members are
//    ignored;
//  - end - begin equals element count x dtype size for every dtype whose size
//    is known (every dtype of the format as of 2025: BOOL, U8, I8, F8_E5M2,
//    F8_E4M3, F8_E8M0, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64, C64,
//    and the sub-byte F4, F6_E2M3, F6_E3M2); a dtype name the format does not
//    define is refused;
//  - as in the reference implementation, the entries tile the data region
//    exactly: sorted by begin, each begins where the previous ended, the first
//    at 0 and the last ends at the end of the file - so no two overlap, none
//    leaves the file, and there are no holes nor trailing bytes.
// F4 is float4_e2m1fn, two codes a byte, element 2k in the low nibble (the
// layout numgap's packed types use, core/dtype.hpp; safetensors itself only
// says 4 bits an element, so an odd count, a fraction of a byte, is refused
// above). F6_E2M3 / F6_E3M2 are 6 bits an element, packed across bytes in an
// order the format does not fix: numgap does not read them (its float6 types
// are one code a byte, as ml_dtypes stores them; store such a tensor as U8
// codes and declare it float6_* in graph.json).
// A dtype numgap cannot compute with (I64, U64, U32, C64, F6_*) is
// no error in the index: the file and its other tensors stay usable.
// safetensors_view() of such an entry throws "unsupported dtype F8_E4M3 in key
// '<key>' of file '<file>'". Data may be misaligned for its dtype (nothing in
// the format aligns it); the view then points at misaligned memory, and
// run_directory copies that one tensor into an aligned buffer (as for .npz
// members). The header is read by io/safetensors_header.hpp, entry by entry,
// which safetensors_tensors (safetensors_run.hpp) uses as well.
// Complexity: O(N) to parse a header of N bytes, plus O(k log k) for k
// entries whose data are not in header order; O(1) per view.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/io/little_endian.hpp>
#include <numgap/io/safetensors_header.hpp>

namespace numgap::io {

struct safetensors_entry {
    std::string key;
    std::string dtype_name;    // as written ("BF16")
    std::optional<dtype> type; // empty when numgap cannot compute with dtype_name
    std::vector<std::int64_t> shape;
    std::uint64_t begin = 0, end = 0; // absolute byte offsets in the file
};

struct safetensors_index {
    std::vector<safetensors_entry> entries; // in header order
    std::vector<std::pair<std::string, std::string>> metadata;
    std::uint64_t data_start = 0; // 8 + N

    const safetensors_entry* find(std::string_view key) const {
        for (const safetensors_entry& entry : entries)
            if (entry.key == key) return &entry;
        return nullptr;
    }
};

// True when `bytes` starts like a safetensors file: an 8-byte length N >= 2
// followed by '{'. Content, not the file name, decides. N above the limit
// still counts, so that such a file is refused for its header length rather
// than for not being a run.
inline bool has_safetensors_signature(std::span<const std::byte> bytes) noexcept {
    if (bytes.size() < 10) return false;
    return detail::read_little_endian(bytes.data(), 8) >= 2 && bytes[8] == std::byte('{');
}

// Parses and checks the header of the whole file `bytes`; `file` names it in errors.
inline safetensors_index parse_safetensors_header(std::span<const std::byte> bytes, std::string_view file) {
    safetensors_index index;
    index.data_start = detail::read_safetensors_header(
        bytes, file, [&](std::size_t expected) { index.entries.reserve(expected); },
        [&](const std::string& key, const std::string& value) { index.metadata.emplace_back(key, value); },
        [&](const detail::safetensors_entry_read& read) {
            const detail::safetensors_dtype& known = detail::safetensors_dtypes[read.dtype];
            safetensors_entry& entry = index.entries.emplace_back();
            entry.key = read.key;
            entry.dtype_name = known.name;
            entry.type = known.type;
            entry.shape.assign(read.shape.begin(), read.shape.end());
            entry.begin = read.begin;
            entry.end = read.end;
        });
    const std::vector<safetensors_entry>& entries = index.entries;
    detail::check_safetensors_tiling(
        entries.size(), [&](std::size_t i) { return std::pair(entries[i].begin, entries[i].end); },
        [&](std::size_t i) -> const std::string& { return entries[i].key; }, file, index.data_start, bytes.size());
    return index;
}

namespace detail {
// safetensors_view of a tensor described by its parts: its dtype (`type`,
// empty when numgap cannot compute with `dtype_name`), shape and absolute
// byte offset. What safetensors_view and a compact record share.
inline tensor_view safetensors_tensor_view(std::span<const std::byte> bytes, std::optional<dtype> type,
                                           std::string_view dtype_name, std::span<const std::int64_t> shape,
                                           std::uint64_t begin, [[maybe_unused]] std::uint64_t end,
                                           std::string_view key, std::string_view file) {
    if (!type)
        throw error(error_kind::dtype,
                    "unsupported dtype " + std::string(dtype_name) + " in key '" + std::string(key) + "' of file '" +
                        std::string(file) +
                        "' (numgap computes with BOOL, U8, I8, U16, I16, I32, F16, BF16, F32, F64, F8_E4M3, F8_E5M2, "
                        "F8_E8M0 and F4; F6_* packs 6-bit codes across bytes, which numgap does not read: store them "
                        "one a byte as U8 and declare float6_e2m3fn / float6_e3m2fn in graph.json)",
                    error_location::at_item(std::string(file), std::string(key)));
    if (shape.size() > std::size_t(max_rank))
        throw error(error_kind::limit,
                    "key '" + std::string(key) + "' of file '" + std::string(file) + "' has rank " +
                        std::to_string(shape.size()) + ", above numgap's maximum rank " + std::to_string(max_rank),
                    error_location::at_item(std::string(file), std::string(key)));
    NUMGAP_ASSERT(end <= bytes.size());
    return tensor_view(bytes.data() + begin, *type, shape);
}
} // namespace detail

// A view of `entry`'s data in `bytes` (the whole file the index was parsed
// from); no copy. Throws for a dtype numgap cannot compute with and for a rank
// above numgap's max_rank. The view may be misaligned for its dtype (see the top).
inline tensor_view safetensors_view(std::span<const std::byte> bytes, const safetensors_entry& entry,
                                    std::string_view file) {
    return detail::safetensors_tensor_view(bytes, entry.type, entry.dtype_name, entry.shape, entry.begin, entry.end,
                                           entry.key, file);
}

} // namespace numgap::io
