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
// members). Complexity: O(N) to parse, O(1) per view.
#include <algorithm>
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
#include <numgap/io/json.hpp>
#include <numgap/io/little_endian.hpp>
#include <numgap/io/npy.hpp>

namespace numgap::io {

// The reference implementation's limit on N; a header this large already
// lists millions of tensors.
inline constexpr std::uint64_t safetensors_max_header_bytes = 100'000'000;

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

namespace detail {
struct safetensors_dtype {
    std::string_view name;
    int bits;
    std::optional<dtype> type;
};
inline constexpr safetensors_dtype safetensors_dtypes[] = {
    {"BOOL", 8, dtype::boolean},  {"U8", 8, dtype::uint8},       {"I8", 8, dtype::int8},
    {"I16", 16, dtype::int16},    {"U16", 16, dtype::uint16},    {"F16", 16, dtype::float16},
    {"BF16", 16, dtype::bfloat16}, {"I32", 32, dtype::int32},    {"F32", 32, dtype::float32},
    {"F64", 64, dtype::float64},  {"U32", 32, std::nullopt},     {"I64", 64, std::nullopt},
    {"U64", 64, std::nullopt},    {"C64", 64, std::nullopt},     {"F8_E5M2", 8, dtype::float8_e5m2},
    {"F8_E4M3", 8, dtype::float8_e4m3fn}, {"F8_E8M0", 8, dtype::float8_e8m0fnu},  {"F4", 4, dtype::float4_e2m1fn},
    {"F6_E2M3", 6, std::nullopt}, {"F6_E3M2", 6, std::nullopt},
};

// A non-negative JSON integer, or nothing.
inline std::optional<std::uint64_t> safetensors_count(const json_value& value) noexcept {
    if (!value.is_integer() || value.as_integer() < 0) return std::nullopt;
    return std::uint64_t(value.as_integer());
}
} // namespace detail

// Parses and checks the header of the whole file `bytes`; `file` names it in errors.
inline safetensors_index parse_safetensors_header(std::span<const std::byte> bytes, std::string_view file) {
    const std::string in_file = "safetensors file '" + std::string(file) + "'";
    const auto at = [&](std::uint64_t offset, std::string key = {}) {
        return error_location::at_offset(std::string(file), offset, std::move(key));
    };
    const auto at_key = [&](const std::string& key) { return error_location::at_item(std::string(file), key); };
    if (bytes.size() < 8)
        throw error(error_kind::format,
                    in_file + " is truncated: it has " + std::to_string(bytes.size()) +
                        " bytes, fewer than the 8 of its header length",
                    at(0));
    const std::uint64_t header_bytes = detail::read_little_endian(bytes.data(), 8);
    if (header_bytes > safetensors_max_header_bytes)
        throw error(error_kind::limit,
                    in_file + " declares a header of " + std::to_string(header_bytes) +
                        " bytes at offset 0, more than the limit of " + std::to_string(safetensors_max_header_bytes),
                    at(0));
    if (header_bytes > bytes.size() - 8)
        throw error(error_kind::format,
                    in_file + " is truncated: its header of " + std::to_string(header_bytes) +
                        " bytes (declared at offset 0) ends past the end of the file (" + std::to_string(bytes.size()) +
                        " bytes)",
                    at(0));
    safetensors_index index;
    index.data_start = 8 + header_bytes;
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + 8, std::size_t(header_bytes));
    // Errors from the JSON parser read "<file> header:<line>:<column>: <reason>";
    // the header starts at byte offset 8. The top-level object is walked
    // member by member (json/stream.hpp), each entry parsed as a small tree:
    // a header of a million keys never becomes one tree.
    const std::string header_name = std::string(file) + " header (at byte offset 8)"; // the stream keeps a view of it
    detail::json_stream stream(text, header_name);
    if (stream.peek_significant() != '{') {
        const json_value header = stream.read_value(0);
        stream.finish();
        throw error(error_kind::schema,
                    in_file + ": the header is " + std::string(json_value::describe(header.type())) +
                        ", not a JSON object",
                    at(8));
    }
    const std::uint64_t data_bytes = bytes.size() - index.data_start;
    // Each entry's members are read from the stream, not as a tree of the
    // entry (a million entries were three allocations each): dimensions and
    // offsets go into buffers reused across entries. Every check runs after
    // the whole entry is read, as over a tree, so which error a broken entry
    // reports does not depend on the order of its members.
    std::vector<std::optional<std::uint64_t>> dimensions, offsets;
    // Every entry is an object of at least ~48 bytes ("":{"dtype":"U8",
    // "shape":[],"data_offsets":[0,0]}): room for that many is reserved
    // (pages are touched only as entries are stored), so a million entries
    // are not copied through twenty reallocations.
    const std::size_t expected_entries = stream.bound_ahead('{', 40);
    index.entries.reserve(expected_entries);
    const auto read_entry = [&](const std::string& key) {
        // Messages are built only on the way to an error.
        const auto where = [&] { return in_file + ", key '" + key + "'"; };
        const auto refuse = [&](error_kind kind, const std::string& reason) {
            throw error(kind, where() + reason, at_key(key));
        };
        if (key == "__metadata__") {
            const json_value value = stream.read_value(1);
            if (!value.is_object()) refuse(error_kind::schema, " is not an object of strings");
            for (const json_member& item : value.as_object()) {
                if (!item.value.is_string())
                    throw error(error_kind::schema,
                                where() + ": \"" + item.key + "\" is " +
                                    std::string(json_value::describe(item.value.type())) + ", not a string",
                                at_key(key + "." + item.key));
                index.metadata.emplace_back(item.key, item.value.as_string());
            }
            return;
        }
        if (stream.peek_significant() != '{') {
            (void)stream.read_value(1);
            refuse(error_kind::schema, " is not an object");
        }
        std::string type_name;
        bool has_type = false, has_shape = false, has_offsets = false;
        dimensions.clear();
        offsets.clear();
        // An array member's elements, each a count or nothing; false when the value is no array.
        const auto read_counts = [&](std::vector<std::optional<std::uint64_t>>& counts) {
            if (stream.peek_significant() != '[') {
                (void)stream.read_value(2);
                return false;
            }
            counts.clear();
            stream.read_array(3, [&] {
                if (const std::optional<std::int64_t> plain = stream.read_plain_integer())
                    counts.push_back(std::uint64_t(*plain)); // what safetensors_count gives for it
                else counts.push_back(detail::safetensors_count(stream.read_value(3)));
            });
            return true;
        };
        stream.read_object(2, true, [&](const std::string& member) {
            if (member == "dtype") {
                has_type = stream.read_string(type_name);
                if (!has_type) (void)stream.read_value(2);
            } else if (member == "shape") {
                has_shape = read_counts(dimensions);
            } else if (member == "data_offsets") {
                has_offsets = read_counts(offsets);
            } else {
                (void)stream.read_value(2); // other members are ignored
            }
        });
        if (!has_type) refuse(error_kind::schema, " has no string \"dtype\"");
        if (!has_shape) refuse(error_kind::schema, " has no \"shape\" array");
        if (!has_offsets || offsets.size() != 2)
            refuse(error_kind::schema, " has no \"data_offsets\" array of two integers");
        const auto count = [&](const std::optional<std::uint64_t>& counted, const char* what) {
            if (!counted)
                refuse(error_kind::schema,
                       std::string(": ") + what + " is not a non-negative integer that fits 64 bits");
            return *counted;
        };
        safetensors_entry entry;
        entry.key = key;
        entry.dtype_name = std::move(type_name);
        const auto* known = std::find_if(std::begin(detail::safetensors_dtypes), std::end(detail::safetensors_dtypes),
                                         [&](const auto& candidate) { return candidate.name == entry.dtype_name; });
        if (known == std::end(detail::safetensors_dtypes))
            refuse(error_kind::dtype,
                   " has dtype \"" + entry.dtype_name + "\", which the safetensors format does not define");
        entry.type = known->type;
        entry.shape.reserve(dimensions.size());
        for (const std::optional<std::uint64_t>& dimension : dimensions)
            entry.shape.push_back(std::int64_t(count(dimension, "a \"shape\" dimension")));
        const std::uint64_t begin = count(offsets[0], "data_offsets[0]");
        const std::uint64_t end = count(offsets[1], "data_offsets[1]");
        const auto offsets_text = [&] { return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]"; };
        if (end < begin) refuse(error_kind::schema, ": data_offsets " + offsets_text() + " end before they begin");
        if (end > data_bytes)
            throw error(error_kind::format,
                        where() + ": data_offsets " + offsets_text() + " reach past the " + std::to_string(data_bytes) +
                            " data bytes of the file (data start at offset " + std::to_string(index.data_start) + ")",
                        at(index.data_start + begin, key));
        // Counted in elements (1-byte items) so that sub-byte dtypes share the overflow check.
        const std::optional<std::uint64_t> elements = detail::checked_byte_count(entry.shape, 1);
        std::uint64_t bits = 0;
        if (!elements || __builtin_mul_overflow(*elements, std::uint64_t(known->bits), &bits))
            throw error(error_kind::limit,
                        where() + ": shape " + detail::shape_text(entry.shape) + " of " + entry.dtype_name +
                            " is absurd: its size overflows 64 bits",
                        at_key(key));
        if (bits % 8 != 0 || bits / 8 != end - begin)
            throw error(error_kind::shape,
                        where() + ": shape " + detail::shape_text(entry.shape) + " of " + entry.dtype_name + " needs " +
                            (bits % 8 == 0 ? std::to_string(bits / 8) : std::to_string(bits) + " bits, not whole") +
                            " bytes but data_offsets " + offsets_text() + " hold " + std::to_string(end - begin),
                        at(index.data_start + begin, key));
        entry.begin = index.data_start + begin;
        entry.end = index.data_start + end;
        index.entries.push_back(std::move(entry));
    };
    stream.read_object(1, true, read_entry, expected_entries);
    stream.finish();
    std::vector<const safetensors_entry*> by_offset;
    by_offset.reserve(index.entries.size());
    for (const safetensors_entry& entry : index.entries) by_offset.push_back(&entry);
    // Writers usually lay the data out in header order: then checking is enough.
    const auto in_file_order = [](const safetensors_entry* a, const safetensors_entry* b) {
        return std::pair(a->begin, a->end) < std::pair(b->begin, b->end);
    };
    if (!std::is_sorted(by_offset.begin(), by_offset.end(), in_file_order))
        std::sort(by_offset.begin(), by_offset.end(), in_file_order);
    std::uint64_t covered = index.data_start;
    const safetensors_entry* previous = nullptr;
    for (const safetensors_entry* entry : by_offset) {
        if (entry->begin < covered)
            throw error(error_kind::schema,
                        in_file + ": key '" + entry->key + "' (bytes " + std::to_string(entry->begin) + " to " +
                            std::to_string(entry->end) + ") overlaps key '" + previous->key + "' (bytes " +
                            std::to_string(previous->begin) + " to " + std::to_string(previous->end) + ")",
                        at(entry->begin, entry->key));
        if (entry->begin > covered)
            throw error(error_kind::schema,
                        in_file + ": key '" + entry->key + "' begins at byte " + std::to_string(entry->begin) +
                            ", leaving a hole after byte " + std::to_string(covered) +
                            " (the data must be covered exactly, as the reference implementation requires)",
                        at(covered, entry->key));
        covered = entry->end;
        previous = entry;
    }
    if (covered != bytes.size())
        throw error(error_kind::schema,
                    in_file + " has " + std::to_string(bytes.size() - covered) +
                        " bytes after the last tensor (from offset " + std::to_string(covered) +
                        ") that no key describes",
                    at(covered));
    return index;
}

