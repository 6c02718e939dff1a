#pragma once
// numgap::io::npz_archive: the members of a .npz file (a zip archive of .npy
// files, as np.savez and np.savez_compressed write it).
//
// open() maps the archive and reads the end-of-central-directory record
// (ZIP64 records too: NumPy writes ZIP64 local headers for every member and
// ZIP64 end records for large archives), the central directory and every
// member's local header. member_bytes() returns a stored (method 0) member as
// a span straight into the mapping - no copy - and inflates a deflated
// (method 8) member into caller-owned storage, then checks its CRC-32.
// Stored members are not CRC-checked: that would read every byte at open and
// defeat mapping; .npy files on disk carry no checksum either.
//
// Limits (an archive is untrusted input): members whose local header and
// data overlap another member's are refused at open, so each compressed byte
// is decoded for one member only; a deflated member may not declare more
// than max_inflate_ratio (1032, deflate's own maximum) times its compressed
// size, nor more than max_inflated_bytes (read_policy, default 4 GiB; the
// caller may raise it); both are checked before anything is allocated.
// member_prefix() inflates only a member's first bytes, so run_directory
// checks the .npy header against the declared size before member_bytes()
// allocates the declared size (not zero-filled: memory becomes resident only
// as the stream fills it) and inflates with that size as a hard limit (more
// output or less is an error). Inflating a whole archive therefore costs at
// most 1032 times its size in work and, per member, its declared size in
// memory; running out of memory is a numgap::error naming archive and member.
//
// Errors (numgap::error, naming the archive and, where there is one, the
// member): no end record (truncated or not a zip), multi-disk archives,
// directory or header records out of bounds or with a wrong signature,
// duplicate member names, a local header that disagrees with the directory,
// overlapping members, and - when the member is read - encryption, methods
// other than 0 and 8, impossible or over-limit sizes, corrupt deflate data
// and CRC mismatches. Their kind is format, except duplicate member names
// (schema) and impossible or over-limit declared sizes and running out of
// memory (limit); where() holds the archive, the member's name and the byte
// of the archive at fault.
//
// Longer than ~350 lines: one class whose directory checks and member checks
// share the archive's state and error scheme; split apart, neither half reads
// on its own.
//
// Complexity: open is O(members + central directory size); find is O(1) on
// average (a name index built at open); member_bytes is
// O(1) for stored and O(size) for deflated members. A const archive is safe
// to read from several threads at once.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/io/crc32.hpp>
#include <numgap/io/inflate.hpp>
#include <numgap/io/little_endian.hpp>
#include <numgap/io/mapped_file.hpp>
#include <numgap/io/read_policy.hpp>

namespace numgap::io {

struct npz_member {
    std::string name; // as stored, e.g. "conv1.npy" or "block/conv1.npy"
    std::uint16_t flags = 0;
    std::uint16_t method = 0; // 0 stored, 8 deflated
    std::uint32_t crc32 = 0;
    std::uint64_t compressed_size = 0;
    std::uint64_t uncompressed_size = 0;
    std::uint64_t local_offset = 0; // first byte of the member's local header
    std::uint64_t data_offset = 0;  // first byte of the member's data in the archive
};

class npz_archive {
public:
    static constexpr std::uint64_t max_inflate_ratio = 1032;

    static npz_archive open(const std::filesystem::path& path,
                            std::uint64_t max_inflated_bytes = read_policy::default_max_inflated_bytes) {
        npz_archive archive;
        archive.max_inflated_bytes_ = max_inflated_bytes;
        archive.mapping_ = std::make_shared<const mapped_file>(mapped_file::open(path));
        archive.read_directory();
        return archive;
    }

    const std::filesystem::path& path() const noexcept { return mapping_->path(); }
    std::span<const npz_member> members() const noexcept { return members_; }
    // O(1) on average: run_directory calls it for every load, so a scan would
    // make loading a whole archive O(members^2).
    const npz_member* find(std::string_view name) const noexcept {
        const auto found = index_.find(name);
        return found == index_.end() ? nullptr : &members_[found->second];
    }
    // The mapping stored members point into; keep it alive as long as such a span.
    const std::shared_ptr<const mapped_file>& mapping() const noexcept { return mapping_; }

