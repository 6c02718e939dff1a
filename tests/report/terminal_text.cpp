// Pins down terminal_text: every C0/C1 control, DEL, invalid UTF-8 byte,
// bidi control and invisible format character is escaped readably; valid
// printable UTF-8 passes unchanged; terminal_width and clip_to_width count
// columns, not bytes.
#include <doctest/doctest.h>

#include <string>

#include <numgap/report/terminal_text.hpp>

namespace {
// True when `text` holds no byte a terminal interprets: no C0 control, no
// DEL, no C1 control as UTF-8 (C2 80..C2 9F) and no bare byte >= 0x80 that
// does not start valid UTF-8.
bool inert(const std::string& text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (byte < 0x20 || byte == 0x7f) return false;
        if (byte == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9f) return false;
    }
    return true;
}
} // namespace

TEST_SUITE("report") {
TEST_CASE("terminal_text: C0 controls and DEL become \\xHH") {
    CHECK(numgap::terminal_text("a\x1b[31mred") == "a\\x1b[31mred");
    CHECK(numgap::terminal_text("over\rwrite\n") == "over\\x0dwrite\\x0a");
    CHECK(numgap::terminal_text(std::string("nul\0bel\a", 8)) == "nul\\x00bel\\x07");
    CHECK(numgap::terminal_text("tab\tdel\x7f") == "tab\\x09del\\x7f");
    for (int byte = 0; byte < 0x20; ++byte) {
        const std::string escaped = numgap::terminal_text(std::string(1, char(byte)));
        CHECK(escaped.size() == 4);
        CHECK(escaped.rfind("\\x", 0) == 0);
    }
}

TEST_CASE("terminal_text: C1 controls, bidi overrides and invisible format characters become \\uXXXX") {
    CHECK(numgap::terminal_text("\xc2\x9b" "31m") == "\\u009b31m");          // 8-bit CSI
    CHECK(numgap::terminal_text("\xc2\x9d" "0;x\xc2\x9c") == "\\u009d0;x\\u009c"); // OSC ... ST
    CHECK(numgap::terminal_text("gn\xe2\x80\xae" "2") == "gn\\u202e2");     // RLO
    CHECK(numgap::terminal_text("\xe2\x81\xa6x\xe2\x81\xa9") == "\\u2066x\\u2069"); // LRI..PDI
    for (unsigned c = 0x202a; c <= 0x202e; ++c) {
        const std::string utf8 = {char(0xe2), char(0x80), char(0x80 | (c & 0x3f))};
        CHECK(numgap::terminal_text(utf8).rfind("\\u202", 0) == 0);
    }
    CHECK(numgap::terminal_text("\xe2\x80\x8b") == "\\u200b");       // zero width space
    CHECK(numgap::terminal_text("\xef\xbb\xbf") == "\\ufeff");       // BOM
    CHECK(numgap::terminal_text("\xe2\x80\xa8") == "\\u2028");       // line separator
    CHECK(numgap::terminal_text("\xf3\xa0\x81\x81") == "\\U000e0041"); // tag 'A'
}

TEST_CASE("terminal_text: every byte of invalid UTF-8 becomes \\xHH") {
    CHECK(numgap::terminal_text("\xff") == "\\xff");
    CHECK(numgap::terminal_text("a\x80z") == "a\\x80z");                   // stray continuation
    CHECK(numgap::terminal_text("\xc0\xaf") == "\\xc0\\xaf");              // overlong '/'
    CHECK(numgap::terminal_text("\xed\xa0\x80") == "\\xed\\xa0\\x80");     // surrogate
    CHECK(numgap::terminal_text("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80"); // > U+10FFFF
    CHECK(numgap::terminal_text("\xe4\xb8") == "\\xe4\\xb8");              // truncated
    CHECK(numgap::terminal_text("\xc2\x1b") == "\\xc2\\x1b");              // lead, then ESC
}

TEST_CASE("terminal_text: printable UTF-8 passes unchanged, and the output of any byte string is inert") {
    const std::string printable = "/encoder/层_0/注意力 café 🙂 a\\b \xe2\x80\x8d";
    CHECK(numgap::terminal_text(printable) == printable);
    std::string every_byte;
    for (int byte = 0; byte < 256; ++byte) every_byte += char(byte);
    const std::string escaped = numgap::terminal_text(every_byte);
    CHECK(inert(escaped));
    CHECK(numgap::terminal_text(escaped) == escaped); // idempotent
    // Every pair of bytes, so that lead and continuation bytes meet everything.
    for (int first = 0x80; first < 256; ++first)
        for (int second = 0; second < 256; ++second) {
            const std::string pair = {char(first), char(second)};
            REQUIRE(inert(numgap::terminal_text(pair)));
        }
}

TEST_CASE("terminal_width counts columns; clip_to_width cuts at a character boundary") {
    CHECK(numgap::terminal_width("abc") == 3);
    CHECK(numgap::terminal_width("层_0") == 4);
    CHECK(numgap::terminal_width("e\xcc\x81") == 1); // e + combining acute
    CHECK(numgap::clip_to_width("abcdefgh", 6) == "abc...");
    CHECK(numgap::clip_to_width("abc", 6) == "abc");
    CHECK(numgap::clip_to_width("层层层层层", 7) == "层层...");
    CHECK(numgap::clip_to_width("é é é é é", 6) == "é é...");
}
} // TEST_SUITE("report")
