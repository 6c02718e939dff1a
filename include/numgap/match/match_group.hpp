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
// ambiguous_with (structural matching only): the other target nodes the
// matcher could not tell apart from target_output_node by anything it knows
// (ops, shapes, producers and consumers with their input positions), in
// topological order. Non-empty means the pairing is a guess among equals: a
// report must not name such a group on its own as an error origin, and the
// comparison may try the alternatives against the tensors. Always empty for
// exact strategies.
//
// Cost: a group whose node sets hold at most two nodes each (node_list keeps
// those inline) allocates nothing but tensor keys longer than the standard
// library's small-string buffer (15 characters in libstdc++); built-in
// strategy names are short enough to live in that buffer too.
#include <cstddef>
#include <string>

#include <numgap/match/match_kind.hpp>
#include <numgap/match/node_list.hpp>

namespace numgap {

struct match_group {
    node_list reference_nodes; // topological order
    node_list target_nodes;    // topological order
    match_kind kind = match_kind::one_to_one;
    std::string strategy; // "handle", "name", "structure", "explicit", or a user strategy's name
    double confidence = 1.0;
    std::size_t reference_output_node = 0;
    std::size_t target_output_node = 0;
    std::string reference_tensor; // output tensor keys compared
    std::string target_tensor;
    node_list ambiguous_with;

    bool ambiguous() const noexcept { return !ambiguous_with.empty(); }
};

} // namespace numgap
