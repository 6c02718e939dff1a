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
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <ranges>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <numgap/graph/concepts.hpp>
#include <numgap/graph/consumer_lists.hpp>
#include <numgap/match/canonical_op.hpp>
#include <numgap/match/default_fusion_rule.hpp>
#include <numgap/match/default_op_equivalence.hpp>
#include <numgap/match/default_passthrough_op.hpp>
#include <numgap/match/detail/consumer_signatures.hpp>
#include <numgap/match/detail/match_context.hpp>
#include <numgap/match/detail/structure_node_attributes.hpp>
#include <numgap/match/detail/union_find.hpp>
#include <numgap/match/match_options.hpp>
#include <numgap/match/match_result.hpp>
#include <numgap/match/node_list.hpp>

namespace numgap {
namespace detail {

inline constexpr std::size_t no_node = static_cast<std::size_t>(-1);

template <class R, class T>
class structure_matcher {
public:
    structure_matcher(match_context<R, T>& context, const match_options& options)
        : context_(context), reference_(context.reference), target_(context.target),
          equivalent_(options.ops_equivalent ? options.ops_equivalent
                                             : std::function<bool(std::string_view, std::string_view)>(default_op_equivalence{})),
          can_fuse_(options.can_fuse ? options.can_fuse
                                     : std::function<bool(std::string_view, std::string_view)>(default_fusion_rule{})),
          min_confidence_(options.min_structure_confidence),
          max_depth_(std::max(0, options.max_passthrough_depth)),
          reference_attributes_(reference_.graph, reference_.size(), passthrough_of(options)),
          target_attributes_(target_.graph, target_.size(), passthrough_of(options)),
          reference_consumers_(reference_.graph), target_consumers_(target_.graph),
          reference_signatures_(signatures_of(reference_, reference_attributes_)),
          target_signatures_(signatures_of(target_, target_attributes_)),
          image_(reference_.size(), no_node), absorbed_(reference_.size(), 0), score_(reference_.size(), 0.0), flow_(reference_.size()),
          ambiguous_with_(reference_.size()), decomposed_node_(reference_.size(), 0), taken_(target_.matched), covered_(target_.size(), 0),
          stamp_(target_.size(), 0), tie_classes_(target_.size()), tie_members_(target_.size()) {}

