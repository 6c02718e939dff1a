#pragma once
// numgap::producers(g, i): the nodes whose outputs node i consumes (its input
// edges), as a range of node indices. Order is kept (it is the input order);
// a producer may repeat (x + x).
// Customization: a member g.producers(i), else a free function producers(g, i)
// found by ADL. No default. The range is returned exactly as the
// customization returns it (a reference to the user's container stays a
// reference: no copy). Throws whatever the customization throws.
#include <concepts>
#include <cstddef>
#include <ranges>
#include <utility>

namespace numgap {
namespace detail::producers_cpo {

template <class G>
void producers(const G&, std::size_t) = delete;

template <class R>
concept index_range =
    std::ranges::input_range<R> && std::convertible_to<std::ranges::range_value_t<R>, std::size_t>;

template <class G>
concept has_member = requires(const G& g, std::size_t i) {
    { g.producers(i) } -> index_range;
};
template <class G>
concept has_adl = requires(const G& g, std::size_t i) {
    { producers(g, i) } -> index_range;
};

struct fn {
    template <class G>
        requires has_member<G> || has_adl<G>
    constexpr decltype(auto) operator()(const G& g, std::size_t node) const {
        if constexpr (has_member<G>) {
            return g.producers(node);
        } else {
            return producers(g, node);
        }
    }
};

} // namespace detail::producers_cpo

inline namespace cpos {
inline constexpr detail::producers_cpo::fn producers{};
} // namespace cpos

} // namespace numgap
