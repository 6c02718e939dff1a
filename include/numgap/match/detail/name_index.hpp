#pragma once
// numgap::detail::name_index: name -> node for the few names an explicit
// mapping mentions, remembering the first two nodes of a name that is not
// unique so the error can name both. O(N) expected to fill.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace numgap::detail {

struct transparent_string_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const noexcept {
        return std::hash<std::string_view>{}(text);
    }
};

struct name_entry {
    std::size_t node;
    std::size_t duplicate; // npos when unique
};

using name_index = std::unordered_map<std::string, name_entry, transparent_string_hash, std::equal_to<>>;

inline constexpr std::size_t no_duplicate = static_cast<std::size_t>(-1);

} // namespace numgap::detail
