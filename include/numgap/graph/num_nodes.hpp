#pragma once
// numgap::num_nodes(g): how many nodes an adapted graph has. Nodes are the
// dense indices 0 .. num_nodes(g)-1.
// Customization (graph-v2 style): a member g.num_nodes(), else a free
// function num_nodes(g) found by ADL. There is no default: a graph without a
// node count cannot be adapted. O(1) expected; throws whatever the
// customization throws.
#include <concepts>
#include <cstddef>
#include <utility>

namespace numgap {
namespace detail::num_nodes_cpo {

// Poison pill: stops unqualified lookup from finding the CPO object itself,
// which would switch ADL off.
template <class G>
void num_nodes(const G&) = delete;

template <class G>
concept has_member = requires(const G& g) {
    { g.num_nodes() } -> std::convertible_to<std::size_t>;
};
template <class G>
concept has_adl = requires(const G& g) {
    { num_nodes(g) } -> std::convertible_to<std::size_t>;
};

struct fn {
    template <class G>
        requires has_member<G> || has_adl<G>
    constexpr std::size_t operator()(const G& g) const {
        if constexpr (has_member<G>) {
            return static_cast<std::size_t>(g.num_nodes());
        } else {
            return static_cast<std::size_t>(num_nodes(g));
        }
    }
};

} // namespace detail::num_nodes_cpo

inline namespace cpos {
inline constexpr detail::num_nodes_cpo::fn num_nodes{};
} // namespace cpos

} // namespace numgap
