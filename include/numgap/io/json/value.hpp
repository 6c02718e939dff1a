#pragma once
// json_value: the DOM the JSON parser (io/json/parser.hpp) builds. Objects
// keep their members in insertion order (graph.json is read in file order);
// numbers are doubles, and a literal without fraction or exponent that fits
// 64 bits is also kept as an exact integer; every value remembers where it
// starts in the text (1-based line and byte column) for error messages.
// Only the parser builds values, so a json_value is always well-formed.
// Complexity: find() is O(members); the rest O(1). Throws: nothing.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/core/config.hpp>

namespace numgap::io {

struct json_member;
namespace detail {
class json_parser;
}

class json_value {
public:
    enum class kind : std::uint8_t { null, boolean, number, string, array, object };

    json_value() = default;

    kind type() const noexcept { return kind_; }
    bool is_null() const noexcept { return kind_ == kind::null; }
    bool is_bool() const noexcept { return kind_ == kind::boolean; }
    bool is_number() const noexcept { return kind_ == kind::number; }
    bool is_string() const noexcept { return kind_ == kind::string; }
    bool is_array() const noexcept { return kind_ == kind::array; }
    bool is_object() const noexcept { return kind_ == kind::object; }
    // A number written without fraction or exponent that fits std::int64_t.
    bool is_integer() const noexcept { return kind_ == kind::number && is_integer_; }

    bool as_bool() const noexcept {
        NUMGAP_ASSERT(is_bool());
        return boolean_;
    }
    double as_number() const noexcept {
        NUMGAP_ASSERT(is_number());
        return number_;
    }
    std::int64_t as_integer() const noexcept {
        NUMGAP_ASSERT(is_integer());
        return integer_;
    }
    const std::string& as_string() const noexcept {
        NUMGAP_ASSERT(is_string());
        return string_;
    }
    const std::vector<json_value>& as_array() const noexcept {
        NUMGAP_ASSERT(is_array());
        return array_;
    }
    inline const std::vector<json_member>& as_object() const noexcept;
    // The member's value, or nullptr when absent (or when this is not an object).
    inline const json_value* find(std::string_view key) const noexcept;

    // Where the value starts in the text, 1-based, for error messages.
    int line() const noexcept { return line_; }
    int column() const noexcept { return column_; }

    // "an object", "a string", ... for "expected X, found Y" messages.
    static constexpr std::string_view describe(kind type) noexcept {
        switch (type) {
        case kind::null: return "null";
        case kind::boolean: return "a boolean";
        case kind::number: return "a number";
        case kind::string: return "a string";
        case kind::array: return "an array";
        case kind::object: return "an object";
        }
        return "a value";
    }

private:
    friend class detail::json_parser;
    kind kind_ = kind::null;
    bool boolean_ = false;
    bool is_integer_ = false;
    int line_ = 0;
    int column_ = 0;
    double number_ = 0;
    std::int64_t integer_ = 0;
    std::string string_;
    std::vector<json_value> array_;
    std::vector<json_member> object_;
};

struct json_member {
    std::string key;
    json_value value;
};

inline const std::vector<json_member>& json_value::as_object() const noexcept {
    NUMGAP_ASSERT(is_object());
    return object_;
}
inline const json_value* json_value::find(std::string_view key) const noexcept {
    if (kind_ != kind::object) return nullptr;
    for (const json_member& member : object_)
        if (member.key == key) return &member.value;
    return nullptr;
}


} // namespace numgap::io
