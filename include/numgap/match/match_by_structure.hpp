#pragma once
// numgap::match_by_structure(reference, target, options, prior): aligns two
// graphs that share neither names nor handles, using topology, op
// compatibility, output shapes and already-matched neighbours as anchors.
// Groups get strategy "structure" and the pair's score as confidence.
//
// Algorithm (one pass over the reference in topological order, so every node
// sees its producers decided; near-linear):
//   - Anchors: nodes matched by `prior` map to their group's target output
//     node. Reference graph inputs (no producers) are paired with the
//     target's unmatched inputs by op, shape and consumer agreement (see
//     align_inputs).
//   - Every reference node r has a "flow": the target nodes where its value
//     lives. A matched node flows at its image. An unmatched one (deleted by
//     the backend, or replaced by an op nothing recognises) flows where its
//     producers flow and, unless it is a passthrough op, also at its
//     "stand-ins": the op-incompatible, non-passthrough nodes its search met
//     where its counterpart should have been (except those that fit one of
//     its consumers: they hold the consumer's value, not r's), and at its
//     "displaced" nodes: op-compatible non-passthrough nodes its search met
//     already taken by an earlier decision (which may have taken r's
//     counterpart by mistake). So its consumers still find their
//     counterparts, directly, behind the replacement, or behind a node a
//     wrong early decision took: the walk re-anchors downstream instead of
//     stalling (a folded batch_norm taking a later conv+bn node used to
//     leave the rest of a CNN unmatched). Each flow entry carries a credit:
//     1 at an image, the credit of the entry it was found from at a
//     stand-in or displaced node, half that at an absorbed node's stand-ins
//     (a guess found from a guess is weaker than a fusion).
//   - Candidates for r: the unmatched consumers of its producers' flow,
//     walking through up to options.max_passthrough_depth unmatched
//     passthrough target nodes (inserted quantize/dequantize, casts,
//     permutes, reshapes, identities), visiting at most 256 nodes.
//   - Base score in [0, 1] = 0.5 * producer consistency (share of r's producers
//     whose flow reaches the candidate's inputs through passthrough nodes,
//     weighted by the flow entry's credit; 3/4 credit through one unmatched
//     replaced op, for producers left unmatched only; divided by the larger
//     of the two arities; a candidate one of whose real inputs is an
//     unmatched op with inputs of its own that no producer explains is
//     refused: it lies further down, and taking it would shift every later
//     repeated block by one)
//     + 0.3 * op agreement (options.ops_equivalent gates: incompatible ops
//     are never paired; then 1 same family, 0.8 first part of a fused name,
//     0.6 compatible or unknown, 0.4 a later part of a fused name, accepted
//     only when the candidate's inputs are all explained: a relu folded
//     after a residual add must not take the next block's add+relu)
//     + 0.2 * shape agreement (1 equal, 0.9 equal up to a layout
//     permutation, 0.5 unknown or same element count; 0 and a 0.3 penalty
//     when the element counts differ).
//   - Score = 0.9 * base + 0.1 * consumer agreement: the share of
//     consumer-side signature rounds (detail/consumer_signatures.hpp: what
//     consumes the value, at which input position, and what consumes those,
//     three rounds, with and without op families, computed on each graph
//     separately) on which r and the candidate agree. Siblings that look
//     the same from their producers (Fire expand1x1/expand3x3, q/k/v) are
//     told apart by the input position their values enter a concat or a
//     matmul at, and by what follows.
//     The best candidate scoring at least options.min_structure_confidence
//     wins (for a passthrough r, between equal scores, the one reached
//     through fewer inserted passthrough nodes). Candidates still equal are
//     indistinguishable by everything the matcher knows: it picks the one
//     with the smallest name (never by the target's node order, which is
//     arbitrary), and sets the group's ambiguous_with to the others (joined
//     over later ties among the same nodes, so each of two symmetric
//     branches names the other; at most 64 per class). An ambiguous group's confidence is its score divided by
//     the number of equals (a guess among k equals is right about once in k).
//   - Fusion: r may instead join the target node `host` computing one of its
//     producers p (p matched in this pass, r p's only consumer,
//     options.can_fuse(op(r), op(host))). A fused name ("conv+bn+relu") must
//     list r as its next uncovered part (agreement 1, and it wins ties on
//     the base score); a plain host takes what the fusion rule allows
//     (agreement 0.6). The host must see all of r's other inputs (a
//     residual add is not absorbed into a convolution that does not). An
//     absorbed node also keeps its stand-ins in its flow, since a replaced
//     op would explain the same picture.
//   - Nodes still unmatched are reported unmatched; the walk never stops at
//     the first mismatch.
//   - Decomposition: a non-passthrough r that finds no candidate is paired
//     with a region of unmatched, recognised target ops that its producers'
//     images feed and that has a single exit (layer_norm -> mean, sub, pow,
//     ...; softmax -> amax, sub, exp, sum, div, a small DAG) as one
//     decomposed group whose output is the exit (see match_decomposition).
// Limits: a decomposed op whose pieces include an op canonical_op does not
// know, or that is followed by ops of the pieces' families, stays unmatched
// and what follows is found behind its stand-ins. Being a greedy pass, one
// wrong early decision still costs the few nodes around it (their
// counterparts are taken); the rules above keep it from shifting what
// follows (on the folded/unrecognised-op sweep, 160 graphs: no cascade
// left, 1 below 95% recall or 99% precision, at 98.3% / 98.6%).
// Ambiguity propagates: a node paired through an ambiguous producer's image
// is ambiguous with the compatible consumers of the producer's equals (see
// inherit_ambiguity).
//
// Requires numgap::graph for both types; uses op types, output shapes and
// node names (only to make a guess among equals independent of node order)
// when the types provide them (op-less graphs match on topology and shapes
// alone). Complexity O((N + E) · k) with k bounded by the candidate caps
// (256 visited per search, 32 siblings, 32 nodes per decomposition search),
// plus O(N + E) per signature round, plus the cost of the predicates.
// Throws numgap::error on a cycle, a dangling producer index or an invalid
// prior.
#include <algorithm>
#include <utility>
#include <vector>

