#pragma once
// numgap::output_shape(g, i, k): the shape of output k of node i when known,
// as std::optional<std::vector<std::int64_t>> (std::nullopt = unknown).
// Structural matching uses shapes, modulo a layout permutation, to tell
// candidates apart.
// Customization: a member g.output_shape(i, k), else a free function
// output_shape(g, i, k) found by ADL, each returning something convertible to
// std::optional<std::vector<std::int64_t>>; else the default: unknown.
// numgap::has_output_shapes<G> says whether G customizes it.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace numgap {

using shape_type = std::vector<std::int64_t>;

namespace detail::output_shape_cpo {

template <class G>
void output_shape(const G&, std::size_t, std::size_t) = delete;

template <class G>
concept has_member = requires(const G& g, std::size_t i) {
    { g.output_shape(i, i) } -> std::convertible_to<std::optional<shape_type>>;
};
template <class G>
concept has_adl = requires(const G& g, std::size_t i) {
    { output_shape(g, i, i) } -> std::convertible_to<std::optional<shape_type>>;
};

struct fn {
    template <class G>
    constexpr std::optional<shape_type> operator()(const G& g, std::size_t node,
                                                   std::size_t output) const {
        if constexpr (has_member<G>) {
            return g.output_shape(node, output);
        } else if constexpr (has_adl<G>) {
            return output_shape(g, node, output);
        } else {
            return std::nullopt;
        }
    }
};

} // namespace detail::output_shape_cpo

inline namespace cpos {
inline constexpr detail::output_shape_cpo::fn output_shape{};
} // namespace cpos

template <class G>
concept has_output_shapes =
    detail::output_shape_cpo::has_member<G> || detail::output_shape_cpo::has_adl<G>;

} // namespace numgap
