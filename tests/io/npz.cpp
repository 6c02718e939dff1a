// Pins down .npz reading against archives numpy wrote: stored members are
// views into the mapping, deflated ones (dynamic Huffman, several blocks)
// inflate to the exact data, ZIP64 records are understood; every corruption
// is an error naming the archive (and the member where there is one).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <numgap/io/npy.hpp>
#include <numgap/io/npz.hpp>

#include "temp_directory.hpp"

using numgap::io::npz_archive;
using numgap_test::contains;
using numgap_test::error_of;

namespace {

std::vector<std::size_t> find_all(const std::vector<std::byte>& bytes, std::uint32_t signature) {
    std::vector<std::size_t> found;
    for (std::size_t i = 0; i + 4 <= bytes.size(); ++i) {
        std::uint32_t value = 0;
        for (int k = 3; k >= 0; --k) value = (value << 8) | std::to_integer<std::uint32_t>(bytes[i + std::size_t(k)]);
        if (value == signature) found.push_back(i);
    }
    return found;
}

constexpr std::uint32_t central_signature = 0x02014b50u;

std::vector<std::string> names(const npz_archive& archive) {
    std::vector<std::string> result;
    for (const auto& member : archive.members()) result.push_back(member.name);
    return result;
}

// Opens a modified copy of a fixture and reads every member.
std::string corrupted_error(const std::string& fixture, void (*mutate)(std::vector<std::byte>&)) {
    numgap_test::temp_directory scratch;
    std::vector<std::byte> bytes = numgap_test::read_bytes(numgap_test::fixture(fixture));
    mutate(bytes);
    const auto path = scratch.write("bad.npz", bytes);
    return error_of([&] {
        const npz_archive archive = npz_archive::open(path);
        std::vector<std::byte> storage;
        for (const auto& member : archive.members()) (void)archive.member_bytes(member, storage);
    });
}

} // namespace

TEST_CASE("npz_stored_members_are_views_into_the_mapping") {
    const npz_archive archive = npz_archive::open(numgap_test::fixture("npz/stored.npz"));
    CHECK(names(archive) == std::vector<std::string>{"a.npy", "block/b.npy", "c.npy"});
    const auto* a = archive.find("a.npy");
    REQUIRE(a != nullptr);
    CHECK(a->method == 0);
    std::vector<std::byte> storage;
    const auto bytes = archive.member_bytes(*a, storage);
    CHECK(storage.empty());
    CHECK(bytes.data() >= archive.mapping()->data());
    CHECK(bytes.data() + bytes.size() <= archive.mapping()->data() + archive.mapping()->size());
    const auto header = numgap::io::parse_npy_header(bytes, "a.npy");
    CHECK(header.shape == std::vector<std::int64_t>{3, 4});
    for (int i = 0; i < 12; ++i) {
        float value;
        std::memcpy(&value, bytes.data() + header.data_offset + std::size_t(i) * 4, 4);
        CHECK(value == float(i) * 0.5f - 2.0f);
    }
    CHECK(archive.find("missing.npy") == nullptr);
}

TEST_CASE("npz_deflated_members_inflate_to_the_exact_data_over_dynamic_blocks") {
    const npz_archive archive = npz_archive::open(numgap_test::fixture("npz/compressed.npz"));
    CHECK(names(archive) == std::vector<std::string>{"big.npy", "small.npy", "c.npy"});
    const auto* big = archive.find("big.npy");
    REQUIRE(big != nullptr);
    CHECK(big->method == 8);
    // The fixture must exercise what it is here for: several dynamic Huffman blocks.
    numgap::io::inflate_stats stats;
    (void)numgap::io::inflate(archive.mapping()->bytes().subspan(big->data_offset, big->compressed_size),
                              big->uncompressed_size, "big", &stats);
    CHECK(stats.dynamic_blocks >= 2);
    std::vector<std::byte> storage;
    const auto bytes = archive.member_bytes(*big, storage);
    CHECK(bytes.data() == storage.data());
    const auto header = numgap::io::parse_npy_header(bytes, "big.npy");
    REQUIRE(header.data_bytes == 65536);
    const std::vector<std::uint8_t> expected = numgap_test::lcg_bytes(65536);
    CHECK(std::memcmp(bytes.data() + header.data_offset, expected.data(), expected.size()) == 0);
    const auto small = archive.member_bytes(*archive.find("small.npy"), storage);
    const auto small_header = numgap::io::parse_npy_header(small, "small.npy");
    float last;
    std::memcpy(&last, small.data() + small_header.data_offset + 36, 4);
    CHECK(last == 9.0f);
}

