#pragma once
// structure_matcher's candidate search: graph inputs paired among the
// target's unmatched inputs (align_inputs), and for every other reference
// node the unmatched consumers of its producers' flow, walked through
// inserted passthrough nodes (match_one: at most 256 visited), siblings
// competing for them on consumer evidence, and fusion into the node that
// computes a producer. The pick among the best goes to structure_ties.hpp.
// Complexity: O(visited · producers) per node. Throws nothing but what the
// predicates throw.
#include <numgap/match/detail/structure_matcher.hpp>
#include <algorithm>
#include <cstddef>
#include <ranges>
#include <string_view>
#include <vector>

namespace numgap::detail {

// Graph inputs (no producers) are paired like any node, their producer
// consistency taken as full: by op, shape and where their values go
// (token ids and an attention mask of one shape are told apart by what
// consumes them), the same ties rule, never by the target's order. At
// most 256 unmatched target inputs are scored per reference input.
template <class R, class T>
void structure_matcher<R, T>::align_inputs() {
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

template <class R, class T>
void structure_matcher<R, T>::match_one(std::size_t r) {
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

// A candidate whose consumers agree better with a sibling of r still to
// be decided (a later consumer of one of r's producers, op-compatible
// with it) is that sibling's counterpart, not r's: Inception's
// 3x3-reduce convolution, folded away by the backend, must not take
// the 5x5-reduce one, which feeds the concat where its own sibling's
// branch does. Siblings compete on evidence, not on who comes first.
// At most 32 siblings are consulted (a node with a huge fan-out).
template <class R, class T>
void structure_matcher<R, T>::drop_candidates_a_sibling_explains_better(std::size_t r,
                                                                       const std::vector<std::size_t>& producers) {
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

} // namespace numgap::detail
