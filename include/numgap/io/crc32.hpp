#pragma once
// numgap::io::crc32: the CRC-32 of zip archives (IEEE 802.3, reflected
// polynomial 0xEDB88320, initial value and final xor 0xFFFFFFFF).
//
// Why here: deflated .npz members are verified after inflating, and numgap
// may not depend on zlib. Slicing-by-8 tables (8 KiB, built at compile time)
// process eight bytes per step, several times faster than the bytewise table.
//
// Complexity: O(n). Never throws. `crc32(b, crc32(a))` equals the CRC of a+b.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace numgap::io {

namespace detail {
inline constexpr std::array<std::array<std::uint32_t, 256>, 8> crc32_tables = [] {
    std::array<std::array<std::uint32_t, 256>, 8> tables{};
    for (std::uint32_t byte = 0; byte < 256; ++byte) {
        std::uint32_t crc = byte;
        for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
        tables[0][byte] = crc;
    }
    for (std::size_t byte = 0; byte < 256; ++byte)
        for (std::size_t slice = 1; slice < 8; ++slice)
            tables[slice][byte] = (tables[slice - 1][byte] >> 8) ^ tables[0][tables[slice - 1][byte] & 0xffu];
    return tables;
}();
} // namespace detail

// `previous` is the CRC of the bytes before `bytes` (0 for none).
inline std::uint32_t crc32(std::span<const std::byte> bytes, std::uint32_t previous = 0) noexcept {
    const auto& t = detail::crc32_tables;
    std::uint32_t crc = ~previous;
    const std::byte* p = bytes.data();
    std::size_t n = bytes.size();
    const auto at = [&](std::size_t i) { return std::to_integer<std::uint32_t>(p[i]); };
    for (; n >= 8; n -= 8, p += 8) {
        const std::uint32_t low = crc ^ (at(0) | at(1) << 8 | at(2) << 16 | at(3) << 24);
        crc = t[7][low & 0xff] ^ t[6][(low >> 8) & 0xff] ^ t[5][(low >> 16) & 0xff] ^ t[4][low >> 24] ^
              t[3][at(4)] ^ t[2][at(5)] ^ t[1][at(6)] ^ t[0][at(7)];
    }
    for (std::size_t i = 0; i < n; ++i) crc = (crc >> 8) ^ t[0][(crc ^ at(i)) & 0xff];
    return ~crc;
}

} // namespace numgap::io
