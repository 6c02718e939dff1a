#pragma once
// numgap::match_by_handle(reference, target, options, prior): groups of nodes
// whose debug-handle sets overlap (strategy "handle", confidence 1).
//
// Semantics (ExecuTorch Inspector's, where it defines them):
//   - Overlap is transitive: the groups are the connected components of the
//     relation "these two nodes (of either graph) share a handle". So one
//     target node carrying [1, 2, 3] joins reference nodes 1, 2 and 3 (fused);
//     several target nodes sharing handle 4 join reference node 4
//     (decomposed); chains of partial overlaps give many-to-many groups.
//   - A component with nodes on one side only is not a group: those nodes
//     (handles present on one side only) stay unmatched, for later
//     strategies or the report.
//   - Nodes without handles, and nodes an earlier strategy matched, take no
//     part (their handles do not connect anything).
//   - Target output: the group's topologically last target node with an
//     output (ExecuTorch: when several runtime ops share a handle, the last
//     one carries the value).
//   - Reference output: by default the group's topologically last reference
//     node with an output (the output of a fused chain is that of its last
//     op). With options.handle_reference_output == executorch_compatible,
//     as ExecuTorch's map_runtime_aot_intermediate_outputs: the reference
//     node carrying the handle that the target output node lists last; if no
//     reference node of the group carries it, the previous handle in that
//     list, and so on (then the other target nodes, last first); among
//     several reference nodes with that handle, the topologically last one.
//     numgap differs from ExecuTorch in one documented way: ExecuTorch
//     keys its lookup on tuples of handles and may drop a group whose
//     runtime tuple ends with a handle no AOT node has; numgap falls back as
//     described instead of dropping the group.
//
// Requires numgap::graph_with_debug_handles for both types (a readable
// static_assert otherwise). Complexity: O(N α(N) + H) for H handle
// occurrences when handles are dense (span < 4 H: array indexed by handle),
// O(H log H + N α(N)) otherwise (sort); union-find either way, never an
// all-pairs scan. Plus one topological sort per graph. Throws numgap::error on a cycle, a dangling producer index
// or an invalid prior.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/graph/concepts.hpp>
#include <numgap/match/detail/match_context.hpp>
#include <numgap/match/detail/prefetch.hpp>
#include <numgap/match/detail/union_find.hpp>
#include <numgap/match/match_options.hpp>
#include <numgap/match/match_result.hpp>
#include <numgap/match/node_list.hpp>

