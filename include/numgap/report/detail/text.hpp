#pragma once
// Text helpers shared by the report writers: joining node names, shape text,
// the spelling of the model's optional enums (empty when absent), and writing
// a whole file (atomically) with an error that names it.
// Complexity: linear in the text. Throws: numgap::error (write_text_file, naming
// the file and the OS reason); std::bad_alloc.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/io/atomic_file.hpp>
#include <numgap/match/match_kind.hpp>

namespace numgap::detail {

inline std::string join_names(const std::vector<std::string>& names, std::string_view separator) {
    std::string joined;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i) joined += separator;
        joined += names[i];
    }
    return joined;
}

inline std::string format_shape(const std::vector<std::int64_t>& shape) {
    std::string text;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) text += 'x';
        text += std::to_string(shape[i]);
    }
    return text;
}

inline std::string_view dtype_text(const std::optional<dtype>& type) noexcept {
    return type ? name_of(*type) : std::string_view();
}

inline std::string_view kind_text(const std::optional<match_kind>& kind) noexcept {
    return kind ? to_string(*kind) : std::string_view();
}

// Complete or absent, never truncated: see io/atomic_file.hpp.
inline void write_text_file(const std::filesystem::path& path, std::string_view text,
                            std::string_view what) {
    io::write_file_atomically(path, text, what);
}
} // namespace numgap::detail
