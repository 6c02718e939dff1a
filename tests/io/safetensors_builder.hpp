#pragma once
// Test support: safetensors files built byte by byte from the format
// description (8-byte little-endian header length, JSON header, data), the
// well-formed ones by safetensors_file() and hostile ones from raw header text
// by file_bytes().
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace numgap_test {

// One tensor of a file being written (tensor_bytes{key, dtype, shape JSON, data}): its header entry and its data bytes.
struct tensor_bytes {
    std::string key, dtype_name, shape; // shape as JSON text, e.g. "[2,3]"
    std::vector<std::byte> data;
};

template <class T>
inline std::vector<std::byte> bytes_of(const std::vector<T>& values) {
    std::vector<std::byte> out(values.size() * sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
    return out;
}

inline std::string length_prefix(std::uint64_t length) {
    std::string out;
    for (int i = 0; i < 8; ++i) out += char((length >> (8 * i)) & 0xff);
    return out;
}

// 8-byte little-endian length, the header, then the data.
inline std::string file_bytes(const std::string& header, const std::vector<std::byte>& data = {}) {
    std::string out = length_prefix(header.size()) + header;
    for (std::byte b : data) out += char(b);
    return out;
}

// A well-formed file: tensors laid out in order; the header padded with
// spaces to `header_size` when given (to place the data at a chosen offset).
inline std::string safetensors_file(const std::vector<tensor_bytes>& tensors, const std::string& metadata = "",
                                    std::size_t header_size = 0) {
    std::string header = "{";
    if (!metadata.empty()) header += "\"__metadata__\":" + metadata;
    std::vector<std::byte> data;
    for (const tensor_bytes& tensor : tensors) {
        if (header.size() > 1) header += ",";
        header += "\"" + tensor.key + "\":{\"dtype\":\"" + tensor.dtype_name + "\",\"shape\":" + tensor.shape +
                  ",\"data_offsets\":[" + std::to_string(data.size()) + "," +
                  std::to_string(data.size() + tensor.data.size()) + "]}";
        data.insert(data.end(), tensor.data.begin(), tensor.data.end());
    }
    header += "}";
    header.resize(std::max(header_size, header.size()), ' ');
    return file_bytes(header, data);
}

} // namespace numgap_test