TEST_CASE("npz_reads_zip64_end_records_and_directory_extra_fields") {
    const auto raw = numgap_test::read_bytes(numgap_test::fixture("npz/zip64.npz"));
    REQUIRE(!find_all(raw, 0x07064b50u).empty()); // the fixture really has a ZIP64 locator
    const npz_archive archive = npz_archive::open(numgap_test::fixture("npz/zip64.npz"));
    CHECK(names(archive) == std::vector<std::string>{"a.npy", "c.npy"});
    std::vector<std::byte> storage;
    const auto bytes = archive.member_bytes(*archive.find("c.npy"), storage);
    const auto header = numgap::io::parse_npy_header(bytes, "c.npy");
    float value;
    std::memcpy(&value, bytes.data() + header.data_offset, 4);
    CHECK(value == 3.5f);
}

TEST_CASE("npz_rejects_corrupt_archives_naming_archive_and_member") {
    SUBCASE("truncated archive") {
        const std::string message =
            corrupted_error("npz/stored.npz", [](std::vector<std::byte>& b) { b.resize(b.size() - 10); });
        CHECK(contains(message, "bad.npz"));
        CHECK(contains(message, "no zip end-of-central-directory record"));
    }
    SUBCASE("not an archive at all") {
        const std::string message = corrupted_error("npz/stored.npz", [](std::vector<std::byte>& b) { b.resize(12); });
        CHECK(contains(message, "too short for an end record"));
    }
    SUBCASE("unsupported compression method") {
        const std::string message = corrupted_error("npz/stored.npz", [](std::vector<std::byte>& b) {
            b[find_all(b, central_signature).at(1) + 10] = std::byte(12);
        });
        CHECK(contains(message, "member 'block/b.npy'"));
        CHECK(contains(message, "compression method 12"));
    }
    SUBCASE("encrypted member") {
        const std::string message = corrupted_error("npz/stored.npz", [](std::vector<std::byte>& b) {
            b[find_all(b, central_signature).at(0) + 8] |= std::byte(1);
        });
        CHECK(contains(message, "member 'a.npy'"));
        CHECK(contains(message, "is encrypted"));
    }
    SUBCASE("CRC mismatch in a deflated member") {
        const std::string message = corrupted_error("npz/compressed.npz", [](std::vector<std::byte>& b) {
            b[find_all(b, central_signature).at(1) + 16] ^= std::byte(0x55);
        });
        CHECK(contains(message, "member 'small.npy'"));
        CHECK(contains(message, "CRC-32 mismatch"));
    }
    SUBCASE("corrupt deflate data") {
        const std::string message = corrupted_error("npz/compressed.npz", [](std::vector<std::byte>& b) {
            const npz_archive archive = npz_archive::open(numgap_test::fixture("npz/compressed.npz"));
            const std::size_t start = std::size_t(archive.find("big.npy")->data_offset);
            b[start] = std::byte(0x07); // final block of reserved type 3
        });
        CHECK(contains(message, "member 'big.npy'"));
        CHECK(contains(message, "corrupt deflate data"));
    }
    SUBCASE("broken central directory signature") {
        const std::string message = corrupted_error("npz/stored.npz", [](std::vector<std::byte>& b) {
            b[find_all(b, central_signature).at(0)] = std::byte(0);
        });
        CHECK(contains(message, "central directory entry 0"));
    }
    SUBCASE("duplicate member names") {
        const std::string message = corrupted_error("npz/stored.npz", [](std::vector<std::byte>& b) {
            b[find_all(b, central_signature).at(2) + 46] = std::byte('a'); // "c.npy" -> "a.npy"
        });
        CHECK(contains(message, "member 'a.npy' appears twice"));
    }
    SUBCASE("local header disagrees with the directory") {
        const std::string message = corrupted_error("npz/stored.npz", [](std::vector<std::byte>& b) {
            b[find_all(b, 0x04034b50u).at(0) + 30] = std::byte('z');
        });
        CHECK(contains(message, "member 'a.npy'"));
        CHECK(contains(message, "local header names a different member"));
    }
    SUBCASE("member data runs into the directory") {
        const std::string message = corrupted_error("npz/stored.npz", [](std::vector<std::byte>& b) {
            const std::size_t entry = find_all(b, central_signature).at(2);
            b[entry + 20] = std::byte(0xff), b[entry + 21] = std::byte(0xff); // compressed size
        });
        CHECK(contains(message, "member 'c.npy'"));
        CHECK(contains(message, "run past the central directory"));
    }
    SUBCASE("impossible member count") {
        const std::string message = corrupted_error("npz/stored.npz", [](std::vector<std::byte>& b) {
            const std::size_t end = find_all(b, 0x06054b50u).back();
            b[end + 8] = b[end + 10] = std::byte(0xf0);
        });
        CHECK(contains(message, "claims 240 members"));
    }
}
