// Pins down io/byte_signature.hpp, the one signature check every format
// detector uses: bytes at an offset, false (never a read past the end) when
// the buffer is too short.
#include <doctest/doctest.h>

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include <numgap/io/byte_signature.hpp>

using numgap::io::detail::has_bytes_at;

TEST_SUITE("io") {
TEST_CASE("byte signature: the expected bytes at an offset, false when too short") {
    using namespace std::string_view_literals;
    const std::vector<std::byte> bytes{std::byte('P'), std::byte('K'), std::byte(3), std::byte(4), std::byte(0x93)};
    const std::span<const std::byte> all(bytes);
    CHECK(has_bytes_at(all, 0, "PK\x03\x04"sv));
    CHECK(!has_bytes_at(all, 0, "PK\x05\x06"sv));
    CHECK(has_bytes_at(all, 4, "\x93"sv));
    CHECK(has_bytes_at(all, 2, "\x03\x04\x93"sv));
    CHECK(!has_bytes_at(all, 3, "\x04\x93\x00"sv)); // one byte past the end
    CHECK(!has_bytes_at(all.first(3), 0, "PK\x03\x04"sv));
    CHECK(!has_bytes_at(all, 6, ""sv)); // an offset past the end, even for nothing
    CHECK(has_bytes_at(all, 5, ""sv));
    CHECK(!has_bytes_at({}, 0, "P"sv));
}
}
