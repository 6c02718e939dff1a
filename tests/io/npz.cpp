// Pins down .npz reading against archives numpy wrote: stored members are
// views into the mapping, deflated ones (dynamic Huffman, several blocks)
// inflate to the exact data, ZIP64 records are understood; every corruption
// is an error naming the archive (and the member where there is one).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <sys/resource.h>

#include <numgap/io/npy.hpp>
#include <numgap/io/npz.hpp>
#include <numgap/io/read_policy.hpp>

#include "temp_directory.hpp"
#include "zip_builder.hpp"

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

// Opens a modified copy of a fixture and reads every member: the error, whole.
numgap::error corrupted_failure(const std::string& fixture, void (*mutate)(std::vector<std::byte>&)) {
    numgap_test::temp_directory scratch;
    std::vector<std::byte> bytes = numgap_test::read_bytes(numgap_test::fixture(fixture));
    mutate(bytes);
    const auto path = scratch.write("bad.npz", bytes);
    const auto failure = numgap_test::caught_error([&] {
        const npz_archive archive = npz_archive::open(path);
        std::unique_ptr<std::byte[]> storage;
        for (const auto& member : archive.members()) (void)archive.member_bytes(member, storage);
    });
    REQUIRE(failure.has_value());
    return *failure;
}

// Its message only.
std::string corrupted_error(const std::string& fixture, void (*mutate)(std::vector<std::byte>&)) {
    return corrupted_failure(fixture, mutate).what();
}

bool names_bad_npz(const numgap::error& failure) { return failure.where().file.ends_with("bad.npz"); }

} // namespace