    void run() {
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

private:
    static std::function<bool(std::string_view)> passthrough_of(const match_options& options) {
        return options.is_passthrough ? options.is_passthrough
                                      : std::function<bool(std::string_view)>(default_passthrough_op{});
    }

    // Where a reference node's value may live, and how much a candidate fed
    // from there is credited (1: the node's image; less: a guess).
    struct flow_entry {
        std::size_t node;
        double credit;
    };
    static constexpr double weak_flow_credit = 0.5;

    const std::vector<match_group>& prior_groups() const { return context_.groups(); }

    template <class G>
    static consumer_signatures signatures_of(const match_side<G>& side, const structure_node_attributes<G>& attributes) {
        const std::size_t n = side.size();
        std::vector<std::uint64_t> family_hash(n);
        std::vector<char> contracted(n);
        for (std::size_t node = 0; node < n; ++node) {
            family_hash[node] = hash_family(attributes.primary[node]);
            std::size_t input_edges = 0;
            for ([[maybe_unused]] auto raw : numgap::producers(side.graph, node)) ++input_edges;
            contracted[node] = attributes.passthrough[node] || input_edges == 1;
        }
        return consumer_signatures(side.graph, side.order, family_hash, contracted, attributes.commutative,
                                   &attributes.passthrough);
    }

    // Share of the consumer-side signature rounds on which r and t agree.
    double consumer_agreement(std::size_t r, std::size_t t) const {
        return static_cast<double>(reference_signatures_.agreement(r, target_signatures_, t)) /
               static_cast<double>(2 * consumer_signature_rounds);
    }

    // A pair's score: the producer/op/shape evidence, then where the values
    // go. Consumer agreement weighs 0.1: enough to outweigh a layout
    // permutation or a replaced producer, not a different shape.
    double combined_score(double base, std::size_t r, std::size_t t) const {
        return 0.9 * base + 0.1 * consumer_agreement(r, t);
    }

    // Among target nodes nothing tells apart, the pick must not depend on
    // the target's node order (arbitrary): the smallest name, then (equal
    // names) the smallest index.
    bool picked_before(std::size_t a, std::size_t b) const {
        const std::string_view name_a(numgap::node_name(target_.graph, a));
        const std::string_view name_b(numgap::node_name(target_.graph, b));
        return name_a != name_b ? name_a < name_b : a < b;
    }

    // Deduplicated producers, computed on demand (a handful per node).
    std::vector<std::size_t> producers_of(std::size_t node) const {
        std::vector<std::size_t> result;
        for (auto raw : numgap::producers(reference_.graph, node)) {
            const auto producer = static_cast<std::size_t>(raw);
            if (std::find(result.begin(), result.end(), producer) == result.end()) result.push_back(producer);
        }
        return result;
    }

    static void add_flow(std::vector<flow_entry>& flow, flow_entry at) {
        // A deleted node's value can live in a few places at most; capping
        // keeps long runs of unmatched nodes linear.
        auto same = std::find_if(flow.begin(), flow.end(), [&](const flow_entry& entry) { return entry.node == at.node; });
        if (same != flow.end()) same->credit = std::max(same->credit, at.credit);
        else if (flow.size() < 6) flow.push_back(at);
    }

    // The predicate decides compatibility; the families refine the score. A
    // fused target op ("conv+bn+relu") is most likely the counterpart of its
    // first part: the others are absorbed into it (see match_one).
    double op_agreement(std::size_t r, std::size_t t) const {
        if (!equivalent_(reference_attributes_.op[r], target_attributes_.op[t])) return -1.0;
        const auto& reference_family = reference_attributes_.family[r];
        if (!reference_family.empty() && reference_family == target_attributes_.family[t]) return 1.0;
        const auto& parts = target_attributes_.parts[t];
        if (reference_family.empty() || parts.empty()) return 0.6;
        if (parts.front() == reference_family) return 0.8;
        return std::find(parts.begin(), parts.end(), reference_family) != parts.end() ? 0.4 : 0.6;
    }

    // How well r fits into `host` as an absorbed op (negative: it does not).
    // A fused name ("conv+bn+relu") lists its parts in order, and the host
    // already stands for as many reference nodes as it has covered: r must
    // be the next part (1). A plain host accepts what the fusion rule allows
    // (0.6).
    double absorption_agreement(std::size_t r, std::size_t host) const {
        if (!can_fuse_(reference_attributes_.op[r], target_attributes_.op[host])) return -1.0;
        const auto& parts = target_attributes_.parts[host];
        if (parts.empty()) return 0.6;
        const std::size_t covered = covered_[host];
        return covered < parts.size() && parts[covered] == reference_attributes_.family[r] ? 1.0 : -1.0;
    }

    double shape_score(std::size_t r, std::size_t t) const {
        const double agreement = shape_agreement(reference_attributes_.shape[r], target_attributes_.shape[t]);
        const bool both_known = reference_attributes_.shape[r] && target_attributes_.shape[t];
        return 0.2 * agreement - (both_known && agreement == 0.0 ? 0.3 : 0.0);
    }

    // What feeds target node t. `ends` lists t's real inputs (producers seen
    // through unmatched passthrough nodes) with the input edge they come
    // through. `reach` lists every node met on the way back, with its input
    // edge and how many unmatched non-passthrough nodes lie between it and t
    // (at most one: a replaced op), so a producer whose counterpart was
    // replaced still lines up, at a discount.
    void effective_producers(std::size_t t) const {
        reach_.clear();
        ends_.clear();
        struct step {
            std::size_t node;
            std::size_t edge;
            int depth;
            int skips;
            bool counts_as_end;
        };
        std::vector<step> stack;
        std::size_t edge = 0;
        for (auto raw : numgap::producers(target_.graph, t)) stack.push_back({static_cast<std::size_t>(raw), edge++, 0, 0, true});
        while (!stack.empty() && reach_.size() < 64) {
            const step current = stack.back();
            stack.pop_back();
            auto seen = std::find_if(reach_.begin(), reach_.end(), [&](const reached& entry) {
                return entry.node == current.node && entry.edge == current.edge;
            });
            if (seen != reach_.end()) {
                seen->skips = std::min(seen->skips, current.skips);
                continue;
            }
            reach_.push_back({current.node, current.edge, current.skips});
            const bool unmatched = !taken_[current.node];
            const bool passthrough = unmatched && target_attributes_.passthrough[current.node];
            if (current.counts_as_end && !(passthrough && current.depth < max_depth_) &&
                std::find_if(ends_.begin(), ends_.end(), [&](const auto& end) { return end.first == current.node; }) ==
                    ends_.end())
                ends_.emplace_back(current.node, current.edge);
            if (!unmatched || current.depth >= max_depth_) continue;
            if (passthrough) {
                for (auto raw : numgap::producers(target_.graph, current.node))
                    stack.push_back({static_cast<std::size_t>(raw), current.edge, current.depth + 1, current.skips,
                                     current.counts_as_end});
            } else if (current.skips == 0) {
                for (auto raw : numgap::producers(target_.graph, current.node))
                    stack.push_back({static_cast<std::size_t>(raw), current.edge, current.depth + 1, 1, false});
            }
        }
    }

    // Share of r's producers whose value reaches t's inputs (a quarter less
    // when only through a replaced op), over the larger of the two arities.
    // Negative when t "jumps over" computation: one of its real inputs is an
    // unmatched op that itself has inputs and that none of r's producers
    // explains. Such an input is computation between r's producers and t
    // that r does not account for: t lies further down (the next block's
    // copy of r), and taking it would shift every later block by one.
    // Without known_producer only: a fusion host stands for its own output.
    double producer_consistency(const std::vector<std::size_t>& producers, std::size_t t,
                                std::size_t known_producer = no_node) const {
        effective_producers(t);
        double consistent = 0.0;
        explained_edges_.clear();
        for (auto producer : producers) {
            if (producer == known_producer) {
                consistent += 1.0;
                continue;
            }
            double credit = 0.0;
            // A replaced op between a matched producer's image and t would
            // be a reference node that is not there: skips only serve
            // producers left unmatched (their value may live one op later)
            // and passthrough ones (paired with an inserted no-op, while the
            // real one was replaced).
            const bool may_skip = image_[producer] == no_node || reference_attributes_.passthrough[producer];
            for (const auto& at : flow_[producer])
                for (const auto& entry : reach_)
                    if (entry.node == at.node && (entry.skips == 0 || may_skip)) {
                        credit = std::max(credit, at.credit * (entry.skips == 0 ? 1.0 : 0.75));
                        explained_edges_.push_back(entry.edge);
                    }
            consistent += credit;
        }
        if (known_producer == no_node) {
            for (const auto& [end, edge] : ends_) {
                if (taken_[end] || target_attributes_.passthrough[end] ||
                    std::ranges::empty(numgap::producers(target_.graph, end)))
                    continue;
                if (std::find(explained_edges_.begin(), explained_edges_.end(), edge) == explained_edges_.end())
                    return -1.0;
            }
        }
        const std::size_t denominator =
            known_producer == no_node ? std::max(producers.size(), ends_.size()) : producers.size();
        return denominator == 0 ? 0.0 : consistent / static_cast<double>(denominator);
    }

    // Whether target node t looks like the counterpart of one of r's
    // consumers (then t is not where r's own value went: not a stand-in).
    bool fits_a_consumer(std::size_t r, std::size_t t) const {
        for (auto consumer : reference_consumers_.consumers(r))
            if (equivalent_(reference_attributes_.op[consumer], target_attributes_.op[t])) return true;
        return false;
    }

    void match_one(std::size_t r) {
        const std::vector<std::size_t> producers = producers_of(r);
        ++current_stamp_;
        struct step {
            std::size_t node;
            int depth;
            double credit;
        };
        std::vector<step> frontier;
        stand_ins_.clear();
        candidates_.clear();
        for (auto producer : producers)
            for (const auto& at : flow_[producer]) frontier.push_back({at.node, 0, at.credit});
        double best_score = -1.0;
        std::size_t visited = 0;
        while (!frontier.empty() && visited < 256) {
            const step current = frontier.back();
            frontier.pop_back();
            for (auto consumer : target_consumers_.consumers(current.node)) {
                if (stamp_[consumer] == current_stamp_) continue;
                if (taken_[consumer]) {
                    // Compatible but already taken: if r ends up unmatched,
                    // an earlier decision may have taken its counterpart, so
                    // its consumers also search behind this node (re-anchoring
                    // instead of stalling).
                    stamp_[consumer] = current_stamp_;
                    if (!target_attributes_.passthrough[consumer] && op_agreement(r, consumer) >= 0.0)
                        displaced_.push_back({consumer, current.credit});
                    continue;
                }
                stamp_[consumer] = current_stamp_;
                ++visited;
                double op = op_agreement(r, consumer);
                if (op < 0.0 && !target_attributes_.passthrough[consumer] && !fits_a_consumer(r, consumer))
                    stand_ins_.push_back({consumer, current.credit});
                if (op >= 0.0) {
                    const double consistency = producer_consistency(producers, consumer);
                    if (consistency < 0.0) op = -1.0;
                    // A later part of a fused name ("add+relu" for a relu)
                    // stands for r only when it explains all its inputs: a
                    // relu folded after a residual add otherwise grabs the
                    // next block's add+relu and shifts every later block.
                    if (op >= 0.4 - 1e-12 && op <= 0.4 + 1e-12 && consistency < 1.0 - 1e-12) op = -1.0;
                    if (op >= 0.0) {
                        const double base = 0.5 * consistency + 0.3 * op + shape_score(r, consumer);
                        const double score = combined_score(base, r, consumer);
                        candidates_.push_back({consumer, score, base, current.depth});
                        best_score = std::max(best_score, score);
                    }
                }
                if (current.depth >= max_depth_) continue;
                if (target_attributes_.passthrough[consumer])
                    frontier.push_back({consumer, current.depth + 1, current.credit});
            }
        }
        drop_candidates_a_sibling_explains_better(r, producers);
        best_score = -1.0;
        for (const auto& entry : candidates_) best_score = std::max(best_score, entry.score);
        // Fusion into the node computing a producer matched in this pass.
        std::size_t host = no_node;
        double host_score = -1.0;
        double host_base = -1.0;
        for (auto producer : producers) {
            const std::size_t candidate = image_[producer];
            if (candidate == no_node || reference_.matched[producer]) continue;
            if (distinct_consumers(producer) != 1) continue;
            const double op = absorption_agreement(r, candidate);
            if (op < 0.0) continue;
            // The host stands for its own output: it must account for r's
            // other inputs (a bias, a residual) like a regular candidate.
            // An absorbed residual add whose other input the host does not
            // see is a guess that shifts what follows: require all inputs.
            const double consistency = producer_consistency(producers, candidate, producer);
            if (consistency < 1.0 - 1e-12) continue;
            const double base = 0.5 * consistency + 0.3 * op + shape_score(r, candidate);
            const double score = combined_score(base, r, candidate);
            if (score > host_score) {
                host = candidate;
                host_score = score;
                host_base = base;
            }
        }
        // A fused name that lists r as its next part wins a tie on the
        // producer/op/shape evidence: the chain is spelled out, while an
        // equal regular candidate is only similar. Consumer agreement does
        // not count against it here: a replaced op downstream changes the
        // host's consumers, while the next block's copy of r, reached through
        // a stand-in, agrees with them (a repeated block looks alike).
        const bool explicit_part = host != no_node && absorption_agreement(r, host) == 1.0;
        double best_base = -1.0;
        for (const auto& entry : candidates_) best_base = std::max(best_base, entry.base);
        if (host != no_node && host_score >= min_confidence_ &&
            (host_score > best_score || (explicit_part && host_base > best_base - 1e-12))) {
            image_[r] = host;
            score_[r] = host_score;
            absorbed_[r] = 1;
            ++covered_[host];
            return;
        }
        if (candidates_.empty() || best_score < min_confidence_) return;
        commit_best_candidate(r, best_score);
        inherit_ambiguity(r, producers);
    }

    // A pick found through an ambiguous producer's image is conditional on
    // that guess: had the producer gone to one of its equals, r would have
    // gone to a consumer of that equal. Those consumers (through unmatched
    // or matched passthrough nodes, op-compatible with r, other than r's
    // image) join r's ambiguous_with, so the value repair may re-pair r
    // too and its confidence drops. A consumer shared by the equals (the
    // add summing two symmetric branches) adds nothing: r's pick does not
    // depend on the guess. Transitive along chains; at most max_tie_class
    // per node.
    void inherit_ambiguity(std::size_t r, const std::vector<std::size_t>& producers) {
        for (auto producer : producers) {
            for (auto alternative : ambiguous_with_[producer]) {
                std::vector<std::pair<std::size_t, int>> frontier{{alternative, 0}};
                while (!frontier.empty()) {
                    const auto [node, depth] = frontier.back();
                    frontier.pop_back();
                    for (auto consumer : target_consumers_.consumers(node)) {
                        if (ambiguous_with_[r].size() >= max_tie_class) return;
                        if (target_attributes_.passthrough[consumer]) {
                            if (depth < max_depth_) frontier.push_back({consumer, depth + 1});
                            continue;
                        }
                        if (consumer == image_[r] || op_agreement(r, consumer) < 0.0) continue;
                        auto& alternatives = ambiguous_with_[r];
                        if (std::find(alternatives.begin(), alternatives.end(), consumer) == alternatives.end())
                            alternatives.push_back(consumer);
                    }
                }
            }
        }
    }

    // A candidate whose consumers agree better with a sibling of r still to
    // be decided (a later consumer of one of r's producers, op-compatible
    // with it) is that sibling's counterpart, not r's: Inception's
    // 3x3-reduce convolution, folded away by the backend, must not take
    // the 5x5-reduce one, which feeds the concat where its own sibling's
    // branch does. Siblings compete on evidence, not on who comes first.
    // At most 32 siblings are consulted (a node with a huge fan-out).
    void drop_candidates_a_sibling_explains_better(std::size_t r, const std::vector<std::size_t>& producers) {
        if (candidates_.empty()) return;
        siblings_.clear();
        for (auto producer : producers) {
            const auto consumers = reference_consumers_.consumers(producer);
            // Examine a bounded share of a huge fan-out (linear overall).
            for (auto sibling : consumers.first(std::min<std::size_t>(consumers.size(), 256))) {
                if (siblings_.size() >= 32) break;
                if (reference_.position[sibling] <= reference_.position[r] || reference_.matched[sibling]) continue;
                if (std::find(siblings_.begin(), siblings_.end(), sibling) == siblings_.end()) siblings_.push_back(sibling);
            }
        }
        if (siblings_.empty()) return;
        std::erase_if(candidates_, [&](const candidate_score& entry) {
            const std::size_t own = reference_signatures_.agreement(r, target_signatures_, entry.node);
            for (auto sibling : siblings_)
                if (reference_signatures_.agreement(sibling, target_signatures_, entry.node) > own &&
                    op_agreement(sibling, entry.node) >= 0.0)
                    return true;
            return false;
        });
    }

    // Takes the best of candidates_ for r. Candidates within a rounding
    // error of the best are indistinguishable by everything the matcher
    // knows: the pick is a guess (not by target order, see picked_before),
    // the others become r's ambiguous_with and form a tie class.
    void commit_best_candidate(std::size_t r, double best_score) {
        // Equal scores for a passthrough r: the nearest wins (an inserted
        // transpose right after the real one is reached one passthrough
        // later). For a real op, distance is no evidence: an inserted cast
        // may sit before its counterpart and not before a lookalike.
        int nearest = max_depth_;
        if (reference_attributes_.passthrough[r])
            for (const auto& entry : candidates_)
                if (entry.score >= best_score - 1e-9) nearest = std::min(nearest, entry.depth);
        // Equals on the loose evidence may still differ in the sequence of
        // ops along their single-input chains (strict signature): when that
        // tells them apart, the closest chains win; when all agree equally
        // (a fused or folded target changes every chain alike), it is no
        // evidence.
        std::size_t most_strict = 0;
        std::size_t least_strict = consumer_signature_rounds;
        for (const auto& entry : candidates_) {
            if (entry.score < best_score - 1e-9 || entry.depth > nearest) continue;
            const std::size_t strict = reference_signatures_.strict_agreement(r, target_signatures_, entry.node);
            most_strict = std::max(most_strict, strict);
            least_strict = std::min(least_strict, strict);
        }
        std::size_t best = no_node;
        node_list equals;
        for (const auto& entry : candidates_) {
            if (entry.score < best_score - 1e-9 || entry.depth > nearest) continue;
            if (most_strict != least_strict &&
                reference_signatures_.strict_agreement(r, target_signatures_, entry.node) < most_strict)
                continue;
            equals.push_back(entry.node);
            if (best == no_node || picked_before(entry.node, best)) best = entry.node;
        }
        image_[r] = best;
        score_[r] = best_score;
        taken_[best] = 1;
        ++covered_[best];
        for (std::size_t i = 1; i < equals.size(); ++i) unite_tie_classes(equals[0], equals[i]);
        const auto& members = tie_members_[tie_classes_.find(best)];
        for (auto node : members)
            if (node != best) ambiguous_with_[r].push_back(node);
    }

    // Tie classes grow by union (q, k, v tie three ways, then k and v two
    // ways: all three stay one class), smaller into larger, and stop growing
    // at max_tie_class members so that a node with a huge fan-out of equal
    // consumers stays linear.
    static constexpr std::size_t max_tie_class = 64;
    void unite_tie_classes(std::size_t a, std::size_t b) {
        a = tie_classes_.find(a);
        b = tie_classes_.find(b);
        if (a == b) return;
        auto& members_a = tie_members_[a];
        auto& members_b = tie_members_[b];
        if (members_a.empty()) members_a.push_back(a);
        if (members_b.empty()) members_b.push_back(b);
        if (members_a.size() + members_b.size() > max_tie_class) return;
        tie_classes_.unite(a, b);
        const std::size_t root = tie_classes_.find(a);
        auto& into = root == a ? members_a : members_b;
        auto& from = root == a ? members_b : members_a;
        into.insert(into.end(), from.begin(), from.end());
        from.clear();
        from.shrink_to_fit();
    }

    std::size_t distinct_consumers(std::size_t node) const {
        auto consumers = reference_consumers_.consumers(node);
        std::size_t count = 0;
        for (std::size_t i = 0; i < consumers.size(); ++i)
            if (i == 0 || consumers[i] != consumers[i - 1]) ++count;
        return count;
    }

    // Graph inputs (no producers) are paired like any node, their producer
    // consistency taken as full: by op, shape and where their values go
    // (token ids and an attention mask of one shape are told apart by what
    // consumes them), the same ties rule, never by the target's order. At
    // most 256 unmatched target inputs are scored per reference input.
    void align_inputs() {
        std::vector<std::size_t> target_inputs;
        for (auto node : target_.order)
            if (!taken_[node] && std::ranges::empty(numgap::producers(target_.graph, node))) target_inputs.push_back(node);
        for (auto r : reference_.order) {
            if (reference_.matched[r] || !std::ranges::empty(numgap::producers(reference_.graph, r))) continue;
            candidates_.clear();
            double best_score = -1.0;
            for (std::size_t i = 0; i < target_inputs.size() && i < 256; ++i) {
                const auto t = target_inputs[i];
                const double op = op_agreement(r, t);
                if (op < 0.0) continue;
                const double base = 0.5 + 0.3 * op + shape_score(r, t);
                const double score = combined_score(base, r, t);
                candidates_.push_back({t, score, base, 0});
                best_score = std::max(best_score, score);
            }
            if (candidates_.empty() || best_score < min_confidence_) continue;
            commit_best_candidate(r, best_score);
            // The taken input leaves the list (swap with the last: which
            // inputs fall in the 256 scored only matters past 256 inputs).
            const auto scored = target_inputs.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(target_inputs.size(), 256));
            auto taken = std::find(target_inputs.begin(), scored, image_[r]);
            *taken = target_inputs.back();
            target_inputs.pop_back();
        }
    }

