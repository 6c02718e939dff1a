#pragma once
// numgap::io base64 decoding (RFC 4648 section 4: the standard alphabet
// A-Z a-z 0-9 + /, '=' padding to a multiple of four characters), strict the
// way Python's base64.b64decode(..., validate=True) is: no blanks, no other
// characters, '=' only as the last one or two characters. Unused low bits of
// the last group are ignored, as Python does.
//
// Decoding writes into a caller's buffer and never allocates; the decoded
// size is known from the text alone, so a caller bounds its allocation by
// the text it holds (3 bytes per 4 characters).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace numgap::io {

struct base64_failure {
    std::size_t offset = 0; // of the first character that cannot be decoded, within the text
};

// The decoded size of `text`, or nullopt when its length is not a multiple of four.
inline std::optional<std::size_t> base64_decoded_size(std::span<const std::byte> text) noexcept {
    if (text.size() % 4 != 0) return std::nullopt;
    std::size_t padding = 0;
    if (!text.empty() && text[text.size() - 1] == std::byte('=')) ++padding;
    if (text.size() >= 2 && padding == 1 && text[text.size() - 2] == std::byte('=')) ++padding;
    return text.size() / 4 * 3 - padding;
}

namespace detail {
inline int base64_digit(std::byte b) noexcept {
    const auto c = static_cast<unsigned char>(b);
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}
} // namespace detail

// Decodes `text` into `out`, which must hold base64_decoded_size(text) bytes
// (the text's length must be a multiple of four). Returns the offset of the
// first invalid character, or nullopt on success.
inline std::optional<base64_failure> base64_decode(std::span<const std::byte> text, std::span<std::byte> out) noexcept {
    if (text.size() % 4 != 0) return base64_failure{text.size() - text.size() % 4};
    std::size_t written = 0;
    for (std::size_t group = 0; group < text.size(); group += 4) {
        const bool last = group + 4 == text.size();
        std::uint32_t bits = 0;
        int digits = 0;
        for (std::size_t i = 0; i < 4; ++i) {
            const std::byte c = text[group + i];
            // '=' may only pad the last group: in its 4th place, or in its 3rd and 4th.
            if (c == std::byte('=') && last && i >= 2 && (i == 3 || text[group + 3] == std::byte('='))) break;
            const int digit = detail::base64_digit(c);
            if (digit < 0) return base64_failure{group + i};
            bits = bits << 6 | std::uint32_t(digit);
            ++digits;
        }
        if (digits == 4) {
            if (written + 3 > out.size()) return base64_failure{group};
            out[written++] = std::byte(bits >> 16);
            out[written++] = std::byte(bits >> 8);
            out[written++] = std::byte(bits);
        } else {
            // 3 digits carry 2 bytes, 2 digits 1 byte.
            bits <<= 6 * (4 - digits);
            const int bytes = digits - 1;
            if (written + std::size_t(bytes) > out.size()) return base64_failure{group};
            out[written++] = std::byte(bits >> 16);
            if (bytes == 2) out[written++] = std::byte(bits >> 8);
        }
    }
    return std::nullopt;
}

} // namespace numgap::io
