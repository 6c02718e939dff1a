#pragma once
// numgap::match_explicit(reference, target, options, prior): the user's
// explicit mapping (options.explicit_mapping, reference node name -> target
// node name) as match groups with strategy "explicit" and confidence 1.
// Pairs that share a node form one group (connected components, so
// {a->x, b->x} is one fused group). It overrides every other strategy:
// match_by_name and match_auto apply it first.
//
// Requires numgap::graph for both types. Names are the raw node names (the
// normaliser is not applied: an explicit mapping says exactly what it means).
// Complexity O(N + M α) expected for N nodes and M pairs.
// Throws numgap::error when a mapped name does not exist, names several
// nodes, or names a node an earlier strategy (prior) already matched; and on
// invalid graphs or an invalid prior (see match_context).
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/graph/concepts.hpp>
#include <numgap/match/detail/match_context.hpp>
#include <numgap/match/detail/name_index.hpp>
#include <numgap/match/detail/union_find.hpp>
#include <numgap/match/match_options.hpp>
#include <numgap/match/match_result.hpp>
#include <numgap/match/node_list.hpp>

namespace numgap {
namespace detail {

template <class G>
name_index raw_name_index(const G& g, const std::vector<std::pair<std::string, std::string>>& mapping,
                          bool reference_side) {
    // Only the names the mapping mentions are indexed: no need to hash a
    // million names for a three-pair override.
    name_index wanted;
    for (const auto& [reference_name, target_name] : mapping)
        wanted.try_emplace(reference_side ? reference_name : target_name, name_entry{no_duplicate, no_duplicate});
    const std::size_t n = numgap::num_nodes(g);
    for (std::size_t node = 0; node < n; ++node) {
        auto&& name = numgap::node_name(g, node);
        auto it = wanted.find(std::string_view(name));
        if (it == wanted.end()) continue;
        if (it->second.node == no_duplicate) it->second.node = node;
        else if (it->second.duplicate == no_duplicate) it->second.duplicate = node;
    }
    return wanted;
}

template <class G>
std::size_t resolve_explicit(const G& g, const name_index& index, const std::string& name,
                             const char* which) {
    const auto& entry = index.find(name)->second;
    if (entry.node == no_duplicate)
        throw error(error_kind::schema,
                    "explicit mapping: the " + std::string(which) + " graph has no node named '" + name + "'",
                    error_location::of_item(name));
    if (entry.duplicate != no_duplicate)
        throw error(error_kind::schema,
                    "explicit mapping: the " + std::string(which) + " graph has several nodes named '" + name + "' (" +
                        describe_node(g, entry.node) + " and " + describe_node(g, entry.duplicate) +
                        "), so the mapping is ambiguous",
                    error_location::of_item(name));
    return entry.node;
}

template <class R, class T>
void apply_explicit(match_context<R, T>& context, const match_options& options) {
    const auto& mapping = options.explicit_mapping;
    if (mapping.empty()) return;
    const auto& reference = context.reference;
    const auto& target = context.target;
    const name_index reference_names = raw_name_index(reference.graph, mapping, true);
    const name_index target_names = raw_name_index(target.graph, mapping, false);
    // Elements: reference nodes first, then target nodes; only mapped ones are touched.
    union_find components(reference.size() + target.size());
    std::vector<std::size_t> touched;
    for (const auto& [reference_name, target_name] : mapping) {
        const auto r = resolve_explicit(reference.graph, reference_names, reference_name, "reference");
        const auto t = resolve_explicit(target.graph, target_names, target_name, "target");
        if (reference.matched[r])
            throw error(error_kind::usage,
                        "explicit mapping: reference node " + describe_node(reference.graph, r) +
                            " was already matched by an earlier strategy; apply the explicit mapping first",
                        error_location::of_item(reference_name));
        if (target.matched[t])
            throw error(error_kind::usage,
                        "explicit mapping: target node " + describe_node(target.graph, t) +
                            " was already matched by an earlier strategy; apply the explicit mapping first",
                        error_location::of_item(target_name));
        components.unite(r, reference.size() + t);
        touched.push_back(r);
        touched.push_back(reference.size() + t);
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    std::unordered_map<std::size_t, std::pair<node_list, node_list>> groups;
    std::vector<std::size_t> roots;
    for (auto element : touched) {
        const auto root = components.find(element);
        auto [it, inserted] = groups.try_emplace(root);
        if (inserted) roots.push_back(root);
        if (element < reference.size()) it->second.first.push_back(element);
        else it->second.second.push_back(element - reference.size());
    }
    for (auto root : roots) {
        auto& [reference_nodes, target_nodes] = groups[root];
        context.add_group(std::move(reference_nodes), std::move(target_nodes), "explicit", 1.0);
    }
}

} // namespace detail

template <class R, class T>
match_result match_explicit(const R& reference, const T& target, const match_options& options = {},
                            const match_result& prior = {}) {
    detail::check_graph<R>();
    detail::check_graph<T>();
    detail::match_context<R, T> context(reference, target, prior, "match_explicit");
    detail::apply_explicit(context, options);
    return std::move(context).finish();
}

} // namespace numgap
