#pragma once
// The reader behind safetensors.hpp: a safetensors header walked entry by
// entry with every rule that file states (see there), each entry handed to
// the caller as it is read, so that the caller keeps only what it needs.
// parse_safetensors_header builds a safetensors_index from it;
// safetensors_tensors (safetensors_run.hpp) keeps a compact record per key
// for runs of a million keys, where a safetensors_entry each (112 bytes,
// plus a heap block for its shape) was a tenth of the whole comparison's
// memory.
//
// Entries must tile the data region exactly; check_safetensors_tiling checks
// that once the caller has them all, in whatever form it kept them.
// Complexity: O(N) for a header of N bytes, O(k log k) for the tiling check
// of k entries out of file order (O(k) in order). Throws numgap::error as
// safetensors.hpp describes, std::bad_alloc.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/shape.hpp>
#include <numgap/io/json.hpp>
#include <numgap/io/little_endian.hpp>

namespace numgap::io {

// The reference implementation's limit on N; a header this large already
// lists millions of tensors.
inline constexpr std::uint64_t safetensors_max_header_bytes = 100'000'000;

namespace detail {

struct safetensors_dtype {
    std::string_view name;
    int bits;
    std::optional<dtype> type;
};
inline constexpr safetensors_dtype safetensors_dtypes[] = {
    {"BOOL", 8, dtype::boolean},
    {"U8", 8, dtype::uint8},
    {"I8", 8, dtype::int8},
    {"I16", 16, dtype::int16},
    {"U16", 16, dtype::uint16},
    {"F16", 16, dtype::float16},
    {"BF16", 16, dtype::bfloat16},
    {"I32", 32, dtype::int32},
    {"F32", 32, dtype::float32},
    {"F64", 64, dtype::float64},
    {"U32", 32, std::nullopt},
    {"I64", 64, std::nullopt},
    {"U64", 64, std::nullopt},
    {"C64", 64, std::nullopt},
    {"F8_E5M2", 8, dtype::float8_e5m2},
    {"F8_E4M3", 8, dtype::float8_e4m3fn},
    {"F8_E8M0", 8, dtype::float8_e8m0fnu},
    {"F4", 4, dtype::float4_e2m1fn},
    {"F6_E2M3", 6, std::nullopt},
    {"F6_E3M2", 6, std::nullopt},
};
// A dtype's position in safetensors_dtypes: what a compact record stores.
using safetensors_dtype_slot = std::uint8_t;
static_assert(std::size(safetensors_dtypes) <= 256);

// A non-negative JSON integer, or nothing.
inline std::optional<std::uint64_t> safetensors_count(const json_value& value) noexcept {
    if (!value.is_integer() || value.as_integer() < 0) return std::nullopt;
    return std::uint64_t(value.as_integer());
}

// One entry as read, valid during the on_entry call only. begin and end are
// absolute byte offsets in the file.
struct safetensors_entry_read {
    const std::string& key;
    safetensors_dtype_slot dtype;
    std::span<const std::int64_t> shape;
    std::uint64_t begin, end;
};

// Reads and checks the header of the whole file `bytes` (`file` names it in
// errors), calling, in header order, on_metadata(key, value) for each
// "__metadata__" member and on_entry(safetensors_entry_read) for each tensor
// entry; reserve(n) first, with n an upper bound on the entries (what a
// caller may reserve: the header's text bounds it). Returns where the data
// start (8 + N). The tiling of the data is the caller's to check
// (check_safetensors_tiling), once it has every entry. With
// check_duplicate_keys false a tensor key may come twice (a repeated
// "__metadata__" is still refused): for a caller that indexes every key
// anyway and, on finding one twice, reads the header again with the check
// to report it (a second index of a million keys was a tenth of opening a run).
template <class Reserve, class OnMetadata, class OnEntry>
std::uint64_t read_safetensors_header(std::span<const std::byte> bytes, std::string_view file, Reserve&& reserve,
                                      OnMetadata&& on_metadata, OnEntry&& on_entry, bool check_duplicate_keys = true) {
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
    const std::uint64_t header_bytes = read_little_endian(bytes.data(), 8);
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
    const std::uint64_t data_start = 8 + header_bytes;
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + 8, std::size_t(header_bytes));
    // Errors from the JSON parser read "<file> header:<line>:<column>: <reason>";
    // the header starts at byte offset 8. The top-level object is walked
    // member by member (json/stream.hpp): a header of a million keys never
    // becomes one tree.
    const std::string header_name = std::string(file) + " header (at byte offset 8)"; // the stream keeps a view of it
    json_stream stream(text, header_name);
    if (stream.peek_significant() != '{') {
        const json_value header = stream.read_value(0);
        stream.finish();
        throw error(error_kind::schema,
                    in_file + ": the header is " + std::string(json_value::describe(header.type())) +
                        ", not a JSON object",
                    at(8));
    }
    const std::uint64_t data_bytes = bytes.size() - data_start;
    // Each entry's members are read from the stream, not as a tree of the
    // entry (a million entries were three allocations each): dimensions and
    // offsets go into buffers reused across entries. Every check runs after
    // the whole entry is read, as over a tree, so which error a broken entry
    // reports does not depend on the order of its members.
    std::vector<std::optional<std::uint64_t>> dimensions, offsets;
    std::vector<std::int64_t> shape;
    std::string type_name;
    // Every entry is an object of at least ~48 bytes ("":{"dtype":"U8",
    // "shape":[],"data_offsets":[0,0]}).
    const std::size_t expected_entries = stream.bound_ahead('{', 40);
    reserve(expected_entries);
    bool metadata_seen = false;
    const auto read_entry = [&](const std::string& key) {
        // Messages are built only on the way to an error.
        const auto where = [&] { return in_file + ", key '" + key + "'"; };
        const auto refuse = [&](error_kind kind, const std::string& reason) {
            throw error(kind, where() + reason, at_key(key));
        };
        if (key == "__metadata__") {
            // Unchecked, a repeated key that makes no entry is this one: refused
            // here (the caller's index never sees it; its checked reading words it).
            if (!check_duplicate_keys && std::exchange(metadata_seen, true))
                refuse(error_kind::format, " appears twice in the header");
            const json_value value = stream.read_value(1);
            if (!value.is_object()) refuse(error_kind::schema, " is not an object of strings");
            for (const json_member& item : value.as_object()) {
                if (!item.value.is_string())
                    throw error(error_kind::schema,
                                where() + ": \"" + item.key + "\" is " +
                                    std::string(json_value::describe(item.value.type())) + ", not a string",
                                at_key(key + "." + item.key));
                on_metadata(item.key, item.value.as_string());
            }
            return;
        }
        if (stream.peek_significant() != '{') {
            (void)stream.read_value(1);
            refuse(error_kind::schema, " is not an object");
        }
        bool has_type = false, has_shape = false, has_offsets = false;
        type_name.clear();
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
                else counts.push_back(safetensors_count(stream.read_value(3)));
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
        const auto* known = std::find_if(std::begin(safetensors_dtypes), std::end(safetensors_dtypes),
                                         [&](const auto& candidate) { return candidate.name == type_name; });
        if (known == std::end(safetensors_dtypes))
            refuse(error_kind::dtype, " has dtype \"" + type_name + "\", which the safetensors format does not define");
        shape.clear();
        for (const std::optional<std::uint64_t>& dimension : dimensions)
            shape.push_back(std::int64_t(count(dimension, "a \"shape\" dimension")));
        const std::uint64_t begin = count(offsets[0], "data_offsets[0]");
        const std::uint64_t end = count(offsets[1], "data_offsets[1]");
        const auto offsets_text = [&] { return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]"; };
        if (end < begin) refuse(error_kind::schema, ": data_offsets " + offsets_text() + " end before they begin");
        if (end > data_bytes)
            throw error(error_kind::format,
                        where() + ": data_offsets " + offsets_text() + " reach past the " + std::to_string(data_bytes) +
                            " data bytes of the file (data start at offset " + std::to_string(data_start) + ")",
                        at(data_start + begin, key));
        // Counted in elements (1-byte items) so that sub-byte dtypes share the overflow check.
        const std::optional<std::uint64_t> elements = numgap::detail::checked_byte_count(shape, 1);
        std::uint64_t bits = 0;
        if (!elements || __builtin_mul_overflow(*elements, std::uint64_t(known->bits), &bits))
            throw error(error_kind::limit,
                        where() + ": shape " + numgap::detail::shape_text(shape) + " of " + type_name +
                            " is absurd: its size overflows 64 bits",
                        at_key(key));
        if (bits % 8 != 0 || bits / 8 != end - begin)
            throw error(error_kind::shape,
                        where() + ": shape " + numgap::detail::shape_text(shape) + " of " + type_name + " needs " +
                            (bits % 8 == 0 ? std::to_string(bits / 8) : std::to_string(bits) + " bits, not whole") +
                            " bytes but data_offsets " + offsets_text() + " hold " + std::to_string(end - begin),
                        at(data_start + begin, key));
        on_entry(safetensors_entry_read{key, safetensors_dtype_slot(known - std::begin(safetensors_dtypes)), shape,
                                        data_start + begin, data_start + end});
    };
    stream.read_object(1, check_duplicate_keys, read_entry, expected_entries);
    stream.finish();
    return data_start;
}

// Checks that entries 0 .. count-1 tile the data region of a file of
// `file_size` bytes exactly (see safetensors.hpp): range(i) gives entry i's
// absolute [begin, end) as a pair, key(i) its key for messages. At most 2^32
// entries (a header of at most 100 MB holds fewer than 2.5 million).
template <class Range, class Key>
void check_safetensors_tiling(std::size_t count, const Range& range, const Key& key, std::string_view file,
                              std::uint64_t data_start, std::uint64_t file_size) {
    NUMGAP_ASSERT(count <= std::size_t(0xffffffffu));
    const std::string in_file = "safetensors file '" + std::string(file) + "'";
    const auto at = [&](std::uint64_t offset, std::string_view item) {
        return error_location::at_offset(std::string(file), offset, std::string(item));
    };
    std::vector<std::uint32_t> by_offset(count);
    for (std::size_t i = 0; i < count; ++i) by_offset[i] = std::uint32_t(i);
    // Writers usually lay the data out in header order: then checking is enough.
    const auto in_file_order = [&](std::uint32_t a, std::uint32_t b) { return range(a) < range(b); };
    if (!std::is_sorted(by_offset.begin(), by_offset.end(), in_file_order))
        std::sort(by_offset.begin(), by_offset.end(), in_file_order);
    std::uint64_t covered = data_start;
    std::size_t previous = count;
    for (const std::uint32_t entry : by_offset) {
        const auto [begin, end] = range(entry);
        if (begin < covered) {
            const auto [previous_begin, previous_end] = range(previous);
            throw error(error_kind::schema,
                        in_file + ": key '" + std::string(key(entry)) + "' (bytes " + std::to_string(begin) + " to " +
                            std::to_string(end) + ") overlaps key '" + std::string(key(previous)) + "' (bytes " +
                            std::to_string(previous_begin) + " to " + std::to_string(previous_end) + ")",
                        at(begin, key(entry)));
        }
        if (begin > covered)
            throw error(error_kind::schema,
                        in_file + ": key '" + std::string(key(entry)) + "' begins at byte " + std::to_string(begin) +
                            ", leaving a hole after byte " + std::to_string(covered) +
                            " (the data must be covered exactly, as the reference implementation requires)",
                        at(covered, key(entry)));
        covered = end;
        previous = entry;
    }
    if (covered != file_size)
        throw error(error_kind::schema,
                    in_file + " has " + std::to_string(file_size - covered) +
                        " bytes after the last tensor (from offset " + std::to_string(covered) +
                        ") that no key describes",
                    at(covered, {}));
}

} // namespace detail
} // namespace numgap::io