    // Decompositions: a reference op the backend lowered into several ops
    // (layer_norm -> mean, sub, pow, mean, add, rsqrt, mul, mul, add; gelu ->
    // mul, erf, add, mul; softmax -> amax, sub, exp, sum, div) finds no
    // candidate. Its counterpart is then a region of unmatched target nodes
    // fed by r's producers' images (every one of them), with one exit X: the
    // value of every other node of the region stays inside it. Among the
    // unmatched non-passthrough nodes reachable from the images (at most 32
    // visited), each is tried as X; the largest valid region wins. Valid:
    // at most max_decomposition_nodes nodes, at least two non-passthrough
    // ops, all of them ops canonical_op knows (an unknown op is what a
    // backend's replacement of r looks like, not a piece of a lowering),
    // none of them op-compatible with r (it would have been a
    // candidate) or with what follows r, two recognised ops down,
    // through unrecognised ones (those ops are what follows r, not pieces
    // of it: a replaced op followed by its consumer's counterpart is no
    // decomposition), no fan-out into two parallel convs or matmuls
    // (a block's branches), and X's shape not contradicting r's.
    // r is then paired with the region as one decomposed group whose output
    // is X, and its consumers search from X. Score: like a pair with X, op
    // agreement 0.6 (the ops are unknown to each other).
    static constexpr std::size_t max_decomposition_nodes = 16;

