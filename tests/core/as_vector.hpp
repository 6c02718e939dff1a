#pragma once
// numgap_test::as_vector(range): a std::vector copy of a range, so that a
// check can compare a graph's spans (producers, handles, output keys) with
// a braced list of what they should hold.
#include <ranges>
#include <vector>

namespace numgap_test {

template <std::ranges::input_range R>
std::vector<std::ranges::range_value_t<R>> as_vector(const R& range) {
    return {std::ranges::begin(range), std::ranges::end(range)};
}

} // namespace numgap_test