    // The member's uncompressed bytes: into the mapping for stored members,
    // into `storage` (replaced) for deflated ones. The buffer is allocated
    // without being zero-filled, so its pages become resident only as the
    // stream really produces them: a stream that claims far more than it
    // holds fails after using little memory.
    std::span<const std::byte> member_bytes(const npz_member& member, std::unique_ptr<std::byte[]>& storage) const {
        const std::span<const std::byte> raw = readable_data(member);
        if (member.method == 0) return raw;
        const std::string where = describe(member);
        const std::size_t size = std::size_t(member.uncompressed_size);
        try {
            storage = std::make_unique_for_overwrite<std::byte[]>(size);
        } catch (const std::bad_alloc&) {
            throw error(error_kind::limit,
                        where + ": not enough memory to inflate its " + std::to_string(size) + " bytes",
                        locate(member));
        }
        const std::span<std::byte> output(storage.get(), size);
        inflate_into(raw, output, where, nullptr, locate(member, member.data_offset));
        const std::uint32_t actual = crc32(output);
        if (actual != member.crc32)
            throw error(error_kind::format,
                        where + ": CRC-32 mismatch (the archive records " + hex(member.crc32) +
                            ", the inflated data has " + hex(actual) + ")",
                        locate(member, member.data_offset));
        return output;
    }

    // The first bytes of the member (at most prefix.size(); fewer when the member is
    // shorter), inflating only those: lets a caller check a header against the
    // declared size before member_bytes allocates and inflates everything. Stored
    // members return a view into the mapping. Not CRC-checked (member_bytes is).
    std::span<const std::byte> member_prefix(const npz_member& member, std::span<std::byte> prefix) const {
        const std::span<const std::byte> raw = readable_data(member);
        if (member.method == 0) return raw.first(std::min(raw.size(), prefix.size()));
        const std::size_t wanted = std::size_t(std::min<std::uint64_t>(prefix.size(), member.uncompressed_size));
        return prefix.first(
            inflate_prefix(raw, prefix.first(wanted), describe(member), locate(member, member.data_offset)));
    }

    std::string describe(const npz_member& member) const {
        return "archive '" + path().string() + "', member '" + member.name + "'";
    }
    // Where an error about `member` happened: the archive, the member's name and,
    // when known, the byte of the archive at fault.
    error_location locate(const npz_member& member, std::uint64_t offset = error_location::no_offset) const {
        return error_location::at_offset(path().string(), offset, member.name);
    }

private:
    // The member's stored bytes, after every check that needs no decoding:
    // encryption, method, and for deflated members the declared size against
    // the inflate ratio and max_inflated_bytes_ - all before anything is allocated.
    std::span<const std::byte> readable_data(const npz_member& member) const {
        const std::string where = describe(member);
        if (member.flags & 0x41u)
            throw error(error_kind::format, where + " is encrypted, which numgap does not support",
                        locate(member, member.local_offset));
        const std::span<const std::byte> raw =
            mapping_->bytes().subspan(std::size_t(member.data_offset), std::size_t(member.compressed_size));
        if (member.method == 0) {
            if (member.compressed_size != member.uncompressed_size)
                throw error(error_kind::format,
                            where + " is stored uncompressed but its compressed size " +
                                std::to_string(member.compressed_size) + " differs from its size " +
                                std::to_string(member.uncompressed_size),
                            locate(member, member.local_offset));
            return raw;
        }
        if (member.method != 8)
            throw error(error_kind::format,
                        where + " uses compression method " + std::to_string(member.method) +
                            "; only stored (0) and deflated (8) members are supported",
                        locate(member, member.local_offset));
        // DEFLATE cannot expand data by more than 1032:1 (a 258-byte match costs at
        // least 2 bits); a larger claim is corruption, refused before any allocation.
        if (member.uncompressed_size > member.compressed_size * max_inflate_ratio + 1024)
            throw error(error_kind::limit,
                        where + " declares an uncompressed size of " + std::to_string(member.uncompressed_size) +
                            " bytes, impossible for " + std::to_string(member.compressed_size) +
                            " compressed bytes (deflate expands at most " + std::to_string(max_inflate_ratio) + ":1)",
                        locate(member, member.local_offset));
        if (member.uncompressed_size > max_inflated_bytes_)
            throw error(error_kind::limit,
                        where + " declares " + std::to_string(member.uncompressed_size) +
                            " uncompressed bytes, more than the limit of " + std::to_string(max_inflated_bytes_) +
                            " bytes for one inflated tensor (raise read_policy::max_inflated_bytes to read it)",
                        locate(member, member.local_offset));
        return raw;
    }

    static std::string hex(std::uint32_t value) {
        static constexpr char digits[] = "0123456789abcdef";
        std::string text = "0x";
        for (int shift = 28; shift >= 0; shift -= 4) text += digits[(value >> shift) & 0xf];
        return text;
    }
    // Every archive-level error is format: the bytes are not the zip they claim to be.
    [[noreturn]] void fail(const std::string& reason, std::uint64_t offset = error_location::no_offset) const {
        throw error(error_kind::format, "archive '" + path().string() + "': " + reason,
                    error_location::at_offset(path().string(), offset));
    }
    std::uint64_t read(std::uint64_t offset, int count) const {
        const std::span<const std::byte> bytes = mapping_->bytes();
        if (offset > bytes.size() || std::uint64_t(count) > bytes.size() - offset)
            fail("truncated: a record at byte " + std::to_string(offset) + " runs past the end of the file", offset);
        return detail::read_little_endian(bytes.data() + offset, count);
    }

