#pragma once
// numgap::debug_handles(g, i): the set of integer debug handles node i carries
// (ExecuTorch's `debug_handle`, a compiler's provenance ids), as a range of
// std::int64_t. A fused node carries the handles of every op it absorbed; the
// nodes of a decomposition share the handle of the op they came from. Order
// matters only for the ExecuTorch-compatible output choice (see
// match_by_handle); duplicates are harmless.
// Customization: a member g.debug_handles(i), else a free function
// debug_handles(g, i) found by ADL, else the default: an empty range.
// numgap::has_debug_handles<G> says whether G customizes it.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <ranges>
#include <span>
#include <utility>

namespace numgap {
namespace detail::debug_handles_cpo {

template <class G>
void debug_handles(const G&, std::size_t) = delete;

template <class R>
concept handle_range = std::ranges::input_range<R> &&
                       std::convertible_to<std::ranges::range_value_t<R>, std::int64_t>;

template <class G>
concept has_member = requires(const G& g, std::size_t i) {
    { g.debug_handles(i) } -> handle_range;
};
template <class G>
concept has_adl = requires(const G& g, std::size_t i) {
    { debug_handles(g, i) } -> handle_range;
};

struct fn {
    template <class G>
    constexpr decltype(auto) operator()(const G& g, std::size_t node) const {
        if constexpr (has_member<G>) {
            return g.debug_handles(node);
        } else if constexpr (has_adl<G>) {
            return debug_handles(g, node);
        } else {
            return std::span<const std::int64_t>{};
        }
    }
};

} // namespace detail::debug_handles_cpo

inline namespace cpos {
inline constexpr detail::debug_handles_cpo::fn debug_handles{};
} // namespace cpos

template <class G>
concept has_debug_handles =
    detail::debug_handles_cpo::has_member<G> || detail::debug_handles_cpo::has_adl<G>;

} // namespace numgap
