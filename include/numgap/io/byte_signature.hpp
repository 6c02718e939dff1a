#pragma once
// numgap::io::detail::has_bytes_at: the one check of a format's signature
// bytes (zip's "PK\3\4", .npy's "\x93NUMPY", ETDump's "ED00" after its
// offsets): whether `bytes` holds `expected` at `offset`. False when `bytes`
// is too short. Never throws; O(expected.size()).
#include <cstddef>
#include <cstring>
#include <span>
#include <string_view>

namespace numgap::io::detail {

inline bool has_bytes_at(std::span<const std::byte> bytes, std::size_t offset, std::string_view expected) noexcept {
    return offset <= bytes.size() && bytes.size() - offset >= expected.size() &&
           (expected.empty() || std::memcmp(bytes.data() + offset, expected.data(), expected.size()) == 0);
}

} // namespace numgap::io::detail