    void read_directory() {
        const std::uint64_t size = mapping_->size();
        constexpr std::uint64_t end_record_size = 22;
        if (size < end_record_size)
            fail("not a zip archive (" + std::to_string(size) + " bytes, too short for an end record)");
        // The end record sits at the very end unless a comment (<= 65535 bytes) follows it;
        // requiring the comment length to reach exactly the end rejects look-alike bytes.
        std::uint64_t end_offset = size;
        const std::uint64_t lowest = size >= end_record_size + 0xffff ? size - end_record_size - 0xffff : 0;
        for (std::uint64_t candidate = size - end_record_size + 1; candidate-- > lowest;) {
            if (read(candidate, 4) == 0x06054b50u && candidate + end_record_size + read(candidate + 20, 2) == size) {
                end_offset = candidate;
                break;
            }
        }
        if (end_offset == size)
            fail("no zip end-of-central-directory record (the file is truncated or not an .npz archive)");

        std::uint64_t disk = read(end_offset + 4, 2), directory_disk = read(end_offset + 6, 2);
        std::uint64_t entries_here = read(end_offset + 8, 2), entries = read(end_offset + 10, 2);
        std::uint64_t directory_size = read(end_offset + 12, 4), directory_offset = read(end_offset + 16, 4);
        std::uint64_t directory_end_limit = end_offset;
        if (end_offset >= 20 && read(end_offset - 20, 4) == 0x07064b50u) {
            const std::uint64_t zip64_end = read(end_offset - 20 + 8, 8);
            if (read(end_offset - 20 + 16, 4) > 1) fail("spans several disks, which is not supported", end_offset - 20);
            if (zip64_end > end_offset - 20 || read(zip64_end, 4) != 0x06064b50u)
                fail("the ZIP64 end-of-central-directory locator points at byte " + std::to_string(zip64_end) +
                         ", where there is no ZIP64 end record",
                     end_offset - 20);
            disk = read(zip64_end + 16, 4);
            directory_disk = read(zip64_end + 20, 4);
            entries_here = read(zip64_end + 24, 8);
            entries = read(zip64_end + 32, 8);
            directory_size = read(zip64_end + 40, 8);
            directory_offset = read(zip64_end + 48, 8);
            directory_end_limit = zip64_end;
        } else if (entries == 0xffff || directory_size == 0xffffffffu || directory_offset == 0xffffffffu) {
            fail("the end record needs a ZIP64 record, but there is no ZIP64 locator before it", end_offset);
        }
        if (disk != 0 || directory_disk != 0 || entries_here != entries)
            fail("spans several disks, which is not supported", end_offset);
        if (directory_offset > directory_end_limit || directory_size > directory_end_limit - directory_offset)
            fail("the central directory (" + std::to_string(directory_size) + " bytes at byte " +
                     std::to_string(directory_offset) + ") lies outside the archive",
                 end_offset);
        constexpr std::uint64_t entry_size = 46;
        if (entries > directory_size / entry_size)
            fail("claims " + std::to_string(entries) + " members, more than its " + std::to_string(directory_size) +
                     "-byte central directory can hold",
                 end_offset);

        members_.reserve(std::size_t(entries));
        index_.reserve(std::size_t(entries));
        std::uint64_t position = directory_offset;
        const std::uint64_t directory_end = directory_offset + directory_size;
        for (std::uint64_t index = 0; index < entries; ++index) {
            if (directory_end - position < entry_size || read(position, 4) != 0x02014b50u)
                fail("central directory entry " + std::to_string(index) + " at byte " + std::to_string(position) +
                         " is corrupt (bad signature or out of bounds)",
                     position);
            npz_member member;
            member.flags = std::uint16_t(read(position + 8, 2));
            member.method = std::uint16_t(read(position + 10, 2));
            member.crc32 = std::uint32_t(read(position + 16, 4));
            member.compressed_size = read(position + 20, 4);
            member.uncompressed_size = read(position + 24, 4);
            const std::uint64_t name_length = read(position + 28, 2), extra_length = read(position + 30, 2),
                                comment_length = read(position + 32, 2);
            std::uint64_t start_disk = read(position + 34, 2);
            std::uint64_t local_offset = read(position + 42, 4);
            const std::uint64_t variable = name_length + extra_length + comment_length;
            if (variable > directory_end - position - entry_size)
                fail("central directory entry " + std::to_string(index) + " runs past the end of the directory",
                     position);
            const auto* base = reinterpret_cast<const char*>(mapping_->data());
            member.name.assign(base + position + entry_size, std::size_t(name_length));
            const std::string where = describe(member);

            // ZIP64 extended information: 64-bit values for the fields saturated above, in this order.
            for (std::uint64_t extra = position + entry_size + name_length,
                               extra_end = extra + extra_length;
                 extra + 4 <= extra_end;) {
                const std::uint64_t id = read(extra, 2), field_size = read(extra + 2, 2);
                if (field_size > extra_end - extra - 4)
                    throw error(error_kind::format, where + ": corrupt extra field in the directory",
                                locate(member, extra));
                if (id == 0x0001) {
                    std::uint64_t field = extra + 4;
                    const std::uint64_t field_end = field + field_size;
                    const auto next64 = [&](std::uint64_t& value, int width) {
                        if (field + std::uint64_t(width) > field_end)
                            throw error(error_kind::format,
                                        where + ": ZIP64 extra field is too short for the values it must hold",
                                        locate(member, extra));
                        value = read(field, width);
                        field += std::uint64_t(width);
                    };
                    if (member.uncompressed_size == 0xffffffffu) next64(member.uncompressed_size, 8);
                    if (member.compressed_size == 0xffffffffu) next64(member.compressed_size, 8);
                    if (local_offset == 0xffffffffu) next64(local_offset, 8);
                    if (start_disk == 0xffff) next64(start_disk, 4);
                }
                extra += 4 + field_size;
            }
            if (start_disk != 0)
                throw error(error_kind::format, where + " lives on another disk, which is not supported",
                            locate(member, position));
            // Keys view the names inside the mapping, which lives as long as the archive.
            if (!index_.emplace(std::string_view(base + position + entry_size, std::size_t(name_length)),
                                members_.size())
                     .second)
                throw error(error_kind::schema, where + " appears twice in the central directory",
                            locate(member, position));

            constexpr std::uint64_t local_size = 30;
            if (local_offset > directory_offset || read(local_offset, 4) != 0x04034b50u)
                throw error(error_kind::format,
                            where + ": no local header at byte " + std::to_string(local_offset) +
                                " (the archive is corrupt)",
                            locate(member, local_offset));
            const std::uint64_t local_name_length = read(local_offset + 26, 2),
                                local_extra_length = read(local_offset + 28, 2);
            if (local_name_length != name_length || local_offset + local_size + name_length > size ||
                std::string_view(base + local_offset + local_size, std::size_t(name_length)) != member.name)
                throw error(error_kind::format,
                            where + ": the local header names a different member (the archive is corrupt)",
                            locate(member, local_offset));
            member.data_offset = local_offset + local_size + local_name_length + local_extra_length;
            if (member.data_offset > directory_offset || member.compressed_size > directory_offset - member.data_offset)
                throw error(error_kind::format,
                            where + ": its " + std::to_string(member.compressed_size) + " bytes of data at byte " +
                                std::to_string(member.data_offset) +
                                " run past the central directory (the archive is truncated or corrupt)",
                            locate(member, member.data_offset));
            member.local_offset = local_offset;
            members_.push_back(std::move(member));
            position += entry_size + variable;
        }
        reject_overlapping_members();
    }