    void match_decomposition(std::size_t r) {
        const std::vector<std::size_t> producers = producers_of(r);
        // What follows r, two recognised ops down; unrecognised and
        // passthrough ops are walked through without counting (a vocabulary
        // nothing knows must not hide the concat after a Fire module's
        // branches). At most 32 ops, 128 visits.
        std::vector<std::size_t> downstream;
        {
            std::vector<std::pair<std::size_t, int>> frontier{{r, 0}};
            for (std::size_t visits = 0; !frontier.empty() && visits < 128 && downstream.size() < 32; ++visits) {
                const auto [node, level] = frontier.back();
                frontier.pop_back();
                for (auto consumer : reference_consumers_.consumers(node)) {
                    if (downstream.size() >= 32) break;
                    if (std::find(downstream.begin(), downstream.end(), consumer) != downstream.end()) continue;
                    downstream.push_back(consumer);
                    const bool counts = reference_attributes_.recognised[consumer] && !reference_attributes_.passthrough[consumer];
                    const int next_level = level + (counts ? 1 : 0);
                    if (next_level < 2) frontier.push_back({consumer, next_level});
                }
            }
        }
        // Unmatched nodes reachable from the images, breadth first.
        std::vector<std::size_t> reachable;
        auto reach = [&](std::size_t from) {
            for (auto consumer : target_consumers_.consumers(from)) {
                if (reachable.size() >= 32) return;
                if (!taken_[consumer] && std::find(reachable.begin(), reachable.end(), consumer) == reachable.end())
                    reachable.push_back(consumer);
            }
        };
        for (auto producer : producers)
            for (const auto& at : flow_[producer])
                if (at.credit >= 1.0) reach(at.node);
        for (std::size_t i = 0; i < reachable.size() && reachable.size() < 32; ++i) reach(reachable[i]);
        node_list best_region;
        std::size_t best_exit = no_node;
        for (auto exit : reachable) {
            if (target_attributes_.passthrough[exit]) continue;
            const auto& shape = reference_attributes_.shape[r];
            if (shape && target_attributes_.shape[exit] && shape_agreement(shape, target_attributes_.shape[exit]) == 0.0)
                continue;
            node_list region;
            if (!collect_region(producers, exit, region)) continue;
            const bool piece_of_r = std::none_of(region.begin(), region.end(), [&](std::size_t node) {
                if (target_attributes_.passthrough[node]) return false;
                if (!target_attributes_.recognised[node] || op_agreement(r, node) >= 0.0) return true;
                return std::any_of(downstream.begin(), downstream.end(), [&](std::size_t follower) {
                    return equivalent_(reference_attributes_.op[follower], target_attributes_.op[node]);
                });
            });
            if (piece_of_r && region.size() > best_region.size()) {
                best_region = std::move(region);
                best_exit = exit;
            }
        }
        if (best_exit == no_node) return;
        const double score = combined_score(0.5 + 0.3 * 0.6 + shape_score(r, best_exit), r, best_exit);
        if (score < min_confidence_) return;
        for (auto node : best_region) taken_[node] = 1;
        image_[r] = best_exit;
        score_[r] = score;
        decomposed_node_[r] = 1;
        decomposed_.push_back({r, std::move(best_region), score});
    }

