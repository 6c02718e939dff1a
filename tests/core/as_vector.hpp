#pragma once
// numgap_test::as_vector(range): a std::vector copy of a range, so that a
// check can compare a graph's spans and lists (producers, handles, output
// keys) with a braced list of what they should hold. Texts viewed
// (std::string_view) are copied into std::strings.
#include <ranges>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace numgap_test {

template <std::ranges::input_range R>
auto as_vector(const R& range) {
    using viewed = std::ranges::range_value_t<R>;
    using element = std::conditional_t<std::is_same_v<viewed, std::string_view>, std::string, viewed>;
    std::vector<element> copy;
    for (auto&& item : range) copy.emplace_back(item);
    return copy;
}

} // namespace numgap_test
