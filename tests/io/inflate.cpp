// Pins down the DEFLATE decoder: zlib's stored, fixed and dynamic streams
// decode exactly; hand-built streams cover the rules RFC 1951 leaves to the
// decoder; every corruption is an error naming the source, never a crash
// (a mutation sweep runs under the sanitizers in CI).
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <numgap/io/inflate.hpp>

#include "temp_directory.hpp"

using numgap::io::inflate;
using numgap::io::inflate_stats;
using numgap_test::contains;
using numgap_test::error_of;

namespace {

std::vector<std::byte> source_bytes() {
    std::vector<std::byte> bytes;
    for (std::uint8_t value : numgap_test::lcg_bytes(20000)) bytes.push_back(std::byte(value + 97));
    return bytes;
}

// Writes bits LSB first; Huffman codes MSB first, as RFC 1951 3.1.1 says.
struct bit_writer {
    std::vector<std::byte> bytes;
    int used = 8;
    void bits(std::uint32_t value, int count) {
        for (int i = 0; i < count; ++i) put((value >> i) & 1u);
    }
    void code(std::uint32_t value, int count) {
        for (int i = count - 1; i >= 0; --i) put((value >> i) & 1u);
    }
    void put(std::uint32_t bit) {
        if (used == 8) {
            bytes.push_back(std::byte(0));
            used = 0;
        }
        bytes.back() |= std::byte(bit << used++);
    }
};

std::string inflate_error(const std::vector<std::byte>& stream, std::size_t expected) {
    return error_of([&] { (void)inflate(stream, expected, "probe stream"); });
}

} // namespace