    // The region behind `exit`: unmatched target nodes reached backwards
    // until r's producers' images (credit-1 flow entries) or graph inputs.
    // Fails on a matched node that is no such image, on a node whose value
    // leaves the region other than through the exit, on more than
    // max_decomposition_nodes nodes, with fewer than two real ops, or when
    // one of r's producers' images does not feed it.
    bool collect_region(const std::vector<std::size_t>& producers, std::size_t exit, node_list& region) const {
        auto is_entry = [&](std::size_t node, std::size_t& producer_index) {
            for (std::size_t i = 0; i < producers.size(); ++i)
                for (const auto& at : flow_[producers[i]])
                    if (at.node == node && at.credit >= 1.0) {
                        producer_index = i;
                        return true;
                    }
            return false;
        };
        std::vector<char> feeds(producers.size(), 0);
        std::vector<std::size_t> stack{exit};
        std::size_t real_ops = 0;
        for (std::size_t steps = 0; !stack.empty(); ++steps) {
            if (steps > 16 * max_decomposition_nodes) return false; // a huge fan-in is no lowering of one op
            const std::size_t node = stack.back();
            stack.pop_back();
            if (std::find(region.begin(), region.end(), node) != region.end()) continue;
            std::size_t producer_index = 0;
            if (node != exit && is_entry(node, producer_index)) {
                feeds[producer_index] = 1;
                continue;
            }
            if (taken_[node]) return false;
            if (std::ranges::empty(numgap::producers(target_.graph, node))) continue; // a weight or constant
            region.push_back(node);
            if (region.size() > max_decomposition_nodes) return false;
            if (!target_attributes_.passthrough[node]) ++real_ops;
            for (auto raw : numgap::producers(target_.graph, node)) stack.push_back(static_cast<std::size_t>(raw));
        }
        if (real_ops < 2) return false;
        for (auto node : region) {
            if (node == exit) continue;
            const auto consumers = target_consumers_.consumers(node);
            if (consumers.size() > max_decomposition_nodes) return false;
            for (auto consumer : consumers)
                if (std::find(region.begin(), region.end(), consumer) == region.end()) return false;
        }
        // A fan-out (from inside the region or from an entry) into parallel
        // ops with weights of one family (a Fire module's expand convs,
        // q/k/v projections) is a block of the model, not the lowering of one
        // op: lowerings fan out into cheap element-wise pieces (exp -> sum,
        // div; x -> mul, mul for gelu).
        for (std::size_t i = 0; i < region.size(); ++i) {
            const auto& family = target_attributes_.primary[region[i]];
            if (family != "conv" && family != "matmul") continue;
            for (std::size_t j = i + 1; j < region.size(); ++j) {
                if (target_attributes_.primary[region[j]] != family) continue;
                for (auto a : numgap::producers(target_.graph, region[i]))
                    for (auto b : numgap::producers(target_.graph, region[j]))
                        if (a == b && !std::ranges::empty(numgap::producers(target_.graph, static_cast<std::size_t>(a))))
                            return false;
            }
        }
        return std::find(feeds.begin(), feeds.end(), 0) == feeds.end();
    }