#include <numgap/match/detail/match_context.hpp>
#include <numgap/match/detail/structure_candidates.hpp>
#include <numgap/match/detail/structure_decomposition.hpp>
#include <numgap/match/detail/structure_matcher.hpp>
#include <numgap/match/detail/structure_scoring.hpp>
#include <numgap/match/detail/structure_ties.hpp>
#include <numgap/match/match_options.hpp>
#include <numgap/match/match_result.hpp>

namespace numgap {
namespace detail {

// The walk: see "Algorithm" above. Each reference node sees its producers
// decided, so its flow is known when its consumers search from it.
template <class R, class T>
void structure_matcher<R, T>::run() {
    if (reference_.size() == 0 || target_.size() == 0) return;
    for (const auto& group : prior_groups()) {
        for (auto node : group.reference_nodes) image_[node] = group.target_output_node;
    }
    align_inputs();
    for (auto node : reference_.order) {
        if (reference_.matched[node]) {
            flow_[node] = {{image_[node], 1.0}};
            continue;
        }
        stand_ins_.clear();
        displaced_.clear();
        if (image_[node] == no_node && !producers_of(node).empty()) {
            match_one(node);
            if (image_[node] == no_node && !reference_attributes_.passthrough[node]) match_decomposition(node);
        }
        if (image_[node] != no_node) {
            flow_[node] = {{image_[node], 1.0}};
            // Absorbed into a producer's node: folding is a guess that a
            // replaced op would explain as well, so the value may also
            // live at the stand-ins; a weaker guess than the fusion
            // (else the next block's copy of a consumer, found behind a
            // stand-in, beats the consumer's own fused node).
            if (absorbed_[node])
                for (auto at : stand_ins_) add_flow(flow_[node], {at.node, at.credit * weak_flow_credit});
        } else {
            for (auto producer : producers_of(node))
                for (const auto& at : flow_[producer]) add_flow(flow_[node], at);
            // A real op left unmatched was probably replaced by one of the
            // incompatible nodes where its counterpart should be: its
            // value may live there too, so its consumers search there.
            if (!reference_attributes_.passthrough[node]) {
                for (auto at : stand_ins_) add_flow(flow_[node], at);
                for (auto at : displaced_) add_flow(flow_[node], at);
            }
        }
    }
    emit_groups();
}

template <class R, class T>
void apply_structure(match_context<R, T>& context, const match_options& options) {
    // Groups come only from reference nodes the earlier strategies left
    // unmatched (emit_groups); with none, the matcher's tables are not worth
    // building (7% of a name-matched 10^5-node comparison's CPU time).
    const std::vector<char>& matched = context.reference.matched;
    if (std::find(matched.begin(), matched.end(), char(0)) == matched.end()) return;
    structure_matcher<R, T> matcher(context, options);
    matcher.run();
}

} // namespace detail

template <class R, class T>
match_result match_by_structure(const R& reference, const T& target, const match_options& options = {},
                                const match_result& prior = {}) {
    detail::check_graph<R>();
    detail::check_graph<T>();
    detail::match_context<R, T> context(reference, target, prior, "match_by_structure");
    detail::apply_structure(context, options);
    return std::move(context).finish();
}

} // namespace numgap
