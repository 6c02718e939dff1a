#pragma once
// numgap::io::detail::read_little_endian(bytes, count): the unsigned integer
// stored in `count` (1..8) little-endian bytes, on any host byte order. The
// .npy header length and the zip records of .npz archives are stored so.
// Precondition: `count` bytes are readable. O(count), never throws.
#include <cstddef>
#include <cstdint>

namespace numgap::io::detail {

inline std::uint64_t read_little_endian(const std::byte* bytes, int count) noexcept {
    std::uint64_t value = 0;
    for (int i = count - 1; i >= 0; --i) value = (value << 8) | std::to_integer<std::uint64_t>(bytes[i]);
    return value;
}

} // namespace numgap::io::detail