TEST_SUITE("io") {
TEST_CASE("inflate: decodes zlib stored fixed and dynamic streams") {
    const std::vector<std::byte> expected = source_bytes();
    REQUIRE(expected == numgap_test::read_bytes(numgap_test::fixture("inflate/source.bin")));
    for (const char* name : {"stored", "fixed", "dynamic"}) {
        CAPTURE(name);
        const auto stream = numgap_test::read_bytes(numgap_test::fixture(std::string("inflate/") + name + ".deflate"));
        inflate_stats stats;
        CHECK(inflate(stream, expected.size(), name, &stats) == expected);
        const std::string kind = name;
        CHECK((stats.stored_blocks > 0) == (kind == "stored"));
        CHECK((stats.fixed_blocks > 0) == (kind == "fixed"));
        CHECK((stats.dynamic_blocks > 0) == (kind == "dynamic"));
    }
}

TEST_CASE("inflate: decodes codes longer than the fast table") {
    // Byte values with probability 2^-(k+1) get Huffman codes up to 15 bits long.
    std::vector<std::byte> expected(30000);
    std::uint64_t state = 12345;
    for (std::byte& value : expected) {
        state = (state * 1103515245u + 12345u) % (std::uint64_t(1) << 31);
        value = std::byte(std::countr_zero((state >> 8) | (std::uint64_t(1) << 20)));
    }
    const auto stream = numgap_test::read_bytes(numgap_test::fixture("inflate/long_codes.deflate"));
    inflate_stats stats;
    CHECK(inflate(stream, expected.size(), "long codes", &stats) == expected);
    CHECK(stats.long_code_symbols > 0);
}

TEST_CASE("inflate: hand built streams") {
    SUBCASE("several stored blocks, including an empty final one") {
        bit_writer w;
        w.bits(0, 1), w.bits(0, 2);
        w.used = 8; // stored data starts on a byte boundary
        for (std::byte b : numgap_test::to_bytes(std::string("\x03\x00\xfc\xff" "abc", 7))) w.bytes.push_back(b);
        w.bits(1, 1), w.bits(0, 2);
        w.used = 8;
        for (std::byte b : numgap_test::to_bytes(std::string("\x00\x00\xff\xff", 4))) w.bytes.push_back(b);
        inflate_stats stats;
        CHECK(inflate(w.bytes, 3, "hand", &stats) == numgap_test::to_bytes("abc"));
        CHECK(stats.stored_blocks == 2);
    }
    SUBCASE("fixed block with an overlapping match expands a run") {
        bit_writer w;
        w.bits(1, 1), w.bits(1, 2);
        w.code(0x30 + 'x', 8);     // literal 'x'
        w.code(0b0000011, 7);      // length symbol 259: length 5
        w.code(0, 5);              // distance symbol 0: distance 1
        w.code(0, 7);              // end of block
        CHECK(inflate(w.bytes, 6, "hand") == numgap_test::to_bytes("xxxxxx"));
    }
    SUBCASE("zero-length output") {
        bit_writer w;
        w.bits(1, 1), w.bits(1, 2);
        w.code(0, 7);
        CHECK(inflate(w.bytes, 0, "hand").empty());
    }
}

TEST_CASE("inflate: rejects corrupt streams naming the source") {
    const auto dynamic = numgap_test::read_bytes(numgap_test::fixture("inflate/dynamic.deflate"));
    SUBCASE("block type 3") {
        bit_writer w;
        w.bits(1, 1), w.bits(3, 2);
        const std::string message = inflate_error(w.bytes, 1);
        CHECK(contains(message, "probe stream: corrupt deflate data"));
        CHECK(contains(message, "invalid block type 3"));
    }
    SUBCASE("truncated input") {
        const std::vector<std::byte> half(dynamic.begin(), dynamic.begin() + std::ptrdiff_t(dynamic.size() / 2));
        CHECK(contains(inflate_error(half, 20000), "ends in the middle of a block"));
        CHECK(contains(inflate_error({}, 1), "ends in the middle of a block"));
    }
    SUBCASE("output longer or shorter than declared") {
        CHECK(contains(inflate_error(dynamic, 19999), "produces more than the 19999 bytes expected"));
        CHECK(contains(inflate_error(dynamic, 20001), "ends after 20000 bytes but 20001 were expected"));
    }
    SUBCASE("stored length and complement disagree") {
        const std::vector<std::byte> stream = numgap_test::to_bytes(std::string("\x01\x03\x00\xfc\xfe" "abc", 8));
        CHECK(contains(inflate_error(stream, 3), "does not match its complement"));
    }
    SUBCASE("stored block runs past the input") {
        const std::vector<std::byte> stream = numgap_test::to_bytes(std::string("\x01\x05\x00\xfa\xff" "ab", 7));
        CHECK(contains(inflate_error(stream, 5), "runs past the end"));
    }
    SUBCASE("match before the start of the output") {
        bit_writer w;
        w.bits(1, 1), w.bits(1, 2);
        w.code(0b0000001, 7); // length 3
        w.code(0, 5);         // distance 1, but nothing was written yet
        CHECK(contains(inflate_error(w.bytes, 3), "refers 1 bytes back but only 0 have been produced"));
    }
    SUBCASE("unused fixed distance symbol 30") {
        bit_writer w;
        w.bits(1, 1), w.bits(1, 2);
        w.code(0x30 + 'a', 8);
        w.code(0b0000001, 7);
        w.code(30, 5);
        CHECK(contains(inflate_error(w.bytes, 4), "invalid distance symbol 30"));
    }
    SUBCASE("over-subscribed and incomplete code-length codes") {
        bit_writer over;
        over.bits(1, 1), over.bits(2, 2), over.bits(0, 5), over.bits(0, 5), over.bits(15, 4);
        for (int i = 0; i < 19; ++i) over.bits(1, 3);
        CHECK(contains(inflate_error(over.bytes, 1), "over-subscribed code length code"));
        bit_writer incomplete;
        incomplete.bits(1, 1), incomplete.bits(2, 2), incomplete.bits(0, 5), incomplete.bits(0, 5);
        incomplete.bits(0, 4);
        incomplete.bits(2, 3); // only symbol 16 gets a (2-bit) code
        for (int i = 1; i < 4; ++i) incomplete.bits(0, 3);
        CHECK(contains(inflate_error(incomplete.bytes, 1), "incomplete code length code"));
    }
    SUBCASE("repeat with no previous length, and no end-of-block code") {
        // Code-length code: symbols 16, 17, 18, 0 (first four in the order) all 2 bits long.
        const auto header = [](bit_writer& w) {
            w.bits(1, 1), w.bits(2, 2), w.bits(0, 5), w.bits(0, 5), w.bits(0, 4);
            for (int i = 0; i < 4; ++i) w.bits(2, 3);
        };
        // Canonical order by symbol value: 0 -> 00, 16 -> 01, 17 -> 10, 18 -> 11.
        bit_writer repeat;
        header(repeat);
        repeat.code(0b01, 2); // symbol 16 first
        repeat.bits(0, 2);
        CHECK(contains(inflate_error(repeat.bytes, 1), "repeat code with no previous code length"));
        bit_writer too_many;
        header(too_many);
        too_many.code(0b11, 2), too_many.bits(127, 7); // 18: 138 zeros
        too_many.code(0b11, 2), too_many.bits(127, 7); // 138 more: past the 258 declared
        CHECK(contains(inflate_error(too_many.bytes, 1), "repeat past the declared count"));
        bit_writer zeros;
        header(zeros);
        zeros.code(0b11, 2), zeros.bits(127, 7); // 138 zeros
        zeros.code(0b11, 2), zeros.bits(108, 7); // 119 zeros
        zeros.code(0b00, 2);                     // the 258th length, also zero
        CHECK(contains(inflate_error(zeros.bytes, 1), "no end-of-block code"));
    }
}

TEST_CASE("inflate: survives every single byte corruption and truncation") {
    // Each mutant either decodes to exactly the declared size or throws numgap::error;
    // anything else (crash, overrun, other exception) fails here or under the sanitizers.
    int errors = 0, decoded = 0;
    for (const auto& [name, size] : {std::pair<const char*, std::size_t>{"inflate/dynamic.deflate", 20000},
                                     std::pair<const char*, std::size_t>{"inflate/long_codes.deflate", 30000}}) {
        const auto stream = numgap_test::read_bytes(numgap_test::fixture(name));
        for (std::size_t position = 0; position < stream.size(); position += 53) {
            for (const std::byte flip : {std::byte(0x01), std::byte(0x80), std::byte(0xff)}) {
                std::vector<std::byte> mutant = stream;
                mutant[position] ^= flip;
                std::size_t produced = 0;
                try {
                    produced = inflate(mutant, size, "mutant").size();
                } catch (const numgap::error&) {
                    ++errors;
                    continue;
                }
                CHECK(produced == size);
                ++decoded;
            }
            const std::vector<std::byte> cut(stream.begin(), stream.begin() + std::ptrdiff_t(position));
            CHECK_THROWS_AS((void)inflate(cut, size, "cut"), numgap::error);
        }
    }
    CHECK(errors > 0);
    MESSAGE("mutants rejected: " << errors << ", decoded to the declared size: " << decoded);
}

TEST_CASE("inflate: prefix decodes only the first bytes") {
    // 'x' then a match of 5 (a run of six 'x'), then a literal 'y', in one fixed block...
    bit_writer w;
    w.bits(0, 1), w.bits(1, 2);
    w.code(0x30 + 'x', 8);
    w.code(0b0000011, 7); // length 5
    w.code(0, 5);         // distance 1
    w.code(0x30 + 'y', 8);
    w.code(0, 7); // end of block
    w.bits(1, 1), w.bits(3, 2); // ...then a final block of reserved type 3: corrupt
    const auto prefix_of = [&](std::size_t size) {
        std::vector<std::byte> prefix(size, std::byte('?'));
        prefix.resize(numgap::io::inflate_prefix(w.bytes, prefix, "prefix stream"));
        return prefix;
    };
    CHECK(prefix_of(0).empty());
    CHECK(prefix_of(1) == numgap_test::to_bytes("x"));
    CHECK(prefix_of(4) == numgap_test::to_bytes("xxxx")); // stops inside the match
    CHECK(prefix_of(7) == numgap_test::to_bytes("xxxxxxy")); // exactly full: the corrupt block is not read
    CHECK(contains(error_of([&] { (void)prefix_of(8); }), "prefix stream: corrupt deflate data: invalid block type 3"));
    CHECK(contains(inflate_error(w.bytes, 7), "invalid block type 3")); // the whole stream is corrupt
    // A format error; without the stream's place in a file, the offset counts from the stream's start...
    const auto alone = numgap_test::caught_error([&] { (void)prefix_of(8); });
    REQUIRE(alone.has_value());
    CHECK(alone->kind() == numgap::error_kind::format);
    CHECK(alone->where().offset == w.bytes.size() - 1);
    // ...and with it, from the start of the file, keeping file and member.
    std::vector<std::byte> output(8);
    const auto placed = numgap_test::caught_error([&] {
        numgap::io::inflate_into(w.bytes, output, "x", nullptr,
                                 numgap::error_location::at_offset("run.npz", 1000, "x.npy"));
    });
    REQUIRE(placed.has_value());
    CHECK(placed->kind() == numgap::error_kind::format);
    CHECK(placed->where().file == "run.npz");
    CHECK(placed->where().item == "x.npy");
    CHECK(placed->where().offset == 1000 + w.bytes.size() - 1);
}
} // TEST_SUITE("io")
