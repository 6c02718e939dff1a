#pragma once
// numgap::io::flatbuffer_reader: a minimal, bounds-checked reader of the
// FlatBuffers binary format: tables, vectors, strings and scalars, which is
// all a schema without unions needs (ETDump, etdump.hpp). Written from the
// format's public description; no generated code, no FlatBuffers library.
//
// The format, as far as it is read here (all integers little-endian):
//  - the buffer starts with a uoffset (u32) to the root table; a file
//    identifier, when there is one, is the 4 bytes after it;
//  - a table at position T starts with an soffset (i32): its vtable is at
//    T - soffset. A vtable is u16 vtable size in bytes (>= 4, even), u16 size
//    of the table's inline data (>= 4), then one u16 per field id: the
//    field's position relative to T, 0 when absent (so is a field id beyond
//    the vtable: the default applies);
//  - a field referring to a table, vector or string holds a uoffset (u32)
//    relative to the field's own position; uoffsets only point forward;
//  - a vector is a u32 element count followed by the elements; a vector of
//    tables holds one uoffset per element (relative to that element);
//  - a string is a vector of bytes followed by a NUL byte.
//
// Checks (each failure is a numgap::error of kind format, located
// error_location::at_offset(file, byte offset in the file, what), whose message
// names the file, the offset, the item being read and the reason): every
// position and every byte read lies inside the buffer; a vtable and a table's
// inline data fit in it, and a field lies inside its table's inline data; a
// vector's elements and a string's bytes and terminator fit; a string ends
// with its NUL. Nothing is ever read outside the span given, whatever the
// bytes. Reads go through memcpy-free byte assembly, so misaligned positions
// are no undefined behaviour (they are accepted: only the bounds matter here).
//
// Nesting: uoffsets are unsigned and only lead forward, so no chain of tables
// can loop; how deep a caller walks is fixed by its schema (the reader itself
// never recurses). Amplification (many uoffsets naming the same vector or
// table) is the caller's to bound: it counts what it visits (etdump.hpp does).
//
// Positions are u32 (a flatbuffer is at most 2 GiB by definition); a buffer
// larger than that is refused at construction. Complexity: O(1) per access.
// A reader holds a span of the caller's bytes and must not outlive them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <numgap/core/error.hpp>
#include <numgap/io/little_endian.hpp>

namespace numgap::io {

class flatbuffer_reader;

// A vector in the buffer: `count` elements of `element_size` bytes from `first`.
struct flatbuffer_vector {
    const flatbuffer_reader* reader = nullptr;
    std::uint32_t first = 0;
    std::uint32_t count = 0;
    std::uint32_t element_size = 0;

    std::uint32_t size() const noexcept { return count; }
    // Element `index` (< size()) read as a little-endian integer of element_size bytes.
    std::uint64_t unsigned_at(std::uint32_t index) const noexcept;
    std::int64_t signed_at(std::uint32_t index) const noexcept;
    // Position of element `index` (< size()), for vectors of tables.
    std::uint32_t position_of(std::uint32_t index) const noexcept { return first + index * element_size; }
};

// A table in the buffer, its vtable checked.
class flatbuffer_table {
public:
    flatbuffer_table() = default;

    std::uint32_t position() const noexcept { return position_; }

    // The field's position, or nullopt when it is absent; `width` bytes of it
    // must lie inside the table's inline data.
    std::optional<std::uint32_t> field(int id, std::uint32_t width, std::string_view what) const;

    // Scalars: the stored value, or `fallback` (the schema's default) when absent.
    std::uint64_t unsigned_field(int id, int bytes, std::uint64_t fallback, std::string_view what) const;
    std::int64_t signed_field(int id, int bytes, std::int64_t fallback, std::string_view what) const;

