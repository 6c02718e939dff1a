#pragma once
// Test support: Polygraphy RunResults JSON written character by character
// from the format (Polygraphy's polygraphy/json/serde.py and
// polygraphy/comparator/struct.py), in each encoding numgap reads.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <numgap/core/dtype.hpp>
#include <numgap/io/npy.hpp>

namespace numgap_test {

inline std::string base64_of(std::string_view bytes) {
    static constexpr char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    std::size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        const std::uint32_t bits = std::uint32_t(std::uint8_t(bytes[i])) << 16 |
                                   std::uint32_t(std::uint8_t(bytes[i + 1])) << 8 | std::uint8_t(bytes[i + 2]);
        for (int shift = 18; shift >= 0; shift -= 6) out += digits[(bits >> shift) & 63];
    }
    if (bytes.size() - i == 1) {
        const std::uint32_t bits = std::uint32_t(std::uint8_t(bytes[i])) << 16;
        out += digits[bits >> 18];
        out += digits[(bits >> 12) & 63];
        out += "==";
    } else if (bytes.size() - i == 2) {
        const std::uint32_t bits = std::uint32_t(std::uint8_t(bytes[i])) << 16 | std::uint32_t(std::uint8_t(bytes[i + 1])) << 8;
        out += digits[bits >> 18];
        out += digits[(bits >> 12) & 63];
        out += digits[(bits >> 6) & 63];
        out += '=';
    }
    return out;
}

// A complete .npy file (what np.save writes) of float32 values.
inline std::string npy_of(const std::vector<float>& values, std::vector<std::int64_t> shape = {}) {
    if (shape.empty()) shape = {std::int64_t(values.size())};
    std::string file = numgap::io::detail::npy_preamble(numgap::dtype::float32, shape);
    const std::size_t header = file.size();
    file.resize(header + values.size() * sizeof(float));
    if (!values.empty()) std::memcpy(file.data() + header, values.data(), values.size() * sizeof(float));
    return file;
}

// The three ways an array has been encoded.
inline std::string lazy_array(const std::string& npy) { // current: LazyArray around ndarray
    return R"({"values": {"array": ")" + base64_of(npy) + R"(", "polygraphy_class": "ndarray"}, "polygraphy_class": "LazyArray"})";
}
inline std::string plain_array(const std::string& npy) { // before LazyArray
    return R"({"array": ")" + base64_of(npy) + R"(", "polygraphy_class": "ndarray"})";
}
inline std::string legacy_array(const std::string& npy) { // the legacy type marker
    return R"({"array": ")" + base64_of(npy) + R"(", "__polygraphy_encoded_ndarray": "polygraphy_serialized_json_type"})";
}
// The oldest: the .npy bytes as latin-1 characters, escaped like Python's json.dumps (ensure_ascii).
inline std::string latin1_array(const std::string& npy) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string text = R"({"array": ")";
    for (const char c : npy) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte == '"' || byte == '\\') {
            text += '\\';
            text += char(byte);
        } else if (byte < 0x20 || byte >= 0x7f) {
            text += "\\u00";
            text += hex[byte >> 4];
            text += hex[byte & 15];
        } else {
            text += char(byte);
        }
    }
    return text + R"(", "__polygraphy_encoded_ndarray": "polygraphy_serialized_json_type"})";
}

// {"outputs": {...}, ...} from (name, encoded array) pairs.
inline std::string iteration_result(const std::vector<std::pair<std::string, std::string>>& outputs,
                                    const std::string& runner) {
    std::string text = R"({"outputs": {)";
    for (std::size_t i = 0; i < outputs.size(); ++i)
        text += (i ? ", \"" : "\"") + outputs[i].first + "\": " + outputs[i].second;
    return text + R"(}, "runtime": 0.0125, "runner_name": ")" + runner + R"(", "polygraphy_class": "IterationResult"})";
}

// {"lst": [[runner, [iterations...]], ...], "polygraphy_class": "RunResults"}, indented like Polygraphy.
inline std::string run_results(const std::vector<std::pair<std::string, std::vector<std::string>>>& runners) {
    std::string text = "{\n    \"lst\": [";
    for (std::size_t r = 0; r < runners.size(); ++r) {
        text += (r ? ",\n        [\n" : "\n        [\n") + std::string("            \"") + runners[r].first + "\",\n            [";
        for (std::size_t i = 0; i < runners[r].second.size(); ++i) text += (i ? ", " : "") + runners[r].second[i];
        text += "]\n        ]";
    }
    return text + "\n    ],\n    \"polygraphy_class\": \"RunResults\"\n}\n";
}

} // namespace numgap_test
