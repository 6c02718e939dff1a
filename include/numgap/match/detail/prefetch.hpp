#pragma once
// The matchers' one prefetch mechanism: ask the CPU to start loading a node's
// per-node container (its name, its output keys) that a loop will read a few
// iterations later.
//
// Why: matching a million-node graph walks per-node containers that each live
// in their own heap block. Read one node at a time, every block is a cache
// miss the loop waits for; touched a dozen nodes ahead, the misses overlap.
// Two dependent loads stand behind each attribute, so it is fetched in two
// stages: the container object (for a graph that keeps per-node containers
// in a node struct: that struct) about 2·d nodes ahead, then its last element
// (the heap block) about d ahead, when the first has arrived.
// Only a hint: no effect on results; a no-op for attributes a graph returns
// as owned values (computing them twice would cost more than the miss) or
// that are not contiguous, and on compilers without __builtin_prefetch.
//
// Kept where it measured a gain, dropped where it did not
// (benchmarks/match.cpp, Release, 10^6 nodes, each site switched off alone
// against all on, runs alternated; CPU ms, on a shared 2-core VM):
//   match_by_name, names 16/32 nodes ahead:              ~476 vs ~506 off (6%)
//   name_table, arena entries in hash order:             ~476 vs ~506 off (6%)
//   match_context::add_one_to_one_groups, output keys
//     and their characters 8/16/24 pairs ahead:          ~489 vs ~568 off (16%)
//   match_by_handle, output keys of each component:      ~348 vs ~460 off (32%)
//   match_by_handle, debug handles in the first loop:    ~341 vs ~342 off: dropped
// (all five off, one run: 2.1x slower for match_by_handle, 1.3x for
// match_by_name). Measured with a temporary per-site switch, not committed.
// O(1), never throws.
#include <cstddef>
#include <memory>
#include <ranges>
#include <type_traits>
#include <utility>

#include <numgap/core/prefetch.hpp>
#include <numgap/graph/node_name.hpp>
#include <numgap/graph/output_keys.hpp>

namespace numgap::detail {

enum class node_attribute : unsigned char { name, output_keys };

template <node_attribute Attribute, class G>
decltype(auto) attribute_of(const G& graph, std::size_t node) {
    if constexpr (Attribute == node_attribute::name) return numgap::node_name(graph, node);
    else return numgap::output_keys(graph, node);
}

template <node_attribute Attribute, class G>
using attribute_type = decltype(attribute_of<Attribute>(std::declval<const G&>(), std::size_t{}));

// Whether the graph keeps the attribute: the customization returns a
// reference to it, or a view into it (a borrowed range, such as the spans
// basic_graph returns), so that touching it early is free and views into it
// stay valid.
template <node_attribute Attribute, class G>
inline constexpr bool stable_attribute = std::is_lvalue_reference_v<attribute_type<Attribute, G>> ||
                                         std::ranges::borrowed_range<attribute_type<Attribute, G>>;

// Stage one: the container object (a view has none to fetch: it is made
// from the graph's arrays when asked for).
template <node_attribute Attribute, class G>
void prefetch_attribute_container(const G& graph, std::size_t node) noexcept {
    if constexpr (std::is_lvalue_reference_v<attribute_type<Attribute, G>>)
        prefetch(std::addressof(attribute_of<Attribute>(graph, node)));
}

// Stage two: the container's last element (its heap block).
template <node_attribute Attribute, class G>
void prefetch_attribute_data(const G& graph, std::size_t node) noexcept {
    if constexpr (stable_attribute<Attribute, G>) {
        auto&& range = attribute_of<Attribute>(graph, node);
        using range_type = std::remove_reference_t<decltype(range)>;
        if constexpr (std::ranges::contiguous_range<range_type> && std::ranges::sized_range<range_type>) {
            const auto size = std::ranges::size(range);
            if (size != 0) prefetch(std::ranges::data(range) + (size - 1));
        }
    }
}

// Both stages for a loop over nodes [0, count) in index order, called at
// `node`: node + 2·ahead's container, node + ahead's last element.
template <node_attribute Attribute, class G>
void prefetch_attribute_ahead(const G& graph, std::size_t node, std::size_t count, std::size_t ahead) noexcept {
    if (node + 2 * ahead < count) prefetch_attribute_container<Attribute>(graph, node + 2 * ahead);
    if (node + ahead < count) prefetch_attribute_data<Attribute>(graph, node + ahead);
}

} // namespace numgap::detail
