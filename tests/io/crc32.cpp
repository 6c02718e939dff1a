// Pins down CRC-32 against the standard check value and a bitwise reference,
// for all lengths around the 8-byte slicing step, and incremental use.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include <numgap/io/crc32.hpp>

#include "temp_directory.hpp"

namespace {
std::uint32_t bitwise_crc32(const std::vector<std::byte>& bytes) {
    std::uint32_t crc = 0xffffffffu;
    for (std::byte b : bytes) {
        crc ^= std::to_integer<std::uint32_t>(b);
        for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}
} // namespace

TEST_SUITE("io") {
TEST_CASE("crc32: matches the standard check value") {
    CHECK(numgap::io::crc32(numgap_test::to_bytes("123456789")) == 0xCBF43926u);
    CHECK(numgap::io::crc32({}) == 0u);
}

TEST_CASE("crc32: matches a bitwise reference for every length and split") {
    std::vector<std::byte> bytes;
    for (int i = 0; i < 67; ++i) {
        CAPTURE(i);
        CHECK(numgap::io::crc32(bytes) == bitwise_crc32(bytes));
        bytes.push_back(std::byte(i * 151 + 7));
    }
    const std::uint32_t whole = numgap::io::crc32(bytes);
    for (std::size_t split = 0; split <= bytes.size(); split += 5) {
        const std::span<const std::byte> all(bytes);
        CHECK(numgap::io::crc32(all.subspan(split), numgap::io::crc32(all.first(split))) == whole);
    }
}
} // TEST_SUITE("io")