// A view of `entry`'s data in `bytes` (the whole file the index was parsed
// from); no copy. Throws for a dtype numgap cannot compute with and for a rank
// above numgap's max_rank. The view may be misaligned for its dtype (see the top).
inline tensor_view safetensors_view(std::span<const std::byte> bytes, const safetensors_entry& entry,
                                    std::string_view file) {
    if (!entry.type)
        throw error(error_kind::dtype,
                    "unsupported dtype " + entry.dtype_name + " in key '" + entry.key + "' of file '" +
                        std::string(file) + "' (numgap computes with BOOL, U8, I8, U16, I16, I32, F16, BF16, F32, F64, F8_E4M3, F8_E5M2, "
                        "F8_E8M0 and F4; F6_* packs 6-bit codes across bytes, which numgap does not read: store them "
                        "one a byte as U8 and declare float6_e2m3fn / float6_e3m2fn in graph.json)",
                    error_location::at_item(std::string(file), entry.key));
    if (entry.shape.size() > std::size_t(max_rank))
        throw error(error_kind::limit,
                    "key '" + entry.key + "' of file '" + std::string(file) + "' has rank " +
                        std::to_string(entry.shape.size()) + ", above numgap's maximum rank " +
                        std::to_string(max_rank),
                    error_location::at_item(std::string(file), entry.key));
    NUMGAP_ASSERT(entry.end <= bytes.size());
    return tensor_view(bytes.data() + entry.begin, *entry.type, entry.shape);
}

} // namespace numgap::io
