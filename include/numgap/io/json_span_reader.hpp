#pragma once
// numgap::io::detail::json_span_reader: a pull reader over JSON text held in
// memory (a mapped file) that hands out strings as spans of that text instead
// of copies. It exists for JSON containers whose strings are the bulk of the
// file (a Polygraphy JSON holds every tensor as one base64 string): parse_json
// (json.hpp) builds a tree with owned strings, which would hold such a file in
// memory twice. Small strings (keys, names) are decoded by parse_json itself
// on their own slice, so escapes and UTF-8 follow one implementation.
//
// It checks JSON syntax as far as it reads: structure, string escapes and
// control characters, literals and number characters (skip_value accepts any
// well-formed value; numbers are checked for their character set only).
// Nesting deeper than max_depth is refused. Every error is a numgap::error of
// kind format (or limit for nesting) naming the file and the byte offset.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <numgap/core/error.hpp>
#include <numgap/io/json.hpp>

namespace numgap::io::detail {

class json_span_reader {
public:
    // The characters between a string's quotes, as offsets into the text.
    struct string_span {
        std::size_t begin = 0, end = 0;
        bool escaped = false; // holds a backslash escape: the raw bytes are not the value
    };

    json_span_reader(std::span<const std::byte> text, std::string_view file, int max_depth = 64)
        : text_(reinterpret_cast<const char*>(text.data()), text.size()), file_(file), max_depth_(max_depth) {}

    std::size_t offset() const noexcept { return position_; }
    std::string_view text() const noexcept { return text_; }

    // The next significant character ('\0' at the end), without consuming it.
    char peek() {
        skip_blanks();
        return position_ < text_.size() ? text_[position_] : '\0';
    }
    // Consumes `c` if it comes next.
    bool consume(char c) {
        if (peek() != c) return false;
        ++position_;
        return true;
    }
    // Consumes `c` or fails saying what was expected there.
    void expect(char c, std::string_view what) {
        if (!consume(c)) fail("expected " + std::string(what) + ", found " + found());
    }

    string_span read_string_span() {
        if (peek() != '"') fail("expected a string, found " + found());
        string_span span{++position_, 0, false};
        for (;;) {
            if (position_ >= text_.size()) fail_at("unterminated string", span.begin - 1);
            const auto c = static_cast<unsigned char>(text_[position_]);
            if (c == '"') break;
            if (c < 0x20) fail("control character (byte " + std::to_string(c) + ") inside a string");
            if (c == '\\') {
                span.escaped = true;
                ++position_; // the escaped character; parse_json checks the sequence when decoded
                if (position_ >= text_.size()) fail_at("unterminated string", span.begin - 1);
            }
            ++position_;
        }
        span.end = position_++;
        return span;
    }
    // A string's value (escapes decoded, UTF-8 checked by parse_json).
    std::string read_string() { return decode(read_string_span()); }
    std::string decode(const string_span& span) const {
        const std::string_view raw = text_.substr(span.begin, span.end - span.begin);
        bool plain_ascii = !span.escaped;
        for (std::size_t i = 0; plain_ascii && i < raw.size(); ++i) plain_ascii = static_cast<unsigned char>(raw[i]) < 0x80;
        if (plain_ascii) return std::string(raw);
        try {
            return parse_json(text_.substr(span.begin - 1, span.end - span.begin + 2), file_).as_string();
        } catch (const error& failure) {
            fail_at(std::string("invalid string (") + failure.what() + ")", span.begin - 1);
        }
    }

    // Reads an object, calling on_member(key) positioned at each member's value;
    // on_member must consume the value.
    template <class OnMember> void read_object(OnMember&& on_member, std::string_view what) {
        expect('{', what);
        enter();
        if (!consume('}')) {
            do {
                const std::string key = read_string();
                expect(':', "':' after an object key");
                on_member(key);
            } while (consume(','));
            expect('}', "',' or '}' in an object");
        }
        --depth_;
    }
    // Reads an array, calling on_element(index) positioned at each element.
    template <class OnElement> void read_array(OnElement&& on_element, std::string_view what) {
        expect('[', what);
        enter();
        std::size_t index = 0;
        if (!consume(']')) {
            do on_element(index++);
            while (consume(','));
            expect(']', "',' or ']' in an array");
        }
        --depth_;
    }

    void skip_value() {
        switch (peek()) {
        case '{': read_object([&](const std::string&) { skip_value(); }, "an object"); return;
        case '[': read_array([&](std::size_t) { skip_value(); }, "an array"); return;
        case '"': (void)read_string_span(); return;
        case 't': return skip_literal("true");
        case 'f': return skip_literal("false");
        case 'n': return skip_literal("null");
        default: break;
        }
        const std::size_t start = position_;
        while (position_ < text_.size() && std::string_view("0123456789+-.eE").find(text_[position_]) != std::string_view::npos)
            ++position_;
        if (position_ == start) fail("expected a value, found " + found());
    }

    // Only blanks may follow the document.
    void finish() {
        if (peek() != '\0') fail("unexpected " + found() + " after the end of the JSON document");
    }

    [[noreturn]] void fail(const std::string& what) const { fail_at(what, position_); }
    [[noreturn]] void fail_at(const std::string& what, std::size_t at) const {
        throw error(error_kind::format, "'" + file_ + "': at byte offset " + std::to_string(at) + ": " + what,
                    error_location::at_offset(file_, at));
    }

private:
    void skip_blanks() noexcept {
        while (position_ < text_.size() &&
               (text_[position_] == ' ' || text_[position_] == '\t' || text_[position_] == '\n' || text_[position_] == '\r'))
            ++position_;
    }
    void skip_literal(std::string_view literal) {
        if (text_.substr(position_, literal.size()) != literal) fail("expected a value, found " + found());
        position_ += literal.size();
    }
    void enter() {
        if (++depth_ > max_depth_)
            throw error(error_kind::limit,
                        "'" + file_ + "': at byte offset " + std::to_string(position_) + ": JSON nested deeper than " +
                            std::to_string(max_depth_) + " levels",
                        error_location::at_offset(file_, position_));
    }
    std::string found() const {
        if (position_ >= text_.size()) return "the end of the file";
        const auto c = static_cast<unsigned char>(text_[position_]);
        if (c >= 0x20 && c < 0x7f) return std::string("'") + char(c) + "'";
        return "byte " + std::to_string(c);
    }

    std::string_view text_;
    std::string file_;
    int max_depth_;
    int depth_ = 0;
    std::size_t position_ = 0;
};

} // namespace numgap::io::detail