    // One group per target node. A group is ambiguous when the pick of any
    // of its reference nodes was (ambiguous_with: the union of the equals,
    // less the group's own target), and its confidence is then divided by
    // the number of equal candidates: a guess among k equals is right about
    // once in k.
    void emit_groups() {
        std::unordered_map<std::size_t, std::size_t> group_of_target;
        struct pending_group {
            node_list reference_nodes;
            std::size_t target;
            double confidence;
            node_list ambiguous_with;
        };
        std::vector<pending_group> groups;
        for (auto r : reference_.order) {
            if (reference_.matched[r] || image_[r] == no_node || decomposed_node_[r]) continue;
            auto [it, inserted] = group_of_target.try_emplace(image_[r], groups.size());
            if (inserted) groups.push_back({{}, image_[r], 1.0, {}});
            auto& group = groups[it->second];
            group.reference_nodes.push_back(r);
            group.confidence = std::min(group.confidence, std::min(1.0, score_[r]));
            for (auto other : ambiguous_with_[r])
                if (other != group.target && std::find(group.ambiguous_with.begin(), group.ambiguous_with.end(), other) ==
                                                 group.ambiguous_with.end())
                    group.ambiguous_with.push_back(other);
        }
        for (auto& decomposition : decomposed_)
            context_.add_group({decomposition.reference}, std::move(decomposition.targets), "structure",
                               std::min(1.0, decomposition.score));
        for (auto& group : groups) {
            const double equals = static_cast<double>(group.ambiguous_with.size() + 1);
            context_.add_group(std::move(group.reference_nodes), {group.target}, "structure", group.confidence / equals,
                               std::nullopt, std::move(group.ambiguous_with));
        }
    }