TEST_SUITE("io") {
TEST_CASE("npz: stored members are views into the mapping") {
    const npz_archive archive = npz_archive::open(numgap_test::fixture("npz/stored.npz"));
    CHECK(names(archive) == std::vector<std::string>{"a.npy", "block/b.npy", "c.npy"});
    const auto* a = archive.find("a.npy");
    REQUIRE(a != nullptr);
    CHECK(a->method == 0);
    std::unique_ptr<std::byte[]> storage;
    const auto bytes = archive.member_bytes(*a, storage);
    CHECK(storage == nullptr);
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

TEST_CASE("npz: deflated members inflate to the exact data over dynamic blocks") {
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
    std::unique_ptr<std::byte[]> storage;
    const auto bytes = archive.member_bytes(*big, storage);
    CHECK(bytes.data() == storage.get());
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

TEST_CASE("npz: reads zip64 end records and directory extra fields") {
    const auto raw = numgap_test::read_bytes(numgap_test::fixture("npz/zip64.npz"));
    REQUIRE(!find_all(raw, 0x07064b50u).empty()); // the fixture really has a ZIP64 locator
    const npz_archive archive = npz_archive::open(numgap_test::fixture("npz/zip64.npz"));
    CHECK(names(archive) == std::vector<std::string>{"a.npy", "c.npy"});
    std::unique_ptr<std::byte[]> storage;
    const auto bytes = archive.member_bytes(*archive.find("c.npy"), storage);
    const auto header = numgap::io::parse_npy_header(bytes, "c.npy");
    float value;
    std::memcpy(&value, bytes.data() + header.data_offset, 4);
    CHECK(value == 3.5f);
}

TEST_CASE("npz: rejects corrupt archives naming archive and member") {
    SUBCASE("truncated archive") {
        const std::string message =
            corrupted_error("npz/stored.npz", [](std::vector<std::byte>& b) { b.resize(b.size() - 10); });
        CHECK(contains(message, "bad.npz"));
        CHECK(contains(message, "no zip end-of-central-directory record"));
        const numgap::error failure =
            corrupted_failure("npz/stored.npz", [](std::vector<std::byte>& b) { b.resize(b.size() - 10); });
        CHECK(failure.kind() == numgap::error_kind::format);
        CHECK(names_bad_npz(failure));
        CHECK(failure.where().item.empty());
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
        const numgap::error failure = corrupted_failure("npz/stored.npz", [](std::vector<std::byte>& b) {
            b[find_all(b, central_signature).at(1) + 10] = std::byte(12);
        });
        CHECK(failure.kind() == numgap::error_kind::format);
        CHECK(names_bad_npz(failure));
        CHECK(failure.where().item == "block/b.npy");
        CHECK(failure.where().has_offset()); // the member's local header
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
        const numgap::error failure = corrupted_failure("npz/compressed.npz", [](std::vector<std::byte>& b) {
            const npz_archive archive = npz_archive::open(numgap_test::fixture("npz/compressed.npz"));
            b[std::size_t(archive.find("big.npy")->data_offset)] = std::byte(0x07);
        });
        CHECK(failure.kind() == numgap::error_kind::format);
        CHECK(names_bad_npz(failure));
        CHECK(failure.where().item == "big.npy");
        // The compressed byte at fault, counted from the start of the archive.
        const npz_archive archive = npz_archive::open(numgap_test::fixture("npz/compressed.npz"));
        CHECK(failure.where().offset == archive.find("big.npy")->data_offset);
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
        const numgap::error failure = corrupted_failure("npz/stored.npz", [](std::vector<std::byte>& b) {
            b[find_all(b, central_signature).at(2) + 46] = std::byte('a');
        });
        CHECK(failure.kind() == numgap::error_kind::schema);
        CHECK(failure.where().item == "a.npy");
        CHECK(failure.where().offset ==
              find_all(numgap_test::read_bytes(numgap_test::fixture("npz/stored.npz")), central_signature).at(2));
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
        const numgap::error failure = corrupted_failure("npz/stored.npz", [](std::vector<std::byte>& b) {
            const std::size_t end = find_all(b, 0x06054b50u).back();
            b[end + 8] = b[end + 10] = std::byte(0xf0);
        });
        CHECK(failure.kind() == numgap::error_kind::format);
        CHECK(names_bad_npz(failure));
        CHECK(failure.where().offset ==
              find_all(numgap_test::read_bytes(numgap_test::fixture("npz/stored.npz")), 0x06054b50u).back());
    }
}

namespace {

std::vector<std::byte> bytes_of(std::string_view text) { return numgap_test::to_bytes(text); }

// Peak resident memory of this process so far, in MiB.
long peak_resident_mib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss / 1024;
}

} // namespace

TEST_CASE("npz: refuses members that share bytes at open") {
    // The overlapping bomb: 64 local headers in a row, then one stream; every
    // member's data runs from its header to the end of the stream, so reading
    // them all would inflate the stream 64 times.
    const std::vector<std::byte> zeros(4096);
    const std::vector<std::byte> stream = numgap_test::deflate_stored(zeros);
    numgap_test::zip_builder zip;
    std::vector<numgap_test::zip_builder::record> records(64);
    std::vector<std::size_t> data_offsets;
    for (std::size_t i = 0; i < records.size(); ++i) {
        records[i].name = "m" + std::to_string(100 + i) + ".npy";
        data_offsets.push_back(zip.size() + 30 + records[i].name.size());
        (void)zip.local_header(records[i]); // sizes are patched into the directory below
    }
    zip.append(stream);
    for (std::size_t i = 0; i < records.size(); ++i) {
        records[i].compressed_size = std::uint32_t(zip.size() - data_offsets[i]);
        records[i].uncompressed_size = std::uint32_t(zeros.size());
        records[i].crc32 = numgap::io::crc32(zeros);
        zip.directory_entry(records[i], data_offsets[i] - 30 - records[i].name.size());
    }
    numgap_test::temp_directory scratch;
    const auto path = scratch.write("overlap.npz", zip.finish());
    const std::string message = error_of([&] { (void)npz_archive::open(path); });
    CHECK(contains(message, "overlap.npz"));
    CHECK(contains(message, "member 'm101.npy' overlaps member 'm100.npy'"));
    CHECK(contains(message, "refuses archives whose members share bytes"));
    const auto overlap = numgap_test::caught_error([&] { (void)npz_archive::open(path); });
    REQUIRE(overlap.has_value());
    CHECK(overlap->kind() == numgap::error_kind::format);
    CHECK(overlap->where().file == path.string());
    CHECK(overlap->where().item == "m101.npy");

    // Adjacent members (the normal layout) are fine.
    numgap_test::zip_builder honest;
    for (const char* name : {"a.npy", "b.npy"}) {
        numgap_test::zip_builder::record record{name, 8, numgap::io::crc32(zeros), std::uint32_t(stream.size()),
                                                std::uint32_t(zeros.size())};
        honest.member(record, stream);
    }
    const auto fine = scratch.write("fine.npz", honest.finish());
    CHECK(npz_archive::open(fine).members().size() == 2);
}

TEST_CASE("npz: refuses impossible and over limit sizes before allocating") {
    numgap_test::temp_directory scratch;
    const std::vector<std::byte> stream = numgap_test::deflate_stored(bytes_of("tiny"));
    std::vector<std::byte> padded = stream;
    padded.resize(std::size_t(1) << 20); // bytes after the final block are ignored
    numgap_test::zip_builder zip;
    // 1 GiB from 9 compressed bytes: more than deflate's 1032:1 can produce.
    zip.member({"ratio.npy", 8, 0, std::uint32_t(stream.size()), std::uint32_t(1) << 30}, stream);
    // 2 MiB from 1 MiB: a possible ratio, over the limit set below.
    zip.member({"limit.npy", 8, 0, std::uint32_t(padded.size()), std::uint32_t(2) << 20}, padded);
    const auto path = scratch.write("claims.npz", zip.finish());
    const npz_archive archive = npz_archive::open(path, std::uint64_t(1) << 20);
    std::unique_ptr<std::byte[]> storage;
    std::array<std::byte, 64> prefix{};
    const std::string ratio = error_of([&] { (void)archive.member_bytes(*archive.find("ratio.npy"), storage); });
    CHECK(contains(ratio, "member 'ratio.npy' declares an uncompressed size of 1073741824 bytes, impossible for 9"));
    CHECK(contains(ratio, "at most 1032:1"));
    CHECK(error_of([&] { (void)archive.member_prefix(*archive.find("ratio.npy"), prefix); }) == ratio);
    const std::string limit = error_of([&] { (void)archive.member_bytes(*archive.find("limit.npy"), storage); });
    CHECK(contains(limit, "member 'limit.npy' declares 2097152 uncompressed bytes, more than the limit of 1048576"));
    CHECK(contains(limit, "read_policy::max_inflated_bytes"));
    CHECK(storage == nullptr); // refused before anything was allocated
    // Both refusals are limits a program can tell from corruption, naming archive and member.
    for (const char* member : {"ratio.npy", "limit.npy"}) {
        const auto failure =
            numgap_test::caught_error([&] { (void)archive.member_bytes(*archive.find(member), storage); });
        REQUIRE(failure.has_value());
        CHECK(failure->kind() == numgap::error_kind::limit);
        CHECK(failure->where().file == path.string());
        CHECK(failure->where().item == member);
    }
    // The default limit lets the same member through (it then fails for its short stream).
    const npz_archive defaults = npz_archive::open(path);
    CHECK(contains(error_of([&] { (void)defaults.member_bytes(*defaults.find("limit.npy"), storage); }),
                   "the stream ends after 4 bytes but 2097152 were expected"));
    CHECK(numgap::io::read_policy::default_max_inflated_bytes == std::uint64_t(4) << 30);
}

TEST_CASE("npz: member prefix inflates only the first bytes") {
    // A stored block with a header-like start, then a corrupt block: the prefix
    // reads without touching the corruption, the whole member does not.
    const std::string start(100, 'h');
    std::vector<std::byte> stream = numgap_test::deflate_stored(bytes_of(start));
    stream[0] = std::byte(0); // not final: a block follows
    stream.push_back(std::byte(0x07)); // final block of reserved type 3
    numgap_test::zip_builder zip;
    zip.member({"x.npy", 8, 0, std::uint32_t(stream.size()), 200}, stream);
    numgap_test::temp_directory scratch;
    const npz_archive archive = npz_archive::open(scratch.write("x.npz", zip.finish()));
    std::array<std::byte, 64> prefix{};
    const auto head = archive.member_prefix(*archive.find("x.npy"), prefix);
    CHECK(head.size() == 64);
    CHECK(head.data() == prefix.data());
    CHECK(std::to_integer<char>(head[63]) == 'h');
    std::unique_ptr<std::byte[]> storage;
    CHECK(contains(error_of([&] { (void)archive.member_bytes(*archive.find("x.npy"), storage); }),
                   "member 'x.npy': corrupt deflate data: invalid block type 3"));
}

TEST_CASE("npz: a member that claims more than its stream holds costs only what the stream produces") {
    // The bomb: a small archive whose member claims ~2 GiB. The buffer
    // is not zero-filled, so only the pages the stream writes become resident.
    const std::uint32_t claimed = std::uint32_t(2) << 30;
    const std::vector<std::byte> stream = numgap_test::deflate_stored(bytes_of("only this"));
    std::vector<std::byte> padded = stream;
    padded.resize(claimed / 1032 + 4096);
    numgap_test::zip_builder zip;
    zip.member({"bomb.npy", 8, 0, std::uint32_t(padded.size()), claimed}, padded);
    numgap_test::temp_directory scratch;
    const npz_archive archive = npz_archive::open(scratch.write("bomb.npz", zip.finish()));
    const long before = peak_resident_mib();
    std::unique_ptr<std::byte[]> storage;
    const std::string message = error_of([&] { (void)archive.member_bytes(*archive.find("bomb.npy"), storage); });
    CHECK(contains(message, "member 'bomb.npy': corrupt deflate data: the stream ends after 9 bytes but 2147483648"));
    // Zero-filling the claim would add 2048 MiB; AddressSanitizer's shadow of
    // the allocation adds 256 (an eighth), so the bound sits between the two.
    CHECK(peak_resident_mib() - before < 1024);
}
} // TEST_SUITE("io")
