#pragma once
// parse_json: a strict RFC 8259 parser into json_value (io/json/value.hpp).
//
// Why not a library: numgap may only depend on the standard library, xtensor
// and xsimd. Strict means: objects refuse duplicate keys (in a config file a
// duplicate is always a mistake); strings are validated UTF-8
// (io/json/utf8.hpp) with all escapes, including \uXXXX surrogate pairs; a
// UTF-8 byte-order mark is skipped; a number too small for a double reads as
// (signed) zero, one too large is an error. Nesting is limited (default 256
// levels) so a hostile file cannot overflow the stack.
// Every error is a numgap::error of kind `format` located at the file's
// 1-based line and byte column (error_location::at_line), and reads
// "<file>:<line>:<column>: <reason>"; nesting too deep is kind `limit`.
// Complexity: O(text) time and memory. Throws: numgap::error, std::bad_alloc.
// Longer than ~350 lines: the object and array walkers (for_each_member,
// for_each_element) serve both the tree and json_stream (io/json/stream.hpp),
// so there is one implementation of the syntax.
#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/key_index.hpp>
#include <numgap/io/json/utf8.hpp>
#include <numgap/io/json/value.hpp>

namespace numgap::io {

namespace detail {
class json_parser {
public:
    json_parser(std::string_view text, std::string_view file_name, int max_depth)
        : text_(text), file_name_(file_name), max_depth_(max_depth) {}

    json_value parse() {
        if (text_.substr(0, 3) == "\xef\xbb\xbf") position_ = line_start_ = 3;
        skip_space();
        if (position_ == text_.size()) fail("expected a JSON value, found the end of the file");
        json_value root;
        parse_value(root, 0);
        skip_space();
        if (position_ != text_.size()) fail("unexpected text after the JSON value");
        return root;
    }

protected: // json_stream (io/json/stream.hpp) reads a document piecewise with the same rules
    [[noreturn]] void fail(const std::string& reason, error_kind kind = error_kind::format) const {
        const auto column = static_cast<std::uint32_t>(position_ - line_start_ + 1);
        throw error(kind,
                    std::string(file_name_) + ":" + std::to_string(line_) + ":" + std::to_string(column) + ": " +
                        reason,
                    error_location::at_line(std::string(file_name_), static_cast<std::uint32_t>(line_), column));
    }
    char peek() const noexcept { return position_ < text_.size() ? text_[position_] : '\0'; }
    bool at_end() const noexcept { return position_ >= text_.size(); }
    void skip_space() noexcept {
        while (position_ < text_.size()) {
            const char c = text_[position_];
            if (c == '\n') {
                ++line_;
                line_start_ = ++position_;
            } else if (c == ' ' || c == '\t' || c == '\r') {
                ++position_;
            } else {
                break;
            }
        }
    }
    std::string found() const {
        if (at_end()) return "the end of the file";
        const char c = text_[position_];
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
            return "byte " + std::to_string(static_cast<unsigned char>(c));
        return std::string("'") + c + "'";
    }

    void parse_value(json_value& value, int depth) {
        value.line_ = line_;
        value.column_ = int(position_ - line_start_ + 1);
        const char c = peek();
        if (c == '{') {
            parse_object(value, depth + 1);
        } else if (c == '[') {
            parse_array(value, depth + 1);
        } else if (c == '"') {
            value.kind_ = json_value::kind::string;
            value.string_ = parse_string();
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            parse_number(value);
        } else if (text_.substr(position_, 4) == "true") {
            value.kind_ = json_value::kind::boolean;
            value.boolean_ = true;
            position_ += 4;
        } else if (text_.substr(position_, 5) == "false") {
            value.kind_ = json_value::kind::boolean;
            position_ += 5;
        } else if (text_.substr(position_, 4) == "null") {
            position_ += 4;
        } else {
            fail("expected a JSON value, found " + found());
        }
    }

    void check_depth(int depth) const {
        if (depth > max_depth_) fail("nesting deeper than " + std::to_string(max_depth_) + " levels", error_kind::limit);
    }

    void parse_object(json_value& value, int depth) {
        value.kind_ = json_value::kind::object;
        for_each_member(depth, true, [&](std::string& key) {
            json_member member{std::move(key), json_value{}};
            parse_value(member.value, depth);
            value.object_.push_back(std::move(member));
        });
    }

    void parse_array(json_value& value, int depth) {
        value.kind_ = json_value::kind::array;
        for_each_element(depth, [&] {
            value.array_.emplace_back();
            parse_value(value.array_.back(), depth);
        });
    }