    match_context<R, T>& context_;
    const match_side<R>& reference_;
    const match_side<T>& target_;
    std::function<bool(std::string_view, std::string_view)> equivalent_;
    std::function<bool(std::string_view, std::string_view)> can_fuse_;
    double min_confidence_;
    int max_depth_;
    structure_node_attributes<R> reference_attributes_;
    structure_node_attributes<T> target_attributes_;
    consumer_lists reference_consumers_;
    consumer_lists target_consumers_;
    consumer_signatures reference_signatures_;
    consumer_signatures target_signatures_;
    std::vector<std::size_t> image_;
    std::vector<char> absorbed_;
    std::vector<double> score_;
    std::vector<std::vector<flow_entry>> flow_;
    std::vector<node_list> ambiguous_with_; // per reference node: the equally good target nodes not picked
    struct decomposed_group {
        std::size_t reference;
        node_list targets;
        double score;
    };
    std::vector<decomposed_group> decomposed_;
    std::vector<char> decomposed_node_;
    std::vector<char> taken_;
    std::vector<std::uint32_t> covered_; // reference nodes mapped to each target node so far
    std::vector<std::uint32_t> stamp_;
    std::uint32_t current_stamp_ = 0;
    // Target nodes that tied as candidates of one reference node share a
    // class: whichever of them a later node takes is a guess among the same
    // equals (two symmetric branches: both pairs are ambiguous).
    union_find tie_classes_;
    std::vector<std::vector<std::size_t>> tie_members_; // per class root with a tie: its members; else empty
    struct candidate_score {
        std::size_t node;
        double score;
        double base; // before consumer agreement
        int depth; // unmatched passthrough target nodes walked through to reach it
    };
    std::vector<candidate_score> candidates_;
    std::vector<std::size_t> siblings_;
    // Met by the last search, with the credit of the flow entry it was
    // reached from (a guess found from a guess is no stronger than it):
    std::vector<flow_entry> stand_ins_; // incompatible nodes
    std::vector<flow_entry> displaced_; // compatible nodes already taken
    struct reached {
        std::size_t node;
        std::size_t edge; // which of t's input edges leads to it
        int skips;        // replaced ops in between
    };
    mutable std::vector<reached> reach_;
    mutable std::vector<std::pair<std::size_t, std::size_t>> ends_; // (real input, edge)
    mutable std::vector<std::size_t> explained_edges_;
};

template <class R, class T>
void apply_structure(match_context<R, T>& context, const match_options& options) {
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
