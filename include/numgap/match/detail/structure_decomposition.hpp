#pragma once
// structure_matcher's decompositions: a reference op the backend lowered
// into several ops (layer_norm -> mean, sub, pow, mean, add, rsqrt, mul,
// mul, add; gelu -> mul, erf, add, mul; softmax -> amax, sub, exp, sum, div)
// finds no candidate. Its counterpart is then a region of unmatched target
// nodes fed by r's producers' images (every one of them), with one exit X:
// the value of every other node of the region stays inside it. Among the
// unmatched non-passthrough nodes reachable from the images (at most 32
// visited), each is tried as X; the largest valid region wins. Valid: at
// most max_decomposition_nodes (16) nodes, at least two non-passthrough
// ops, all of them ops canonical_op knows (an unknown op is what a
// backend's replacement of r looks like, not a piece of a lowering), none of
// them op-compatible with r (it would have been a candidate) or with what
// follows r, two recognised ops down, through unrecognised ones (those ops
// are what follows r, not pieces of it: a replaced op followed by its
// consumer's counterpart is no decomposition), no fan-out into two parallel
// convs or matmuls (a block's branches), and X's shape not contradicting
// r's. r is then paired with the region as one decomposed group whose output
// is X, and its consumers search from X. Score: like a pair with X, op
// agreement 0.6 (the ops are unknown to each other).
// Complexity: O(32 · 16 · 16) per unmatched reference op. Throws:
// std::bad_alloc.
#include <numgap/match/detail/structure_matcher.hpp>
#include <algorithm>
#include <cstddef>
#include <ranges>
#include <string_view>
#include <vector>

namespace numgap::detail {

template <class R, class T>
void structure_matcher<R, T>::match_decomposition(std::size_t r) {
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
template <class R, class T>
bool structure_matcher<R, T>::collect_region(const std::vector<std::size_t>& producers, std::size_t exit,
                                             node_list& region) const {
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

} // namespace numgap::detail