    // Walks the object that starts here ('{'), nested `depth` levels deep:
    // on_member(key) is called positioned at each member's value and must
    // consume it. Duplicate keys are refused when check_duplicates is set.
    template <class OnMember>
    void for_each_member(int depth, bool check_duplicates, OnMember&& on_member, std::size_t expected_members = 0) {
        check_depth(depth);
        ++position_;
        skip_space();
        if (peek() == '}') {
            ++position_;
            return;
        }
        // Most objects have a few keys: those are compared one by one (short
        // keys are copied without allocating). Beyond, the keys go into one
        // character arena with a hash index over it: an object of a million
        // keys (a safetensors header) costs no allocation per key.
        constexpr std::size_t few_keys = 8;
        std::string first_keys[few_keys];
        std::size_t key_count = 0;
        std::string key_arena;
        std::vector<std::size_t> key_ends; // key i is key_arena[key_ends[i-1], key_ends[i])
        numgap::detail::key_index more_keys;
        const auto arena_key_equals = [&](std::uint32_t i, std::string_view key) {
            const std::size_t begin = i == 0 ? 0 : key_ends[i - 1];
            return std::string_view(key_arena).substr(begin, key_ends[i] - begin) == key;
        };
        const auto remember = [&](const std::string& key) {
            if (key_ends.size() >= 0xffffffffu) fail("an object has more than 2^32 - 1 keys");
            if (!more_keys.insert(key, std::uint32_t(key_ends.size()), arena_key_equals).second) return false;
            key_arena += key;
            key_ends.push_back(key_arena.size());
            return true;
        };
        const auto seen_before = [&](const std::string& key) {
            if (key_count < few_keys) {
                if (std::find(first_keys, first_keys + key_count, key) != first_keys + key_count) return true;
                first_keys[key_count++] = key;
                return false;
            }
            if (more_keys.empty()) {
                // A member takes at least 4 bytes ("":0,), which bounds any
                // hint; the index is touched as it is sized: at most 2^22
                // keys' worth.
                const std::size_t left = text_.size() - position_;
                const std::size_t expected = std::min(expected_members, left / 4);
                if (expected > few_keys) {
                    more_keys.reserve(std::min<std::size_t>(expected, 1 << 22));
                    key_ends.reserve(expected);
                    key_arena.reserve(std::min(expected * 24, left));
                }
                for (const std::string& first : first_keys) remember(first);
            }
            return !remember(key);
        };
        std::string key; // one buffer for every key (on_member may move it away)
        for (;;) {
            skip_space();
            if (peek() != '"') fail("expected a string key in object, found " + found());
            const std::size_t key_position = position_;
            parse_string(key);
            if (check_duplicates && seen_before(key)) {
                position_ = key_position;
                fail("duplicate key \"" + key + "\" in object");
            }
            skip_space();
            if (peek() != ':') fail("expected ':' after object key, found " + found());
            ++position_;
            skip_space();
            on_member(key);
            skip_space();
            if (peek() == ',') {
                ++position_;
                continue;
            }
            if (peek() == '}') {
                ++position_;
                return;
            }
            fail("expected ',' or '}' after object member, found " + found());
        }
    }

    // Walks the array that starts here ('['): on_element() is called
    // positioned at each element and must consume it.
    template <class OnElement> void for_each_element(int depth, OnElement&& on_element) {
        check_depth(depth);
        ++position_;
        skip_space();
        if (peek() == ']') {
            ++position_;
            return;
        }
        for (;;) {
            skip_space();
            on_element();
            skip_space();
            if (peek() == ',') {
                ++position_;
                continue;
            }
            if (peek() == ']') {
                ++position_;
                return;
            }
            fail("expected ',' or ']' after array element, found " + found());
        }
    }

    std::uint32_t parse_hex4() {
        std::uint32_t value = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = peek();
            int digit = -1;
            if (c >= '0' && c <= '9') digit = c - '0';
            if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
            if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
            if (digit < 0) fail("expected four hex digits after \\u, found " + found());
            value = value * 16 + std::uint32_t(digit);
            ++position_;
        }
        return value;
    }

    static constexpr bool is_plain_string_byte(unsigned char c) noexcept {
        return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
    }

