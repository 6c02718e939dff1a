#pragma once
// numgap::detail::structure_matcher<R, T>: the state of one
// match_by_structure pass and the declarations of its steps. The algorithm
// and its rules are stated in match/match_by_structure.hpp; the steps are
// defined, one concept per header, in
//   structure_scoring.hpp        how well a target node fits a reference node
//                                (op, shape, producer consistency);
//   structure_candidates.hpp     which target nodes are candidates, the
//                                choice among them, fusion into a producer;
//   structure_ties.hpp           a pick among equals, tie classes, ambiguity
//                                and how it propagates, the emitted groups;
//   structure_decomposition.hpp  one reference op lowered into a region.
// Include <numgap/match/match_by_structure.hpp>, which brings all of them.
// Complexity and throws: see match_by_structure.hpp.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/graph/concepts.hpp>
#include <numgap/graph/consumer_lists.hpp>
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

namespace numgap::detail {

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

    // The walk over the reference in topological order (match_by_structure.hpp).
    void run();

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

    std::size_t distinct_consumers(std::size_t node) const {
        auto consumers = reference_consumers_.consumers(node);
        std::size_t count = 0;
        for (std::size_t i = 0; i < consumers.size(); ++i)
            if (i == 0 || consumers[i] != consumers[i - 1]) ++count;
        return count;
    }

    // Scoring one (reference, target) pair: structure_scoring.hpp.
    double op_agreement(std::size_t r, std::size_t t) const;
    double absorption_agreement(std::size_t r, std::size_t host) const;
    double shape_score(std::size_t r, std::size_t t) const;
    void effective_producers(std::size_t t) const;
    double producer_consistency(const std::vector<std::size_t>& producers, std::size_t t,
                                std::size_t known_producer = no_node) const;
    bool fits_a_consumer(std::size_t r, std::size_t t) const;

    // Finding and ranking candidates: structure_candidates.hpp.
    void align_inputs();
    void match_one(std::size_t r);
    void drop_candidates_a_sibling_explains_better(std::size_t r, const std::vector<std::size_t>& producers);

    // Committing a pick among equals, ambiguity, the groups: structure_ties.hpp.
    // A tie class stops growing at max_tie_class members, so a node with a
    // huge fan-out of equal consumers stays linear.
    static constexpr std::size_t max_tie_class = 64;
    void commit_best_candidate(std::size_t r, double best_score);
    void unite_tie_classes(std::size_t a, std::size_t b);
    void inherit_ambiguity(std::size_t r, const std::vector<std::size_t>& producers);
    void emit_groups();

    // A reference op lowered into a region of target ops:
    // structure_decomposition.hpp.
    static constexpr std::size_t max_decomposition_nodes = 16;
    void match_decomposition(std::size_t r);
    bool collect_region(const std::vector<std::size_t>& producers, std::size_t exit, node_list& region) const;

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

} // namespace numgap::detail
