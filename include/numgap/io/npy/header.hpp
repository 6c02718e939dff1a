#pragma once
// Reading a .npy header (NumPy format versions 1.0, 2.0, 3.0) without
// copying: parse_npy_header() checks the magic, version, the Python-literal
// header dict ('descr', 'fortran_order', 'shape') and that the bytes after
// the header hold exactly the data the shape needs; io/npy/view.hpp then
// points a tensor_view at those bytes.
//
// Supported descr: '<f4' '<f8' '<f2' '|i1' '|u1' '<i2' '<u2' '<i4' '|b1', with
// '=' (native, little-endian on every platform numgap builds for) and '<'/'|'
// interchangeable where they mean the same thing. Big-endian data is refused
// (error "big-endian ... not supported"). '|V2'/'<V2' is how NumPy saves
// ml_dtypes.bfloat16, and '|V1'/'<V1' how it saves ml_dtypes' float8 types -
// but any opaque record of that size looks the same, so it is read only when
// the caller declares a dtype of the same size for it (graph.json "dtype":
// "bfloat16" or "float8_e4m3fn", ...); otherwise it is an error that says how
// to declare it. A '|V1' declared float4_e2m1fn (ml_dtypes stores it one
// code a byte) is read as uint8 codes, packed at load by io/loaded_tensor.hpp;
// a '|V1' declared int4 / uint4 is refused (store those as int8 / uint8).
// A file whose data is longer than the shape needs is an error, not tolerated:
// NumPy never writes trailing bytes, so they mean a wrong header or a bad file.
//
// Errors are numgap::error naming the file (the `source` argument) and the
// reason, with kind and location: `format` for bad magic, versions, header
// syntax, truncation and trailing bytes (at the byte offset where the file
// goes wrong); `dtype` for descr problems (item "descr"); `limit` for absurd
// shapes (item "shape") and oversized headers.
// Complexity: O(header length). Throws: numgap::error, std::bad_alloc.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/shape.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/io/byte_signature.hpp>
#include <numgap/io/little_endian.hpp>

namespace numgap::io {

static_assert(std::endian::native == std::endian::little,
              "numgap's .npy reader maps little-endian data in place and needs a little-endian host.");

struct npy_header {
    int major_version = 1;
    int minor_version = 0;
    std::string descr;                // as written, e.g. "<f4"
    dtype type = dtype::float32;      // after applying a declared type to opaque '<V2' / '|V1'
    bool fortran_order = false;
    std::vector<std::int64_t> shape;  // empty for a 0-d array
    std::size_t data_offset = 0;      // bytes from the start of the file to the data
    std::uint64_t data_bytes = 0;     // element count times element size
};

namespace detail {

// The shape helpers live in core/shape.hpp; the readers name them here.
using numgap::detail::checked_byte_count;
using numgap::detail::shape_text;

class npy_header_parser {
public:
    // `text` is the header dict, which starts `text_offset` bytes into the file.
    npy_header_parser(std::string_view text, std::string_view source, std::uint64_t text_offset)
        : text_(text), source_(source), text_offset_(text_offset) {}

