#pragma once
// numgap::match_result: what a matching strategy returns: the match groups,
// ordered by the topological position of their reference output node (so a
// report walks them in execution order and finds the first divergence), and
// the reference and target nodes no group covers, each in topological order.
//
// Strategies compose through it: every strategy takes the result of the
// previous ones, keeps its groups, and only considers the nodes still
// unmatched. A node belongs to at most one group.
#include <cstddef>
#include <vector>

#include <numgap/match/match_group.hpp>
#include <numgap/match/match_kind.hpp>

namespace numgap {

struct match_result {
    std::vector<match_group> groups;
    std::vector<std::size_t> unmatched_reference;
    std::vector<std::size_t> unmatched_target;
};

} // namespace numgap
