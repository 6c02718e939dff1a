#pragma once
// numgap::match_auto(reference, target, options, prior): the default
// matcher. Strategies run in this order, each on what the previous left
// unmatched, and every group records the strategy that produced it:
//   1. "explicit"  options.explicit_mapping (overrides everything);
//   2. "handle"    debug-handle overlap, when both graph types provide
//                  debug handles (nodes without handles simply take no part);
//   3. "name"      names through options.normalize_name;
//   4. "structure" topology, ops and shapes for the rest, anchored on all of
//                  the above.
// The strategies are also plain functions (match_explicit, match_by_handle,
// match_by_name, match_by_structure) that take a prior result, so a user
// chain such as
//   auto result = my_strategy(ref, target, options, match_by_handle(ref, target, options));
//   result = match_by_structure(ref, target, options, result);
// composes the same way.
//
// Requires numgap::graph for both types. Complexity: the sum of the
// strategies' (near-linear). Throws what the strategies throw (duplicate
// names with on_duplicate_names == error, explicit-mapping errors, cycles,
// dangling producer indices, an invalid prior).
#include <utility>

#include <numgap/graph/concepts.hpp>
#include <numgap/match/detail/match_context.hpp>
#include <numgap/match/match_by_handle.hpp>
#include <numgap/match/match_by_name.hpp>
#include <numgap/match/match_by_structure.hpp>
#include <numgap/match/match_explicit.hpp>
#include <numgap/match/match_options.hpp>
#include <numgap/match/match_result.hpp>

namespace numgap {

template <class R, class T>
match_result match_auto(const R& reference, const T& target, const match_options& options = {},
                        const match_result& prior = {}) {
    detail::check_graph<R>();
    detail::check_graph<T>();
    detail::match_context<R, T> context(reference, target, prior, "match_auto");
    detail::apply_explicit(context, options);
    if constexpr (has_debug_handles<R> && has_debug_handles<T>) detail::apply_handles(context, options);
    detail::apply_names(context, options);
    detail::apply_structure(context, options);
    return std::move(context).finish();
}

} // namespace numgap