    void parse(npy_header& header) {
        bool seen_descr = false, seen_order = false, seen_shape = false;
        skip_space();
        expect('{');
        for (;;) {
            skip_space();
            if (peek() == '}') {
                ++position_;
                break;
            }
            const std::string key = parse_string();
            skip_space();
            expect(':');
            skip_space();
            if (key == "descr") {
                if (seen_descr) fail("'descr' appears twice");
                seen_descr = true;
                if (peek() == '[')
                    fail("has a structured dtype (a list descr); only plain numeric dtypes are supported");
                header.descr = parse_string();
            } else if (key == "fortran_order") {
                if (seen_order) fail("'fortran_order' appears twice");
                seen_order = true;
                header.fortran_order = parse_bool();
            } else if (key == "shape") {
                if (seen_shape) fail("'shape' appears twice");
                seen_shape = true;
                header.shape = parse_shape();
            } else {
                fail("has an unexpected key '" + key + "' (expected 'descr', 'fortran_order', 'shape')");
            }
            skip_space();
            if (peek() == ',') {
                ++position_;
                continue;
            }
            skip_space();
            if (peek() != '}') fail("expected ',' or '}' after a value");
        }
        // NumPy pads the dict with spaces and ends it with '\n'.
        for (; position_ < text_.size(); ++position_)
            if (text_[position_] != ' ' && text_[position_] != '\n' && text_[position_] != '\0' &&
                text_[position_] != '\t' && text_[position_] != '\r')
                fail("has unexpected text after the header dict");
        if (!seen_descr || !seen_order || !seen_shape)
            fail(std::string("is missing the ") +
                 (!seen_descr ? "'descr'" : !seen_order ? "'fortran_order'" : "'shape'") + " key");
    }

private:
    [[noreturn]] void fail(const std::string& reason) const {
        throw error(error_kind::format,
                    "'" + std::string(source_) + "': .npy header " + reason + " (at header offset " +
                        std::to_string(position_) + ")",
                    error_location::at_offset(std::string(source_), text_offset_ + position_));
    }
    char peek() const { return position_ < text_.size() ? text_[position_] : '\0'; }
    void skip_space() {
        while (position_ < text_.size() && (text_[position_] == ' ' || text_[position_] == '\t' ||
                                             text_[position_] == '\n' || text_[position_] == '\r'))
            ++position_;
    }
    void expect(char wanted) {
        if (peek() != wanted) fail(std::string("expected '") + wanted + "'");
        ++position_;
    }
    std::string parse_string() {
        const char quote = peek();
        if (quote != '\'' && quote != '"') fail("expected a quoted string");
        const std::size_t begin = ++position_;
        while (position_ < text_.size() && text_[position_] != quote) {
            if (text_[position_] == '\\') fail("has an escape sequence in a string, which no dtype or key needs");
            ++position_;
        }
        if (position_ >= text_.size()) fail("has an unterminated string");
        return std::string(text_.substr(begin, position_++ - begin));
    }
    bool parse_bool() {
        if (text_.substr(position_, 4) == "True") {
            position_ += 4;
            return true;
        }
        if (text_.substr(position_, 5) == "False") {
            position_ += 5;
            return false;
        }
        fail("expected True or False for 'fortran_order'");
    }
    std::vector<std::int64_t> parse_shape() {
        expect('(');
        std::vector<std::int64_t> shape;
        for (;;) {
            skip_space();
            if (peek() == ')') {
                ++position_;
                return shape;
            }
            if (peek() == '-') fail("has a negative dimension in 'shape'");
            if (peek() < '0' || peek() > '9') fail("expected a dimension or ')' in 'shape'");
            std::int64_t value = 0;
            while (peek() >= '0' && peek() <= '9') {
                if (__builtin_mul_overflow(value, 10, &value) ||
                    __builtin_add_overflow(value, peek() - '0', &value))
                    fail("has a dimension in 'shape' too large for 64 bits");
                ++position_;
            }
            if (peek() == 'L') ++position_; // Python 2 long literal
            shape.push_back(value);
            if (shape.size() > std::size_t(max_rank))
                fail("has a 'shape' of rank above numgap's maximum rank " + std::to_string(max_rank));
            skip_space();
            if (peek() == ',') {
                ++position_;
                continue;
            }
            if (peek() != ')') fail("expected ',' or ')' in 'shape'");
        }
    }