    std::string parse_string() {
        std::string out;
        parse_string(out);
        return out;
    }
    // The string that starts here, into `out` (its old text replaced, its
    // storage reused: a million names read into one buffer allocate nothing).
    void parse_string(std::string& out) {
        ++position_; // opening quote
        out.clear();
        for (;;) {
            // A run of printable ASCII is appended at once: names and keys are
            // mostly nothing else, and a byte at a time was a sixth of opening
            // a million-node run.
            const std::size_t plain = position_;
            while (position_ < text_.size() && is_plain_string_byte(static_cast<unsigned char>(text_[position_])))
                ++position_;
            out.append(text_.data() + plain, position_ - plain);
            if (at_end()) fail("unterminated string");
            const auto c = static_cast<unsigned char>(text_[position_]);
            if (c == '"') {
                ++position_;
                return;
            }
            if (c < 0x20) fail("control character (byte " + std::to_string(c) + ") inside a string; escape it");
            if (c >= 0x80) {
                const std::size_t length = utf8_sequence_length(
                    reinterpret_cast<const unsigned char*>(text_.data()) + position_, text_.size() - position_);
                if (length == 0) fail("invalid UTF-8 in a string");
                out.append(text_.substr(position_, length));
                position_ += length;
                continue;
            }
            ++position_; // the backslash: every other byte below 0x80 was in the plain run
            const char escape = peek();
            ++position_;
            switch (escape) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                std::uint32_t code_point = parse_hex4();
                if (code_point >= 0xdc00 && code_point <= 0xdfff) {
                    position_ -= 6;
                    fail("unpaired low surrogate \\u escape in a string");
                }
                if (code_point >= 0xd800 && code_point <= 0xdbff) {
                    if (text_.substr(position_, 2) != "\\u") {
                        position_ -= 6;
                        fail("high surrogate \\u escape not followed by a low surrogate");
                    }
                    position_ += 2;
                    const std::uint32_t low = parse_hex4();
                    if (low < 0xdc00 || low > 0xdfff) {
                        position_ -= 6;
                        fail("high surrogate \\u escape not followed by a low surrogate");
                    }
                    code_point = 0x10000 + ((code_point - 0xd800) << 10) + (low - 0xdc00);
                }
                append_utf8(out, code_point);
                break;
            }
            default:
                position_ -= 2;
                fail("invalid escape sequence in a string");
            }
        }
    }

    // The power of ten of the first significant digit of a validated JSON number
    // ("0.00123e4" -> 1; no significant digit -> 0), saturating far beyond any
    // double's range, so it tells an underflow from an overflow.
    static long decimal_exponent(std::string_view number) {
        std::size_t at = number.front() == '-' ? 1 : 0;
        const auto is_digit = [&] { return at < number.size() && number[at] >= '0' && number[at] <= '9'; };
        long integer_digits = 0, fraction_zeros = 0;
        bool significant_integer = false, significant_fraction = false;
        for (; is_digit(); ++at, ++integer_digits) significant_integer = significant_integer || number[at] != '0';
        if (at < number.size() && number[at] == '.') {
            for (++at; is_digit(); ++at) {
                if (significant_integer || significant_fraction) continue;
                if (number[at] == '0')
                    ++fraction_zeros;
                else
                    significant_fraction = true;
            }
        }
        long exponent = 0;
        if (at < number.size() && (number[at] == 'e' || number[at] == 'E')) {
            const bool negative = ++at < number.size() && number[at] == '-';
            if (at < number.size() && (number[at] == '-' || number[at] == '+')) ++at;
            for (; is_digit(); ++at) exponent = std::min(exponent * 10 + (number[at] - '0'), 1000000L);
            if (negative) exponent = -exponent;
        }
        if (significant_integer) return exponent + integer_digits - 1;
        if (significant_fraction) return exponent - fraction_zeros - 1;
        return 0;
    }

    void parse_number(json_value& value) {
        const std::size_t begin = position_;
        const auto digits = [&] {
            const std::size_t start = position_;
            while (peek() >= '0' && peek() <= '9') ++position_;
            return position_ - start;
        };
        if (peek() == '-') ++position_;
        if (peek() == '0') {
            ++position_;
            if (peek() >= '0' && peek() <= '9') fail("number with a leading zero");
        } else if (digits() == 0) {
            fail("expected a digit in number, found " + found());
        }
        bool integral = true;
        if (peek() == '.') {
            integral = false;
            ++position_;
            if (digits() == 0) fail("expected a digit after the decimal point, found " + found());
        }
        if (peek() == 'e' || peek() == 'E') {
            integral = false;
            ++position_;
            if (peek() == '+' || peek() == '-') ++position_;
            if (digits() == 0) fail("expected a digit in the exponent, found " + found());
        }
        const char* first = text_.data() + begin;
        const char* last = text_.data() + position_;
        value.kind_ = json_value::kind::number;
        const auto [end, status] = std::from_chars(first, last, value.number_);
        if (status == std::errc::result_out_of_range) {
            // Too small for a double reads as (signed) zero, as in every mainstream
            // JSON parser (RFC 8259 leaves range to the implementation); too large
            // stays an error: no finite double is near it.
            if (decimal_exponent(std::string_view(first, std::size_t(last - first))) < 0) {
                value.number_ = *first == '-' ? -0.0 : 0.0;
                return;
            }
            position_ = begin;
            fail("number " + std::string(first, last) + " is out of the range of a double");
        }
        NUMGAP_ASSERT(status == std::errc() && end == last);
        if (integral) {
            const auto [integer_end, integer_status] = std::from_chars(first, last, value.integer_);
            value.is_integer_ = integer_status == std::errc() && integer_end == last;
        }
    }

    std::string_view text_;
    std::string_view file_name_;
    int max_depth_;
    std::size_t position_ = 0;
    std::size_t line_start_ = 0;
    int line_ = 1;
};
} // namespace detail

// Parses a whole JSON document; errors read "<file_name>:<line>:<column>: <reason>".
inline json_value parse_json(std::string_view text, std::string_view file_name, int max_depth = 256) {
    return detail::json_parser(text, file_name, max_depth).parse();
}

} // namespace numgap::io