    // References: nullopt when the field is absent.
    std::optional<flatbuffer_table> table_field(int id, std::string_view what) const;
    std::optional<flatbuffer_vector> vector_field(int id, std::uint32_t element_size, std::string_view what) const;
    std::optional<std::string_view> string_field(int id, std::string_view what) const;

private:
    friend class flatbuffer_reader;
    const flatbuffer_reader* reader_ = nullptr;
    std::uint32_t position_ = 0;
    std::uint32_t vtable_ = 0;
    std::uint16_t vtable_size_ = 0;
    std::uint16_t inline_size_ = 0;
};

class flatbuffer_reader {
public:
    // `bytes` is the flatbuffer itself (after any size prefix); `file` names
    // it in errors and `file_offset` is where bytes[0] lies in that file, so
    // that errors give offsets a hex dump of the file shows.
    flatbuffer_reader(std::span<const std::byte> bytes, std::string file, std::uint64_t file_offset = 0)
        : bytes_(bytes), file_(std::move(file)), file_offset_(file_offset) {
        if (bytes_.size() > std::size_t(0x7fffffff))
            fail(error_kind::limit, 0, "flatbuffer", "it is larger than 2 GiB, the format's limit");
    }

    std::span<const std::byte> bytes() const noexcept { return bytes_; }
    const std::string& file() const noexcept { return file_; }
    std::uint64_t file_offset() const noexcept { return file_offset_; }

    // The root table (the uoffset at position 0).
    flatbuffer_table root(std::string_view what) const { return table_at_reference(0, what); }

    // The table whose uoffset is stored at `reference` (a field or a vector element).
    flatbuffer_table table_at_reference(std::uint32_t reference, std::string_view what) const {
        return table_at(follow(reference, what), what);
    }

    // The table at `position`, its vtable and inline data checked.
    flatbuffer_table table_at(std::uint32_t position, std::string_view what) const {
        require(position, 4, what, "a table");
        const std::int64_t soffset = std::int32_t(std::uint32_t(read(position, 4)));
        const std::int64_t vtable = std::int64_t(position) - soffset;
        if (vtable < 0 || vtable + 4 > std::int64_t(bytes_.size()))
            fail(error_kind::format, position, what,
                 "its vtable offset " + std::to_string(soffset) + " leads outside the buffer");
        flatbuffer_table table;
        table.reader_ = this;
        table.position_ = position;
        table.vtable_ = std::uint32_t(vtable);
        table.vtable_size_ = std::uint16_t(read(table.vtable_, 2));
        table.inline_size_ = std::uint16_t(read(table.vtable_ + 2, 2));
        if (table.vtable_size_ < 4 || table.vtable_size_ % 2 != 0)
            fail(error_kind::format, table.vtable_, what,
                 "its vtable declares " + std::to_string(table.vtable_size_) + " bytes (at least 4, even)");
        require(table.vtable_, table.vtable_size_, what, "the table's vtable");
        if (table.inline_size_ < 4)
            fail(error_kind::format, table.vtable_, what,
                 "its vtable declares " + std::to_string(table.inline_size_) + " bytes of table data (at least 4)");
        require(position, table.inline_size_, what, "the table's data");
        return table;
    }

    // The vector whose uoffset is stored at `reference`.
    flatbuffer_vector vector_at_reference(std::uint32_t reference, std::uint32_t element_size,
                                          std::string_view what) const {
        const std::uint32_t position = follow(reference, what);
        require(position, 4, what, "a vector length");
        const std::uint64_t count = read(position, 4);
        const std::uint64_t bytes = count * element_size;
        if (std::uint64_t(position) + 4 + bytes > bytes_.size())
            fail(error_kind::format, position, what,
                 "its " + std::to_string(count) + " elements of " + std::to_string(element_size) +
                     " bytes reach past the end of the buffer (" + std::to_string(bytes_.size()) + " bytes)");
        return flatbuffer_vector{this, position + 4, std::uint32_t(count), element_size};
    }

    // The string whose uoffset is stored at `reference`.
    std::string_view string_at_reference(std::uint32_t reference, std::string_view what) const {
        const flatbuffer_vector characters = vector_at_reference(reference, 1, what);
        const std::uint32_t end = characters.first + characters.count;
        if (end >= bytes_.size() || bytes_[end] != std::byte{0})
            fail(error_kind::format, end, what, "the string is not terminated by a NUL byte");
        return {reinterpret_cast<const char*>(bytes_.data()) + characters.first, characters.count};
    }

    // `count` (1..8) little-endian bytes at `position`. Precondition: in bounds.
    std::uint64_t read(std::uint32_t position, int count) const noexcept {
        return detail::read_little_endian(bytes_.data() + position, count);
    }

