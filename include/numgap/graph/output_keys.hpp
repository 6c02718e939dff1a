#pragma once
// numgap::output_keys(g, i): the keys of the tensors node i produces, in output
// order (topk -> {"values", "indices"}), as a range of things convertible to
// std::string_view. The key is what a run's dump uses to store the tensor.
// Customization: a member g.output_keys(i), else a free function
// output_keys(g, i) found by ADL, else the default: one key equal to the node
// name (returned as an owning std::array<std::string, 1>, so it cannot dangle
// whatever node_name returns).
// numgap::has_output_keys<G> says whether G customizes it.
#include <array>
#include <concepts>
#include <cstddef>
#include <ranges>
#include <string>
#include <string_view>
#include <utility>

#include <numgap/graph/node_name.hpp>

namespace numgap {
namespace detail::output_keys_cpo {

template <class G>
void output_keys(const G&, std::size_t) = delete;

template <class R>
concept key_range = std::ranges::input_range<R> &&
                    std::convertible_to<std::ranges::range_reference_t<R>, std::string_view>;

template <class G>
concept has_member = requires(const G& g, std::size_t i) {
    { g.output_keys(i) } -> key_range;
};
template <class G>
concept has_adl = requires(const G& g, std::size_t i) {
    { output_keys(g, i) } -> key_range;
};

struct fn {
    template <class G>
    constexpr decltype(auto) operator()(const G& g, std::size_t node) const {
        if constexpr (has_member<G>) {
            return g.output_keys(node);
        } else if constexpr (has_adl<G>) {
            return output_keys(g, node);
        } else {
            return std::array<std::string, 1>{std::string(std::string_view(numgap::node_name(g, node)))};
        }
    }
};

} // namespace detail::output_keys_cpo

inline namespace cpos {
inline constexpr detail::output_keys_cpo::fn output_keys{};
} // namespace cpos

template <class G>
concept has_output_keys =
    detail::output_keys_cpo::has_member<G> || detail::output_keys_cpo::has_adl<G>;

} // namespace numgap
