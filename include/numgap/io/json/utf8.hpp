#pragma once
// UTF-8 validation and encoding: the one UTF-8 check numgap has. The JSON
// parser validates strings with it, the JSON writer replaces what it refuses,
// and report/terminal_text.hpp decodes names with it.
//
// Valid means RFC 3629: no overlong forms, no UTF-16 surrogates (U+D800 to
// U+DFFF), nothing above U+10FFFF, no stray continuation bytes.
// Complexity: O(1) per sequence. Throws: append_utf8 only std::bad_alloc.
#include <cstddef>
#include <cstdint>
#include <string>

namespace numgap::io::detail {

// Length of the valid UTF-8 sequence at `bytes` (1..4), or 0 when invalid.
inline std::size_t utf8_sequence_length(const unsigned char* bytes, std::size_t available) noexcept {
    const unsigned char lead = bytes[0];
    if (lead < 0x80) return 1;
    std::size_t length = 0;
    std::uint32_t code_point = 0, minimum = 0;
    if ((lead & 0xe0) == 0xc0) {
        length = 2, code_point = lead & 0x1fu, minimum = 0x80;
    } else if ((lead & 0xf0) == 0xe0) {
        length = 3, code_point = lead & 0x0fu, minimum = 0x800;
    } else if ((lead & 0xf8) == 0xf0) {
        length = 4, code_point = lead & 0x07u, minimum = 0x10000;
    } else {
        return 0;
    }
    if (available < length) return 0;
    for (std::size_t i = 1; i < length; ++i) {
        if ((bytes[i] & 0xc0) != 0x80) return 0;
        code_point = (code_point << 6) | (bytes[i] & 0x3fu);
    }
    if (code_point < minimum || code_point > 0x10ffff || (code_point >= 0xd800 && code_point <= 0xdfff)) return 0;
    return length;
}

// Appends the UTF-8 encoding of a valid code point (at most U+10FFFF, not a surrogate).
inline void append_utf8(std::string& out, std::uint32_t code_point) {
    if (code_point < 0x80) {
        out += char(code_point);
    } else if (code_point < 0x800) {
        out += char(0xc0 | (code_point >> 6));
        out += char(0x80 | (code_point & 0x3f));
    } else if (code_point < 0x10000) {
        out += char(0xe0 | (code_point >> 12));
        out += char(0x80 | ((code_point >> 6) & 0x3f));
        out += char(0x80 | (code_point & 0x3f));
    } else {
        out += char(0xf0 | (code_point >> 18));
        out += char(0x80 | ((code_point >> 12) & 0x3f));
        out += char(0x80 | ((code_point >> 6) & 0x3f));
        out += char(0x80 | (code_point & 0x3f));
    }
}

} // namespace numgap::io::detail