    // Throws unless [position, position + width) lies inside the buffer.
    void require(std::uint64_t position, std::uint64_t width, std::string_view what, std::string_view item) const {
        if (position > bytes_.size() || width > bytes_.size() - position)
            fail(error_kind::format, position, what,
                 std::string(item) + " of " + std::to_string(width) + " bytes there reaches past the end of the buffer (" +
                     std::to_string(bytes_.size()) + " bytes)");
    }

    [[noreturn]] void fail(error_kind kind, std::uint64_t position, std::string_view what,
                           const std::string& reason) const {
        const std::uint64_t offset = file_offset_ + position;
        throw error(kind,
                    "flatbuffer file '" + file_ + "', " + std::string(what) + " at byte offset " +
                        std::to_string(offset) + ": " + reason,
                    error_location::at_offset(file_, offset, std::string(what)));
    }

private:
    // The position the uoffset stored at `reference` leads to.
    std::uint32_t follow(std::uint32_t reference, std::string_view what) const {
        require(reference, 4, what, "an offset");
        const std::uint64_t target = std::uint64_t(reference) + read(reference, 4);
        if (target >= bytes_.size())
            fail(error_kind::format, reference, what,
                 "its offset leads to byte " + std::to_string(file_offset_ + target) + ", past the end of the buffer");
        return std::uint32_t(target);
    }

    std::span<const std::byte> bytes_;
    std::string file_;
    std::uint64_t file_offset_ = 0;
};

inline std::uint64_t flatbuffer_vector::unsigned_at(std::uint32_t index) const noexcept {
    return reader->read(position_of(index), int(element_size));
}

inline std::int64_t flatbuffer_vector::signed_at(std::uint32_t index) const noexcept {
    const std::uint64_t value = unsigned_at(index);
    if (element_size >= 8) return std::int64_t(value);
    const std::uint64_t sign = std::uint64_t(1) << (8 * element_size - 1);
    return std::int64_t(value ^ sign) - std::int64_t(sign);
}

inline std::optional<std::uint32_t> flatbuffer_table::field(int id, std::uint32_t width, std::string_view what) const {
    const std::uint32_t slot = 4 + 2 * std::uint32_t(id);
    if (slot + 2 > vtable_size_) return std::nullopt; // written by an older schema: the default applies
    const std::uint32_t relative = std::uint32_t(reader_->read(vtable_ + slot, 2));
    if (relative == 0) return std::nullopt;
    if (relative + width > inline_size_)
        reader_->fail(error_kind::format, position_, what,
                      "the field at table offset " + std::to_string(relative) + " (" + std::to_string(width) +
                          " bytes) lies outside the table's " + std::to_string(inline_size_) + " bytes of data");
    return position_ + relative;
}

inline std::uint64_t flatbuffer_table::unsigned_field(int id, int bytes, std::uint64_t fallback,
                                                      std::string_view what) const {
    const std::optional<std::uint32_t> at = field(id, std::uint32_t(bytes), what);
    return at ? reader_->read(*at, bytes) : fallback;
}

inline std::int64_t flatbuffer_table::signed_field(int id, int bytes, std::int64_t fallback,
                                                   std::string_view what) const {
    const std::optional<std::uint32_t> at = field(id, std::uint32_t(bytes), what);
    if (!at) return fallback;
    const flatbuffer_vector one{reader_, *at, 1, std::uint32_t(bytes)};
    return one.signed_at(0);
}

inline std::optional<flatbuffer_table> flatbuffer_table::table_field(int id, std::string_view what) const {
    const std::optional<std::uint32_t> at = field(id, 4, what);
    if (!at) return std::nullopt;
    return reader_->table_at_reference(*at, what);
}

inline std::optional<flatbuffer_vector> flatbuffer_table::vector_field(int id, std::uint32_t element_size,
                                                                       std::string_view what) const {
    const std::optional<std::uint32_t> at = field(id, 4, what);
    if (!at) return std::nullopt;
    return reader_->vector_at_reference(*at, element_size, what);
}

inline std::optional<std::string_view> flatbuffer_table::string_field(int id, std::string_view what) const {
    const std::optional<std::uint32_t> at = field(id, 4, what);
    if (!at) return std::nullopt;
    return reader_->string_at_reference(*at, what);
}

} // namespace numgap::io
