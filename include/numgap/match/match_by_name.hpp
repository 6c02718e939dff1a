#pragma once
// numgap::match_by_name(reference, target, options, prior): one-to-one groups
// (strategy "name", confidence 1) between still-unmatched nodes whose
// normalised names are equal. options.explicit_mapping is applied first
// (groups with strategy "explicit"), so it overrides names.
//
// Key = options.normalize_name(name) (identity when empty; see
// numgap::common_name_normalizer). A node whose key is empty is never matched
// by name (an unnamed node is not a key). Only still-unmatched nodes take
// part, so nodes an earlier strategy matched cannot cause conflicts.
// Duplicates: two candidate nodes of one graph with the same key throw a
// numgap::error naming both nodes and the key
// (options.on_duplicate_names == error, the default) or are all left
// unmatched for later strategies (== skip).
//
// Requires numgap::graph for both types. Complexity O(N + total name length)
// expected (keys are grouped by a radix pass over their hashes: faster than
// a hash table at a million nodes), plus one topological sort per graph. Throws numgap::error on
// duplicates (above), on explicit-mapping errors (see match_explicit), on a
// cycle or a dangling producer index, and on an invalid prior.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/graph/concepts.hpp>
#include <numgap/match/common_name_normalizer.hpp>
#include <numgap/match/detail/match_context.hpp>
#include <numgap/match/detail/prefetch.hpp>
#include <numgap/core/config.hpp>
#include <numgap/match/detail/name_table.hpp>
#include <numgap/match/match_explicit.hpp>
#include <numgap/match/match_options.hpp>
#include <numgap/match/match_result.hpp>

namespace numgap {
namespace detail {

template <class G>
void add_candidate_names(name_table& table, int side, const match_side<G>& side_state,
                         const match_options& options) {
    // The ready-made normaliser writes into the arena directly instead of
    // returning a std::string per node (a heap allocation for every name
    // longer than the small-string buffer).
    const auto* common = options.normalize_name ? options.normalize_name.target<common_name_normalizer>() : nullptr;
    // Names longer than the small-string buffer live in their own heap
    // blocks: loading them `ahead` nodes early overlaps the cache misses.
    constexpr std::size_t ahead = 16;
    const std::size_t count = side_state.size();
    for (std::size_t node = 0; node < count; ++node) {
        prefetch_attribute_ahead<node_attribute::name>(side_state.graph, node, count, ahead);
        if (side_state.matched[node]) continue;
        auto&& raw = numgap::node_name(side_state.graph, node);
        if (common) common->append_to(std::string_view(raw), table.scratch());
        else if (options.normalize_name) table.scratch() += options.normalize_name(std::string_view(raw));
        else table.scratch() += std::string_view(raw);
        table.add(side, static_cast<std::uint32_t>(node));
    }
}

template <class G>
[[noreturn]] void throw_duplicate_name(std::string_view key, const match_side<G>& side_state,
                                       const std::vector<std::uint32_t>& nodes, const char* which) {
    throw error(error_kind::schema,
                "match_by_name: the " + std::string(which) + " graph has two nodes named '" + std::string(key) +
                    "' after normalisation: " + describe_node(side_state.graph, nodes[0]) + " and " +
                    describe_node(side_state.graph, nodes[1]) +
                    "; names must be unique to be matched (or set on_duplicate_names to skip)",
                error_location::of_item(std::string(key)));
}

template <class R, class T>
void apply_names(match_context<R, T>& context, const match_options& options) {
    NUMGAP_ASSERT(context.reference.size() < 0x7fffffffu && context.target.size() < 0x7fffffffu);
    name_table table(context.reference.size() + context.target.size());
    add_candidate_names(table, 0, context.reference, options);
    add_candidate_names(table, 1, context.target, options);
    const bool throw_on_duplicates = options.on_duplicate_names == match_options::duplicate_names::error;
    // target_of[r]: the target namesake of reference node r. Keys arrive in
    // hash order; indexing by r puts the pairs in reference order without a
    // sort.
    constexpr std::uint32_t none = 0xffffffffu;
    std::vector<std::uint32_t> target_of(context.reference.size(), none);
    std::size_t pair_count = 0;
    // Duplicates are checked for every key before anything is added, so an
    // error leaves no half-built result behind (the context is discarded).
    table.for_each_key([&](std::string_view key, const std::vector<std::uint32_t>& references,
                           const std::vector<std::uint32_t>& targets) {
        if (throw_on_duplicates) {
            if (references.size() > 1) throw_duplicate_name(key, context.reference, references, "reference");
            if (targets.size() > 1) throw_duplicate_name(key, context.target, targets, "target");
        }
        if (references.size() == 1 && targets.size() == 1) {
            target_of[references[0]] = targets[0];
            ++pair_count;
        }
    });
    // Reference index order walks the reference graph's storage sequentially.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    pairs.reserve(pair_count);
    for (std::size_t r = 0; r < target_of.size(); ++r)
        if (target_of[r] != none) pairs.emplace_back(static_cast<std::uint32_t>(r), target_of[r]);
    context.add_one_to_one_groups(pairs, "name", 1.0);
}

} // namespace detail

template <class R, class T>
match_result match_by_name(const R& reference, const T& target, const match_options& options = {},
                           const match_result& prior = {}) {
    detail::check_graph<R>();
    detail::check_graph<T>();
    detail::match_context<R, T> context(reference, target, prior, "match_by_name");
    detail::apply_explicit(context, options);
    detail::apply_names(context, options);
    return std::move(context).finish();
}

} // namespace numgap
