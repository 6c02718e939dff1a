#pragma once
// The match group holding a reference node, for the match tests (nullptr if none).
#include <algorithm>
#include <cstddef>

#include <numgap/match/match_result.hpp>

namespace numgap_match_test {
inline const numgap::match_group* group_of(const numgap::match_result& result, std::size_t reference_node) {
    for (const auto& group : result.groups)
        if (std::count(group.reference_nodes.begin(), group.reference_nodes.end(), reference_node)) return &group;
    return nullptr;
}
} // namespace numgap_match_test
