#pragma once
// Test support: builds small zip archives byte by byte, including the hostile
// ones no zip tool writes (sizes that lie, members that overlap), and raw
// DEFLATE streams of stored blocks. Big claims stay claims: nothing here
// allocates what a member declares.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace numgap_test {

// A raw DEFLATE stream of stored blocks holding `data` (then final), as a test
// wants when it only cares what the stream produces, not how small it is.
inline std::vector<std::byte> deflate_stored(std::span<const std::byte> data) {
    std::vector<std::byte> stream;
    std::size_t done = 0;
    do {
        const std::size_t length = std::min<std::size_t>(data.size() - done, 0xffff);
        const bool final_block = done + length == data.size();
        stream.push_back(std::byte(final_block ? 1 : 0)); // BFINAL, BTYPE 00, padding to the byte
        stream.push_back(std::byte(length & 0xff));
        stream.push_back(std::byte(length >> 8));
        stream.push_back(std::byte(~length & 0xff));
        stream.push_back(std::byte((~length >> 8) & 0xff));
        stream.insert(stream.end(), data.begin() + std::ptrdiff_t(done), data.begin() + std::ptrdiff_t(done + length));
        done += length;
    } while (done < data.size());
    return stream;
}

class zip_builder {
public:
    struct record {
        std::string name;
        std::uint16_t method = 8;
        std::uint32_t crc32 = 0;
        std::uint32_t compressed_size = 0;
        std::uint32_t uncompressed_size = 0;
    };

    std::size_t size() const { return bytes_.size(); }

    // A local header at the current end; returns its offset. The data follows through append().
    std::size_t local_header(const record& member) {
        const std::size_t offset = bytes_.size();
        put(0x04034b50u, 4);
        put(20, 2);
        put(0, 2); // flags
        put(member.method, 2);
        put(0, 4); // time and date
        put(member.crc32, 4);
        put(member.compressed_size, 4);
        put(member.uncompressed_size, 4);
        put(member.name.size(), 2);
        put(0, 2); // no extra field
        append_text(member.name);
        return offset;
    }
    void append(std::span<const std::byte> data) { bytes_.insert(bytes_.end(), data.begin(), data.end()); }

    // A central directory entry for a member whose local header is at `local_offset`.
    void directory_entry(const record& member, std::size_t local_offset) {
        directory_.push_back({member, local_offset});
    }

    // Local header, data and directory entry in one go.
    void member(const record& member, std::span<const std::byte> data) {
        const std::size_t offset = local_header(member);
        append(data);
        directory_entry(member, offset);
    }

    std::vector<std::byte> finish() {
        const std::size_t directory_offset = bytes_.size();
        for (const auto& [member, local_offset] : directory_) {
            put(0x02014b50u, 4);
            put(20, 2);
            put(20, 2);
            put(0, 2);
            put(member.method, 2);
            put(0, 4);
            put(member.crc32, 4);
            put(member.compressed_size, 4);
            put(member.uncompressed_size, 4);
            put(member.name.size(), 2);
            put(0, 2); // extra
            put(0, 2); // comment
            put(0, 2); // disk
            put(0, 2); // internal attributes
            put(0, 4); // external attributes
            put(local_offset, 4);
            append_text(member.name);
        }
        const std::size_t directory_size = bytes_.size() - directory_offset;
        put(0x06054b50u, 4);
        put(0, 2);
        put(0, 2);
        put(directory_.size(), 2);
        put(directory_.size(), 2);
        put(directory_size, 4);
        put(directory_offset, 4);
        put(0, 2);
        return bytes_;
    }

private:
    void put(std::uint64_t value, int width) {
        for (int i = 0; i < width; ++i) bytes_.push_back(std::byte((value >> (8 * i)) & 0xff));
    }
    void append_text(std::string_view text) {
        for (const char c : text) bytes_.push_back(std::byte(static_cast<unsigned char>(c)));
    }

    struct entry {
        record member;
        std::size_t local_offset;
    };
    std::vector<std::byte> bytes_;
    std::vector<entry> directory_;
};

} // namespace numgap_test