namespace numgap {
namespace detail {

template <class G>
std::optional<std::size_t> executorch_reference_output(const match_side<G>& reference,
                                                       const node_list& reference_nodes,
                                                       const auto& target,
                                                       const node_list& target_nodes,
                                                       std::size_t target_output) {
    // (handle, position, node) of the group's reference side, sorted: the
    // last entry of a handle's run is its topologically last carrier.
    std::vector<std::pair<std::int64_t, std::size_t>> carriers;
    for (auto node : reference_nodes)
        for (auto handle : numgap::debug_handles(reference.graph, node))
            carriers.emplace_back(static_cast<std::int64_t>(handle), reference.position[node]);
    std::sort(carriers.begin(), carriers.end());
    auto carrier_of = [&](std::int64_t handle) -> std::optional<std::size_t> {
        auto it = std::upper_bound(carriers.begin(), carriers.end(),
                                   std::pair<std::int64_t, std::size_t>{handle, static_cast<std::size_t>(-1)});
        if (it == carriers.begin() || std::prev(it)->first != handle) return std::nullopt;
        return reference.order[std::prev(it)->second];
    };
    auto search = [&](std::size_t target_node) -> std::optional<std::size_t> {
        std::vector<std::int64_t> handles;
        for (auto handle : numgap::debug_handles(target.graph, target_node))
            handles.push_back(static_cast<std::int64_t>(handle));
        for (auto it = handles.rbegin(); it != handles.rend(); ++it)
            if (auto node = carrier_of(*it)) return node;
        return std::nullopt;
    };
    if (auto node = search(target_output)) return node;
    for (auto it = target_nodes.rbegin(); it != target_nodes.rend(); ++it)
        if (*it != target_output)
            if (auto node = search(*it)) return node;
    return std::nullopt;
}

template <class R, class T>
void apply_handles(match_context<R, T>& context, const match_options& options) {
    auto& reference = context.reference;
    auto& target = context.target;
    const std::size_t reference_count = reference.size();
    NUMGAP_ASSERT(reference_count + target.size() < (std::size_t{1} << 32));
    // (handle, element): elements are reference nodes, then target nodes.
    std::vector<std::pair<std::int64_t, std::uint32_t>> occurrences;
    // About one handle per node is the common case; the vector grows past it.
    occurrences.reserve(reference_count + target.size());
    // No prefetch in these two loops: measured, it bought nothing (see
    // detail/prefetch.hpp); the output keys below are another matter.
    for (std::size_t node = 0; node < reference_count; ++node) {
        if (!reference.matched[node])
            for (auto handle : numgap::debug_handles(reference.graph, node))
                occurrences.emplace_back(static_cast<std::int64_t>(handle), static_cast<std::uint32_t>(node));
    }
    for (std::size_t node = 0; node < target.size(); ++node) {
        if (!target.matched[node])
            for (auto handle : numgap::debug_handles(target.graph, node))
                occurrences.emplace_back(static_cast<std::int64_t>(handle),
                                         static_cast<std::uint32_t>(reference_count + node));
    }
    if (occurrences.empty()) return;
    union_find components(reference_count + target.size());
    auto [lowest, highest] = std::minmax_element(occurrences.begin(), occurrences.end());
    const auto low = lowest->first;
    // Unsigned span: no overflow even for handles at both ends of int64.
    const auto span = static_cast<std::uint64_t>(highest->first) - static_cast<std::uint64_t>(low);
    if (span < 4 * occurrences.size()) {
        // Dense handles (the usual case: compilers number them 0, 1, 2 ...):
        // index an array by handle instead of sorting. O(H + span).
        constexpr std::uint32_t unowned = 0xffffffffu;
        std::vector<std::uint32_t> owner(static_cast<std::size_t>(span) + 1, unowned);
        for (auto [handle, element] : occurrences) {
            auto& first = owner[static_cast<std::size_t>(static_cast<std::uint64_t>(handle) - static_cast<std::uint64_t>(low))];
            if (first == unowned) first = element;
            else components.unite(first, element);
        }
    } else {
        std::sort(occurrences.begin(), occurrences.end());
        for (std::size_t i = 1; i < occurrences.size(); ++i)
            if (occurrences[i].first == occurrences[i - 1].first)
                components.unite(occurrences[i].second, occurrences[i - 1].second);
    }

    // Number the components in order of their smallest element (so groups
    // are built walking the reference graph's storage in order) and bucket
    // their elements with a counting sort: linear, no hash map.
    constexpr std::uint32_t none = 0xffffffffu;
    std::vector<std::uint32_t> component_of_root(reference_count + target.size(), none);
    std::vector<char> carries_handle(reference_count + target.size(), 0);
    for (auto [handle, element] : occurrences) carries_handle[element] = 1;
    std::vector<std::uint32_t> elements;
    elements.reserve(occurrences.size());
    for (std::size_t element = 0; element < carries_handle.size(); ++element)
        if (carries_handle[element]) elements.push_back(static_cast<std::uint32_t>(element));
    std::vector<std::uint32_t> component_of_element(elements.size());
    // component_end[c]: one past component c's members once counted; the
    // members are then placed backwards (so each component keeps element
    // order) and component_end[c] ends as component c's start.
    std::vector<std::uint32_t> component_end;
    for (std::size_t i = 0; i < elements.size(); ++i) {
        auto& component = component_of_root[components.find(elements[i])];
        if (component == none) {
            component = static_cast<std::uint32_t>(component_end.size());
            component_end.push_back(0);
        }
        component_of_element[i] = component;
        ++component_end[component];
    }
    for (std::size_t c = 1; c < component_end.size(); ++c) component_end[c] += component_end[c - 1];
    std::vector<std::uint32_t> members(elements.size());
    for (std::size_t i = elements.size(); i-- > 0;) members[--component_end[component_of_element[i]]] = elements[i];
    const std::size_t component_count = component_end.size();
    // Members of component c: [component_start(c), component_start(c + 1)).
    auto component_start = [&](std::size_t c) -> std::size_t {
        return c < component_count ? component_end[c] : elements.size();
    };
    context.reserve_groups(component_count);
    constexpr std::size_t ahead = 16;
    for (std::size_t c = 0; c < component_count; ++c) {
        // add_group reads the output keys of the group's nodes: each a
        // separate heap block, loaded `ahead` components early.
        if (c + 2 * ahead < component_count)
            for (std::size_t m = component_start(c + 2 * ahead); m < component_start(c + 2 * ahead + 1); ++m) {
                const std::size_t element = members[m];
                if (element < reference_count)
                    prefetch_attribute_container<node_attribute::output_keys>(reference.graph, element);
                else
                    prefetch_attribute_container<node_attribute::output_keys>(target.graph, element - reference_count);
            }
        if (c + ahead < component_count)
            for (std::size_t m = component_start(c + ahead); m < component_start(c + ahead + 1); ++m) {
                const std::size_t element = members[m];
                if (element < reference_count)
                    prefetch_attribute_data<node_attribute::output_keys>(reference.graph, element);
                else
                    prefetch_attribute_data<node_attribute::output_keys>(target.graph, element - reference_count);
            }
        node_list reference_nodes, target_nodes;
        for (std::size_t m = component_start(c); m < component_start(c + 1); ++m) {
            const std::size_t element = members[m];
            if (element < reference_count) reference_nodes.push_back(element);
            else target_nodes.push_back(element - reference_count);
        }
        if (reference_nodes.empty() || target_nodes.empty()) continue; // one side only
        std::optional<std::size_t> reference_output;
        if (options.handle_reference_output == match_options::handle_output::executorch_compatible &&
            reference_nodes.size() > 1) {
            reference.sort_topologically(reference_nodes);
            target.sort_topologically(target_nodes);
            reference_output = executorch_reference_output(reference, reference_nodes, target, target_nodes,
                                                           target.default_output_node(target_nodes));
        }
        context.add_group(std::move(reference_nodes), std::move(target_nodes), "handle", 1.0,
                          reference_output);
    }
}

} // namespace detail

template <class R, class T>
match_result match_by_handle(const R& reference, const T& target, const match_options& options = {},
                             const match_result& prior = {}) {
    detail::check_graph_with_debug_handles<R>();
    detail::check_graph_with_debug_handles<T>();
    detail::match_context<R, T> context(reference, target, prior, "match_by_handle");
    detail::apply_handles(context, options);
    return std::move(context).finish();
}

} // namespace numgap
