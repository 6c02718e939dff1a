#pragma once
// structure_matcher's decisions among equals: the pick among candidates
// nothing tells apart (never by the target's node order), tie classes
// joined over later ties, ambiguity inherited from an ambiguous producer,
// and the groups emitted with their confidence divided by the number of
// equals. Complexity: O(candidates) per pick, tie classes capped at
// max_tie_class members. Throws: std::bad_alloc.
#include <numgap/match/detail/structure_matcher.hpp>
#include <algorithm>
#include <cstddef>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace numgap::detail {

// Takes the best of candidates_ for r. Candidates within a rounding
// error of the best are indistinguishable by everything the matcher
// knows: the pick is a guess (not by target order, see picked_before),
// the others become r's ambiguous_with and form a tie class.
template <class R, class T>
void structure_matcher<R, T>::commit_best_candidate(std::size_t r, double best_score) {
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
template <class R, class T>
void structure_matcher<R, T>::unite_tie_classes(std::size_t a, std::size_t b) {
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

// A pick found through an ambiguous producer's image is conditional on
// that guess: had the producer gone to one of its equals, r would have
// gone to a consumer of that equal. Those consumers (through unmatched
// or matched passthrough nodes, op-compatible with r, other than r's
// image) join r's ambiguous_with, so the value repair may re-pair r
// too and its confidence drops. A consumer shared by the equals (the
// add summing two symmetric branches) adds nothing: r's pick does not
// depend on the guess. Transitive along chains; at most max_tie_class
// per node.
template <class R, class T>
void structure_matcher<R, T>::inherit_ambiguity(std::size_t r, const std::vector<std::size_t>& producers) {
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

// One group per target node. A group is ambiguous when the pick of any
// of its reference nodes was (ambiguous_with: the union of the equals,
// less the group's own target), and its confidence is then divided by
// the number of equal candidates: a guess among k equals is right about
// once in k.
template <class R, class T>
void structure_matcher<R, T>::emit_groups() {
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

} // namespace numgap::detail
