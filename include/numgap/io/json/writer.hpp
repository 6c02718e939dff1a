#pragma once
// Writing JSON: json_writer, the one streaming writer every JSON numgap emits
// goes through (the JSON report, the Model Explorer overlay, the CLI demo's
// graph.json), and the two value writers under it.
//
// json_writer appends to a std::string as it is called: begin/end objects and
// arrays, key(), then values; it puts the commas and colons where they belong,
// so a writer never keeps a "first" flag. line_break() starts the next token
// (after its comma) on a new line: the report keeps one group per line that
// way, and whitespace between tokens is insignificant to every reader.
// Misuse (a value in an object without a key, a key in an array, an end that
// does not match its begin) is a programming error caught by NUMGAP_ASSERT.
//
// write_json_string() escapes quotes, backslashes and control characters
// (DEL too) and replaces each byte of invalid UTF-8 with \ufffd, so its output
// is always valid JSON whatever bytes a tensor or node name holds.
// write_json_number() writes the shortest text that reads back to the same
// double (std::to_chars) and the strings "inf", "-inf", "nan" for non-finite
// values (JSON has no literal for them).
// Complexity: O(output). Throws: only std::bad_alloc.
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/io/json/utf8.hpp>

namespace numgap::io {

// Appends `text` as a JSON string literal (see the top of this header).
inline void write_json_string(std::string& out, std::string_view text) {
    static constexpr char hex_digits[] = "0123456789abcdef";
    out += '"';
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    for (std::size_t i = 0; i < text.size();) {
        const unsigned char c = bytes[i];
        if (c >= 0x80) {
            const std::size_t length = detail::utf8_sequence_length(bytes + i, text.size() - i);
            if (length == 0) {
                out += "\\ufffd";
                ++i;
            } else {
                out.append(text.substr(i, length));
                i += length;
            }
            continue;
        }
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20 || c == 0x7f) {
                out += "\\u00";
                out += hex_digits[c >> 4];
                out += hex_digits[c & 15];
            } else {
                out += char(c);
            }
        }
        ++i;
    }
    out += '"';
}

// Appends the shortest round-trip form of `value`; non-finite values as strings.
inline void write_json_number(std::string& out, double value) {
    if (std::isnan(value)) return write_json_string(out, "nan");
    if (std::isinf(value)) return write_json_string(out, value > 0 ? "inf" : "-inf");
    char buffer[32];
    const auto [end, status] = std::to_chars(buffer, buffer + sizeof buffer, value);
    NUMGAP_ASSERT(status == std::errc());
    out.append(buffer, end);
}

class json_writer {
public:
    // Appends to `out`, which must outlive the writer.
    explicit json_writer(std::string& out) noexcept : out_(out) {}

    json_writer& begin_object() { return open('{', true); }
    json_writer& end_object() { return close('}', true); }
    json_writer& begin_array() { return open('[', false); }
    json_writer& end_array() { return close(']', false); }

    // The key of the next object member.
    json_writer& key(std::string_view name) {
        NUMGAP_ASSERT(!open_.empty() && open_.back().is_object && !after_key_);
        separate();
        write_json_string(out_, name);
        out_ += ':';
        after_key_ = true;
        return *this;
    }

    json_writer& string(std::string_view text) {
        start_value();
        write_json_string(out_, text);
        return *this;
    }
    json_writer& number(double value) {
        start_value();
        write_json_number(out_, value);
        return *this;
    }
    // Counts and sizes: written exactly, not through a double.
    json_writer& integer(std::int64_t value) { return integer_text(std::to_string(value)); }
    json_writer& unsigned_integer(std::uint64_t value) { return integer_text(std::to_string(value)); }
    json_writer& boolean(bool value) {
        start_value();
        out_ += value ? "true" : "false";
        return *this;
    }
    json_writer& null() {
        start_value();
        out_ += "null";
        return *this;
    }

    // An array of strings, e.g. node names.
    template <class Strings>
    json_writer& string_array(const Strings& items) {
        begin_array();
        for (const auto& item : items) string(item);
        return end_array();
    }

    // The next token (after its comma, if any) starts on a new line.
    json_writer& line_break() noexcept {
        line_break_pending_ = true;
        return *this;
    }

    // True when every begin has had its end (and at least one value was written).
    bool complete() const noexcept { return open_.empty() && wrote_root_; }

private:
    struct level {
        bool is_object;
        bool empty;
    };

    // The comma before a member or element, then a pending line break.
    void separate() {
        if (!open_.empty()) {
            if (!open_.back().empty) out_ += ',';
            open_.back().empty = false;
        }
        if (line_break_pending_) out_ += '\n';
        line_break_pending_ = false;
    }
    void start_value() {
        if (after_key_) {
            after_key_ = false;
            if (line_break_pending_) out_ += '\n';
            line_break_pending_ = false;
            return;
        }
        NUMGAP_ASSERT(open_.empty() ? !wrote_root_ : !open_.back().is_object);
        separate();
        if (open_.empty()) wrote_root_ = true;
    }
    json_writer& integer_text(const std::string& text) {
        start_value();
        out_ += text;
        return *this;
    }
    json_writer& open(char bracket, bool is_object) {
        start_value();
        out_ += bracket;
        open_.push_back({is_object, true});
        return *this;
    }
    json_writer& close(char bracket, bool is_object) {
        NUMGAP_ASSERT(!open_.empty() && open_.back().is_object == is_object && !after_key_);
        (void)is_object;
        if (line_break_pending_) out_ += '\n';
        line_break_pending_ = false;
        out_ += bracket;
        open_.pop_back();
        return *this;
    }

    std::string& out_;
    std::vector<level> open_;
    bool after_key_ = false;
    bool line_break_pending_ = false;
    bool wrote_root_ = false;
};

} // namespace numgap::io
