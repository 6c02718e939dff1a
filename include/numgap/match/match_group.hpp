#pragma once
// numgap::match_group: one correspondence found by a matcher: a set of
// reference nodes whose computation the set of target nodes reproduces, and
// the pair of tensors to compare for it.
//
// Invariants (every numgap strategy upholds them): both node sets are
// non-empty and in topological order; kind == kind_of(sizes); the output
// nodes belong to their sets; by default each output node is the
// topologically last node of its set that has at least one output, and each
// tensor is that node's last output key (empty when no node of the set has an
// output). confidence is 1 for exact strategies (handle, name, explicit); the
// structural matcher reports its own score in (0, 1].
#include <cstddef>
#include <string>
#include <vector>

#include <numgap/match/match_kind.hpp>

namespace numgap {

struct match_group {
    std::vector<std::size_t> reference_nodes; // topological order
    std::vector<std::size_t> target_nodes;    // topological order
    match_kind kind = match_kind::one_to_one;
    std::string strategy; // "handle", "name", "structure", "explicit", or a user strategy's name
    double confidence = 1.0;
    std::size_t reference_output_node = 0;
    std::size_t target_output_node = 0;
    std::string reference_tensor; // output tensor keys compared
    std::string target_tensor;
};

} // namespace numgap
