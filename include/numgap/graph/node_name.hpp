#pragma once
// numgap::node_name(g, i): the name of node i, as anything convertible to
// std::string_view (a std::string, a const std::string&, a string_view, a
// const char*). Algorithms use it as a key (name matching) and in error
// messages, so it should be unique; only name matching requires that.
// Customization: a member g.node_name(i), else a free function node_name(g, i)
// found by ADL. No default. Returned as the customization returns it (a
// temporary std::string stays a value, so it cannot dangle).
#include <concepts>
#include <cstddef>
#include <string_view>
#include <utility>

namespace numgap {
namespace detail::node_name_cpo {

template <class G>
void node_name(const G&, std::size_t) = delete;

template <class G>
concept has_member = requires(const G& g, std::size_t i) {
    { g.node_name(i) } -> std::convertible_to<std::string_view>;
};
template <class G>
concept has_adl = requires(const G& g, std::size_t i) {
    { node_name(g, i) } -> std::convertible_to<std::string_view>;
};

struct fn {
    template <class G>
        requires has_member<G> || has_adl<G>
    constexpr decltype(auto) operator()(const G& g, std::size_t node) const {
        if constexpr (has_member<G>) {
            return g.node_name(node);
        } else {
            return node_name(g, node);
        }
    }
};

} // namespace detail::node_name_cpo

inline namespace cpos {
inline constexpr detail::node_name_cpo::fn node_name{};
} // namespace cpos

} // namespace numgap
