#pragma once
// terminal_text: text from a run directory (node, tensor, op and file names,
// and messages built from them) made safe to print on a terminal, and the
// number of columns such text takes.
//
// Why: names come from someone else's graph.json. Printed raw, an ESC starts
// a control sequence (recolour, move the cursor, retitle the window, write to
// the clipboard), CR overwrites what was printed before, and a bidi override
// makes "gn2" read as something else. So every character that is not plainly
// visible is replaced by a readable escape:
//   - C0 controls (NUL, BEL, BS, TAB, LF, CR, ESC, ...) and DEL: "\x1b";
//   - each byte that is not part of valid UTF-8 (stray continuation bytes,
//     overlong forms, UTF-16 surrogates, beyond U+10FFFF): "\xff";
//   - C1 controls U+0080-U+009F (8-bit CSI/OSC), bidi controls (U+061C,
//     U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), invisible format
//     characters (U+00AD, U+180E, U+200B, U+2028, U+2029, U+2060-U+2064,
//     U+206A-U+206F, U+FEFF, U+FFF9-U+FFFB, tags U+E0001-U+E007F) and the
//     noncharacters U+FFFE/U+FFFF: "\u202e", "\U000e0041".
// ZWJ and ZWNJ (U+200D, U+200C) are kept: they are part of emoji and of
// Persian and Indic words and cannot move or hide other text. Backslash is
// kept as is, for readable paths: an escape in the output is therefore
// ambiguous with a name that literally holds "\x1b", which is harmless.
// Every other valid UTF-8 (Chinese node names, accents, emoji) passes
// unchanged, so the result is valid UTF-8 holding no control character.
// Complexity: linear in the text. Throws: std::bad_alloc.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <numgap/io/json/utf8.hpp>

namespace numgap {

namespace detail {
inline void append_hex(std::string& out, std::uint32_t value, int digits) {
    constexpr char hex[] = "0123456789abcdef";
    for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += hex[(value >> shift) & 0xf];
}

// Length of the valid UTF-8 sequence starting at text[at] (validated by the
// one UTF-8 check numgap has, io/json/utf8.hpp) and its code point, or 0 when the
// bytes there are not valid UTF-8.
inline std::size_t decode_utf8(std::string_view text, std::size_t at, std::uint32_t& code_point) noexcept {
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data()) + at;
    const std::size_t length = io::detail::utf8_sequence_length(bytes, text.size() - at);
    if (length == 0) return 0;
    code_point = length == 1 ? bytes[0] : bytes[0] & (0x7fu >> length);
    for (std::size_t i = 1; i < length; ++i) code_point = (code_point << 6) | (bytes[i] & 0x3fu);
    return length;
}

// Valid code points above ASCII that must not reach a terminal as they are.
inline bool is_hidden_or_control(std::uint32_t c) noexcept {
    return (c >= 0x80 && c <= 0x9f) || c == 0xad || c == 0x61c || c == 0x180e ||
           c == 0x200b || c == 0x200e || c == 0x200f || (c >= 0x2028 && c <= 0x202e) ||
           (c >= 0x2060 && c <= 0x2064) || (c >= 0x2066 && c <= 0x206f) || c == 0xfeff ||
           (c >= 0xfff9 && c <= 0xfffb) || c == 0xfffe || c == 0xffff ||
           (c >= 0xe0001 && c <= 0xe007f);
}

// Columns a code point of printable text takes: 2 for East Asian wide and
// fullwidth forms and emoji, 0 for combining marks and joiners, else 1.
inline std::size_t columns_of(std::uint32_t c) noexcept {
    if ((c >= 0x300 && c <= 0x36f) || c == 0x200c || c == 0x200d || (c >= 0xfe00 && c <= 0xfe0f))
        return 0;
    const bool wide = (c >= 0x1100 && c <= 0x115f) || (c >= 0x2e80 && c <= 0x303e) ||
                      (c >= 0x3041 && c <= 0x33ff) || (c >= 0x3400 && c <= 0x4dbf) ||
                      (c >= 0x4e00 && c <= 0x9fff) || (c >= 0xa000 && c <= 0xa4cf) ||
                      (c >= 0xac00 && c <= 0xd7a3) || (c >= 0xf900 && c <= 0xfaff) ||
                      (c >= 0xfe30 && c <= 0xfe4f) || (c >= 0xff00 && c <= 0xff60) ||
                      (c >= 0xffe0 && c <= 0xffe6) || (c >= 0x1f300 && c <= 0x1f64f) ||
                      (c >= 0x1f900 && c <= 0x1f9ff) || (c >= 0x20000 && c <= 0x3fffd);
    return wide ? 2 : 1;
}
} // namespace detail

inline std::string terminal_text(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        std::uint32_t code_point = 0;
        const std::size_t length = detail::decode_utf8(text, at, code_point);
        if (length == 0 || code_point < 0x20 || code_point == 0x7f) {
            out += "\\x";
            detail::append_hex(out, static_cast<unsigned char>(text[at]), 2);
            ++at;
            continue;
        }
        if (detail::is_hidden_or_control(code_point)) {
            out += code_point > 0xffff ? "\\U" : "\\u";
            detail::append_hex(out, code_point, code_point > 0xffff ? 8 : 4);
        } else {
            out += text.substr(at, length);
        }
        at += length;
    }
    return out;
}

// Columns `text` takes on a terminal; meant for terminal_text's output (an
// invalid byte, which that output never holds, counts as one column).
inline std::size_t terminal_width(std::string_view text) noexcept {
    std::size_t columns = 0;
    for (std::size_t at = 0; at < text.size();) {
        std::uint32_t code_point = 0;
        const std::size_t length = detail::decode_utf8(text, at, code_point);
        columns += length == 0 ? 1 : detail::columns_of(code_point);
        at += length == 0 ? 1 : length;
    }
    return columns;
}

// The longest prefix of `text` (terminal_text's output) that fits in
// `columns`, cut at a character boundary, with "..." when something was cut.
inline std::string clip_to_width(std::string_view text, std::size_t columns) {
    if (terminal_width(text) <= columns || columns < 4) return std::string(text);
    std::size_t used = 0, at = 0;
    while (at < text.size()) {
        std::uint32_t code_point = 0;
        std::size_t length = detail::decode_utf8(text, at, code_point);
        const std::size_t width = length == 0 ? 1 : detail::columns_of(code_point);
        if (length == 0) length = 1;
        if (used + width > columns - 3) break;
        used += width;
        at += length;
    }
    return std::string(text.substr(0, at)) + "...";
}

} // namespace numgap
