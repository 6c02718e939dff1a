// libFuzzer target: JSON (io/json.hpp). The input is a JSON text.
// Parses it and, when it is accepted, writes the value back with numgap's
// JSON writers (write_json_string, write_json_number) and parses that again:
// the two values must be equal. This is a correctness oracle for both sides:
// the parser must accept everything the writers emit (every escape, every
// UTF-8 sequence, every shortest-form number) and read back the same value.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <numgap/core/error.hpp>
#include <numgap/io/json.hpp>

#include "fuzz_support.hpp"

// A namespace of its own: the targets are compiled together (CMakeLists.txt).
namespace json_target {

using numgap::io::json_value;

// The one place this target calls the parser.
json_value parse(std::string_view text, std::string_view name) { return numgap::io::parse_json(text, name); }

// Integers keep their exact text (a double would round those above 2^53).
void write(std::string& out, const json_value& value) {
    switch (value.type()) {
    case json_value::kind::null: out += "null"; break;
    case json_value::kind::boolean: out += value.as_bool() ? "true" : "false"; break;
    case json_value::kind::number:
        if (value.is_integer()) {
            char digits[24];
            const auto written = std::to_chars(digits, digits + sizeof digits, value.as_integer());
            out.append(digits, written.ptr);
        } else {
            numgap::io::write_json_number(out, value.as_number());
        }
        break;
    case json_value::kind::string: numgap::io::write_json_string(out, value.as_string()); break;
    case json_value::kind::array: {
        out += '[';
        const char* separator = "";
        for (const json_value& element : value.as_array()) {
            out += separator;
            write(out, element);
            separator = ",";
        }
        out += ']';
        break;
    }
    case json_value::kind::object: {
        out += '{';
        const char* separator = "";
        for (const numgap::io::json_member& member : value.as_object()) {
            out += separator;
            numgap::io::write_json_string(out, member.key);
            out += ':';
            write(out, member.value);
            separator = ",";
        }
        out += '}';
        break;
    }
    }
}

// Equal values; "1.0" and "1" are equal numbers (the writer may drop a
// fraction), so integer-ness is compared only where both sides have it.
bool same(const json_value& a, const json_value& b) {
    if (a.type() != b.type()) return false;
    switch (a.type()) {
    case json_value::kind::null: return true;
    case json_value::kind::boolean: return a.as_bool() == b.as_bool();
    case json_value::kind::number:
        if (a.is_integer() && b.is_integer()) return a.as_integer() == b.as_integer();
        return a.as_number() == b.as_number();
    case json_value::kind::string: return a.as_string() == b.as_string();
    case json_value::kind::array: {
        const auto& x = a.as_array();
        const auto& y = b.as_array();
        if (x.size() != y.size()) return false;
        for (std::size_t i = 0; i < x.size(); ++i)
            if (!same(x[i], y[i])) return false;
        return true;
    }
    case json_value::kind::object: {
        const auto& x = a.as_object();
        const auto& y = b.as_object();
        if (x.size() != y.size()) return false;
        for (std::size_t i = 0; i < x.size(); ++i)
            if (x[i].key != y[i].key || !same(x[i].value, y[i].value)) return false;
        return true;
    }
    }
    return false;
}

NUMGAP_FUZZ_TARGET(json) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    json_value original;
    try {
        original = parse(text, "fuzz.json");
    } catch (const numgap::error& failure) {
        numgap::fuzz::refused(failure);
        return 0;
    }
    std::string written;
    write(written, original);
    try {
        if (same(original, parse(written, "written.json"))) return 0;
        std::fprintf(stderr, "numgap fuzz: JSON changed through the writer; it wrote:\n%s\n", written.c_str());
    } catch (const numgap::error& failure) {
        std::fprintf(stderr, "numgap fuzz: the parser refuses what the writer wrote: %s\nit wrote:\n%s\n",
                     failure.what(), written.c_str());
    }
    std::abort();
}

} // namespace json_target