    std::string_view text_;
    std::string_view source_;
    std::uint64_t text_offset_;
    std::size_t position_ = 0;
};

// The size of an opaque record descr ('|V1', '<V2': how NumPy saves ml_dtypes'
// float8 and bfloat16 types), 0 for any other descr.
inline std::size_t opaque_descr_size(std::string_view descr) noexcept {
    if (!descr.empty() && (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=')) descr.remove_prefix(1);
    return descr == "V1" ? 1 : descr == "V2" ? 2 : 0;
}

// descr -> dtype; nullopt for the opaque 1- and 2-byte records ml_dtypes uses
// for float8 and bfloat16.
inline std::optional<dtype> dtype_from_descr(const std::string& descr, std::string_view source) {
    const auto unsupported = [&](const std::string& why) -> error {
        return error(error_kind::dtype,
                     "'" + std::string(source) + "': unsupported .npy dtype descr '" + descr + "'" + why,
                     error_location::at_item(std::string(source), "descr"));
    };
    if (descr.size() < 2) throw unsupported("");
    const char order = descr[0];
    const std::string code = (order == '<' || order == '>' || order == '|' || order == '=')
                                 ? descr.substr(1)
                                 : descr;
    struct entry {
        std::string_view code;
        dtype type;
    };
    constexpr entry table[] = {{"f4", dtype::float32}, {"f8", dtype::float64}, {"f2", dtype::float16},
                               {"i1", dtype::int8},    {"u1", dtype::uint8},   {"i2", dtype::int16},
                               {"u2", dtype::uint16},  {"i4", dtype::int32},   {"b1", dtype::boolean}};
    std::optional<dtype> found;
    for (const entry& candidate : table)
        if (candidate.code == code) found = candidate.type;
    const std::size_t opaque_size = opaque_descr_size(descr);
    if (!found && opaque_size == 0)
        throw unsupported(" (supported: <f4 <f8 <f2 |i1 |u1 <i2 <u2 <i4 |b1, and <V2 |V1 with a declared dtype)");
    const std::size_t item_size = found ? size_of(*found) : opaque_size;
    if (order == '>' && item_size > 1)
        throw error(error_kind::dtype,
                    "'" + std::string(source) + "': big-endian data (descr '" + descr +
                        "') is not supported; save it little-endian, e.g. array.astype('<" + code + "')",
                    error_location::at_item(std::string(source), "descr"));
    return found;
}

} // namespace detail

// True when the bytes start with the .npy magic "\x93NUMPY" (run directories
// use it to tell .npy files from raw dumps).
inline bool has_npy_magic(std::span<const std::byte> bytes) noexcept {
    return detail::has_bytes_at(bytes, 0, std::string_view("\x93NUMPY", 6));
}

// The width of the header-length field of .npy format `major_version` (0: unknown version).
inline std::size_t npy_length_field_bytes(int major_version) noexcept {
    return major_version == 1 ? 2 : major_version == 2 || major_version == 3 ? 4 : 0;
}

// How many bytes the magic, version, length field and header dict take, read
// from the first bytes of a .npy file (12 suffice); 0 when they are too few or
// not a .npy start (parse_npy_header then says what is wrong).
inline std::uint64_t npy_preamble_size(std::span<const std::byte> first_bytes) noexcept {
    if (first_bytes.size() < 8 || !has_npy_magic(first_bytes)) return 0;
    const std::size_t length_bytes = npy_length_field_bytes(std::to_integer<int>(first_bytes[6]));
    if (length_bytes == 0 || first_bytes.size() < 8 + length_bytes) return 0;
    return 8 + length_bytes + detail::read_little_endian(first_bytes.data() + 8, int(length_bytes));
}

// Parses and validates the header of .npy data of `total_size` bytes of which
// `bytes` holds the first ones (all of them for a mapped file; only the
// inflated start of a compressed member, so that its shape is checked against
// its declared size before anything is allocated). The header must lie
// within `bytes`. `declared` is the dtype the caller expects (graph.json): it
// must match the file's, and is what makes an opaque '<V2' readable.
inline npy_header parse_npy_header(std::span<const std::byte> bytes, std::uint64_t total_size,
                                   std::string_view source, std::optional<dtype> declared = std::nullopt) {
    NUMGAP_ASSERT(bytes.size() <= total_size);
    const std::string where = "'" + std::string(source) + "'";
    const auto fail = [&](error_kind kind, const std::string& reason, error_location location) {
        return error(kind, where + ": " + reason, std::move(location));
    };
    const auto in_file = [&] { return error_location::in_file(std::string(source)); };
    if (bytes.size() < 10 || !has_npy_magic(bytes))
        throw fail(error_kind::format, "not a .npy file (" +
                    (bytes.size() < 10 && total_size < 10 ? "only " + std::to_string(total_size) + " bytes, too short for the header"
                                       : std::string("missing the \\x93NUMPY magic")) +
                    ")", in_file());
    npy_header header;
    header.major_version = std::to_integer<int>(bytes[6]);
    header.minor_version = std::to_integer<int>(bytes[7]);
    const std::size_t length_bytes = npy_length_field_bytes(header.major_version);
    if (length_bytes == 0)
        throw fail(error_kind::format,
                   "unsupported .npy format version " + std::to_string(header.major_version) + "." +
                       std::to_string(header.minor_version) + " (supported: 1.0, 2.0, 3.0)",
                   error_location::at_offset(std::string(source), 6));
    if (bytes.size() < 8 + length_bytes)
        throw fail(error_kind::format, "truncated .npy file: it ends inside the header length field",
                   error_location::at_offset(std::string(source), bytes.size()));
    const std::uint64_t header_length = detail::read_little_endian(bytes.data() + 8, int(length_bytes));
    const std::uint64_t prefix = 8 + length_bytes;
    if (header_length > total_size - prefix)
        throw fail(error_kind::format,
                   "truncated .npy file: the header claims " + std::to_string(header_length) + " bytes but only " +
                       std::to_string(total_size - prefix) + " follow",
                   error_location::at_offset(std::string(source), total_size));
    if (header_length > bytes.size() - prefix)
        throw fail(error_kind::limit,
                   "the .npy header claims " + std::to_string(header_length) + " bytes, more than the " +
                       std::to_string(bytes.size() - prefix) +
                       " numgap reads before the data (NumPy's headers for the supported dtypes are far shorter)",
                   error_location::at_offset(std::string(source), 8));
    header.data_offset = static_cast<std::size_t>(prefix + header_length);
    const std::string_view text(reinterpret_cast<const char*>(bytes.data() + prefix),
                                static_cast<std::size_t>(header_length));
    detail::npy_header_parser(text, source, prefix).parse(header);

    const std::optional<dtype> stored = detail::dtype_from_descr(header.descr, source);
    if (stored) {
        if (declared && *declared != *stored)
            throw fail(error_kind::dtype,
                       "graph.json declares dtype " + std::string(name_of(*declared)) + " but the file stores " +
                           std::string(name_of(*stored)) + " (descr '" + header.descr + "')",
                       error_location::at_item(std::string(source), "descr"));
        header.type = *stored;
    } else if (declared && *declared == dtype::float4_e2m1fn && detail::opaque_descr_size(header.descr) == 1) {
        // ml_dtypes saves float4_e2m1fn one code a byte: read as those bytes
        // (uint8); finish_loaded_tensor packs them (io/npy/repack_codes.hpp).
        header.type = dtype::uint8;
    } else if (declared && is_packed(*declared)) {
        // ml_dtypes saves int4 / uint4 one element per byte ('|V1'), not packed
        // two per byte as numgap's int4 is: reading it as packed would pair
        // the wrong bytes, so it is refused with the way out.
        throw fail(error_kind::dtype,
                   "descr '" + header.descr + "' holds one element per byte, but graph.json declares the packed dtype " +
                       std::string(name_of(*declared)) +
                       " (two per byte); store the codes as int8 / uint8 (e.g. NumPy's astype(np.int8)) or write "
                       "the packed bytes as a raw file",
                   error_location::at_item(std::string(source), "descr"));
    } else if (declared && size_of(*declared) == detail::opaque_descr_size(header.descr)) {
        header.type = *declared;
    } else {
        const bool one_byte = detail::opaque_descr_size(header.descr) == 1;
        throw fail(error_kind::dtype,
                   "descr '" + header.descr + "' is an opaque " + (one_byte ? "1" : "2") +
                       "-byte type (NumPy saves " +
                       (one_byte ? "ml_dtypes' float8, float6 and float4 types" : "ml_dtypes.bfloat16") +
                       " this way); declare it with \"dtype\": " +
                       (one_byte ? "\"float8_e4m3fn\" (or float8_e5m2, float8_e8m0fnu, float6_e2m3fn, float6_e3m2fn, "
                                   "float4_e2m1fn)"
                                 : "\"bfloat16\"") +
                       " for this tensor in graph.json" +
                       (declared ? " (it declares " + std::string(name_of(*declared)) + ", which is " +
                                       std::to_string(size_of(*declared)) + " bytes wide)"
                                 : std::string()),
                   error_location::at_item(std::string(source), "descr"));
    }

    const std::optional<std::uint64_t> needed = numgap::detail::checked_storage_bytes(header.shape, header.type);
    if (!needed)
        throw fail(error_kind::limit,
                   ".npy shape " + detail::shape_text(header.shape) + " is absurd: its size in bytes overflows 64 bits",
                   error_location::at_item(std::string(source), "shape"));
    header.data_bytes = *needed;
    const std::uint64_t available = total_size - header.data_offset;
    if (available < header.data_bytes)
        throw fail(error_kind::format,
                   "truncated .npy file: shape " + detail::shape_text(header.shape) + " of " +
                       std::string(name_of(header.type)) + " needs " + std::to_string(header.data_bytes) +
                       " bytes of data but the file has " + std::to_string(available),
                   error_location::at_offset(std::string(source), total_size));
    if (available > header.data_bytes)
        throw fail(error_kind::format,
                   ".npy file has " + std::to_string(available - header.data_bytes) + " bytes after the " +
                       std::to_string(header.data_bytes) + " bytes that shape " + detail::shape_text(header.shape) +
                       " of " + std::string(name_of(header.type)) + " needs",
                   error_location::at_offset(std::string(source), header.data_offset + header.data_bytes));
    return header;
}

inline npy_header parse_npy_header(std::span<const std::byte> bytes, std::string_view source,
                                   std::optional<dtype> declared = std::nullopt) {
    return parse_npy_header(bytes, bytes.size(), source, declared);
}

} // namespace numgap::io
