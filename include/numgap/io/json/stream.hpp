#pragma once
// json_stream: reads a JSON document piecewise with parse_json's rules and
// messages (io/json/parser.hpp), so a large document's outer containers are
// walked without building their tree: the caller visits an object's members
// or an array's elements one at a time and parses each (small) value into a
// json_value, or skips it. Values keep their 1-based line and column in the
// whole document. It exists for graph.json of runs with a million nodes,
// whose tree would take about a kilobyte per node.
//
// Not checked here, unlike parse_json: duplicate keys in an object read with
// read_object(..., check_duplicates = false) (the caller checks what it keeps,
// e.g. by sorting). The stream keeps views of the text and the file name:
// both must outlive it. Complexity: O(text). Throws: numgap::error (format,
// or limit for nesting), std::bad_alloc.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <numgap/core/error.hpp>
#include <numgap/io/json/parser.hpp>
#include <numgap/io/json/value.hpp>

namespace numgap::io::detail {

class json_stream : private json_parser {
public:
    json_stream(std::string_view text, std::string_view file_name, int max_depth = 256)
        : json_parser(text, file_name, max_depth) {
        if (text_.substr(0, 3) == "\xef\xbb\xbf") position_ = line_start_ = 3;
        skip_space();
        if (position_ == text_.size()) fail("expected a JSON value, found the end of the file");
    }

    // The next significant character ('\0' at the end), not consumed.
    char peek_significant() {
        skip_space();
        return peek();
    }

    // Reads the object that comes next (the caller checked peek_significant()
    // is '{'), nested `depth` levels deep (1 for the document's own),
    // calling on_member(key) positioned at each member's value, which it must
    // consume with read_value. `expected_members` (a guess, see
    // bound_ahead) sizes the duplicate check of a large object at once
    // instead of doubling it step by step.
    template <class OnMember>
    void read_object(int depth, bool check_duplicates, OnMember&& on_member, std::size_t expected_members = 0) {
        for_each_member(
            depth, check_duplicates, [&](std::string& key) { on_member(std::as_const(key)); }, expected_members);
    }

    // An upper bound on how many values that each hold `opener` ('{' or '[')
    // and take at least `min_bytes` of text can follow: what a caller may
    // reserve for the elements of a large container before reading it
    // (a million-element vector grown by doubling copies and first-touches
    // twice its size). Counting is a memchr pass over the rest of the text.
    std::size_t bound_ahead(char opener, std::size_t min_bytes) const noexcept {
        const char* at = text_.data() + position_;
        const char* const end = text_.data() + text_.size();
        std::size_t count = 0;
        while (at < end) {
            const void* found = std::memchr(at, opener, std::size_t(end - at));
            if (found == nullptr) break;
            ++count;
            at = static_cast<const char*>(found) + 1;
        }
        return std::min(count, (text_.size() - position_) / (min_bytes == 0 ? 1 : min_bytes));
    }

    // Reads the array that comes next ('['), calling on_element() positioned
    // at each element, which it must consume.
    template <class OnElement> void read_array(int depth, OnElement&& on_element) {
        for_each_element(depth, on_element);
    }

    // The value that comes next, as a tree; `depth` is its container's.
    json_value read_value(int depth) {
        skip_space();
        json_value value;
        parse_value(value, depth);
        return value;
    }

    // The string that comes next, into `out` (no tree node for it); false,
    // consuming nothing, when the next value is not a string.
    bool read_string(std::string& out) {
        skip_space();
        if (peek() != '"') return false;
        parse_string(out);
        return true;
    }

    // The integer that comes next when it is written as plain digits (no
    // sign, fraction or exponent, no leading zero) of at most 18: the value
    // read_value would give, without a tree node (a safetensors header of a
    // million entries holds three million of them). nullopt, consuming
    // nothing, for anything else: read it with read_value.
    std::optional<std::int64_t> read_plain_integer() {
        skip_space();
        std::size_t at = position_;
        std::uint64_t value = 0; // 19 digits fit; more than 18 are refused below
        while (at < text_.size() && at - position_ < 19 && text_[at] >= '0' && text_[at] <= '9')
            value = value * 10 + std::uint64_t(text_[at++] - '0');
        const std::size_t digits = at - position_;
        if (digits == 0 || digits > 18 || (digits > 1 && text_[position_] == '0')) return std::nullopt;
        if (at < text_.size() && (text_[at] == '.' || text_[at] == 'e' || text_[at] == 'E')) return std::nullopt;
        position_ = at;
        return std::int64_t(value);
    }

    // Only blanks may follow the document.
    void finish() {
        skip_space();
        if (position_ != text_.size()) fail("unexpected text after the JSON value");
    }
};

} // namespace numgap::io::detail