    // Members whose local header and data share bytes with another member's are
    // how a small archive makes a reader inflate one stream many times (64
    // members over one 256 MiB stream: 16 GiB of work from a 267 KB file).
    // np.savez never writes them; like current zip readers, refuse them, so
    // that every compressed byte belongs to one member and inflating a whole
    // archive costs at most max_inflate_ratio times its size.
    void reject_overlapping_members() const {
        std::vector<const npz_member*> by_offset;
        by_offset.reserve(members_.size());
        for (const npz_member& member : members_) by_offset.push_back(&member);
        std::sort(by_offset.begin(), by_offset.end(),
                  [](const npz_member* a, const npz_member* b) { return a->local_offset < b->local_offset; });
        for (std::size_t i = 1; i < by_offset.size(); ++i) {
            const npz_member& before = *by_offset[i - 1];
            const npz_member& after = *by_offset[i];
            if (before.data_offset + before.compressed_size > after.local_offset)
                throw error(error_kind::format,
                            describe(after) + " overlaps member '" + before.name + "' (its header at byte " +
                                std::to_string(after.local_offset) + " lies inside the other's data, bytes " +
                                std::to_string(before.local_offset) + " to " +
                                std::to_string(before.data_offset + before.compressed_size) +
                                "); numgap refuses archives whose members share bytes",
                            locate(after, after.local_offset));
        }
    }

    std::shared_ptr<const mapped_file> mapping_;
    std::uint64_t max_inflated_bytes_ = read_policy::default_max_inflated_bytes;
    std::vector<npz_member> members_;
    std::unordered_map<std::string_view, std::size_t> index_; // member name -> index in members_
};

} // namespace numgap::io
