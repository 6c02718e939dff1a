#pragma once
// numgap::op_type(g, i): the operator type of node i ("conv2d",
// "aten::layer_norm", "QLinearConv" ...), convertible to std::string_view.
// Optional: structural matching uses it when present.
// Customization: a member g.op_type(i), else a free function op_type(g, i)
// found by ADL, else the default: an empty string_view ("unknown op").
// numgap::has_op_types<G> says whether G customizes it.
#include <concepts>
#include <cstddef>
#include <string_view>
#include <utility>

namespace numgap {
namespace detail::op_type_cpo {

template <class G>
void op_type(const G&, std::size_t) = delete;

template <class G>
concept has_member = requires(const G& g, std::size_t i) {
    { g.op_type(i) } -> std::convertible_to<std::string_view>;
};
template <class G>
concept has_adl = requires(const G& g, std::size_t i) {
    { op_type(g, i) } -> std::convertible_to<std::string_view>;
};

struct fn {
    template <class G>
    constexpr decltype(auto) operator()(const G& g, std::size_t node) const {
        if constexpr (has_member<G>) {
            return g.op_type(node);
        } else if constexpr (has_adl<G>) {
            return op_type(g, node);
        } else {
            return std::string_view{};
        }
    }
};

} // namespace detail::op_type_cpo

inline namespace cpos {
inline constexpr detail::op_type_cpo::fn op_type{};
} // namespace cpos

template <class G>
concept has_op_types = detail::op_type_cpo::has_member<G> || detail::op_type_cpo::has_adl<G>;

} // namespace numgap
