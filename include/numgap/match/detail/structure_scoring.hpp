#pragma once
// structure_matcher's scoring of one (reference r, target t) pair: op
// agreement (the equivalence predicate gates, families refine), absorption
// into a fused host, shape agreement, and producer consistency (how much of
// r's producers' flow reaches t's inputs). The weights that combine them are
// stated in match_by_structure.hpp. Complexity: O(1) per op/shape score;
// producer_consistency visits at most 64 nodes behind t. Throws nothing
// but what the predicates throw.
#include <numgap/match/detail/structure_matcher.hpp>
#include <algorithm>
#include <cstddef>
#include <ranges>
#include <string_view>
#include <vector>

namespace numgap::detail {

// The predicate decides compatibility; the families refine the score. A
// fused target op ("conv+bn+relu") is most likely the counterpart of its
// first part: the others are absorbed into it (see match_one).
template <class R, class T>
double structure_matcher<R, T>::op_agreement(std::size_t r, std::size_t t) const {
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
template <class R, class T>
double structure_matcher<R, T>::absorption_agreement(std::size_t r, std::size_t host) const {
    if (!can_fuse_(reference_attributes_.op[r], target_attributes_.op[host])) return -1.0;
    const auto& parts = target_attributes_.parts[host];
    if (parts.empty()) return 0.6;
    const std::size_t covered = covered_[host];
    return covered < parts.size() && parts[covered] == reference_attributes_.family[r] ? 1.0 : -1.0;
}

template <class R, class T>
double structure_matcher<R, T>::shape_score(std::size_t r, std::size_t t) const {
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
template <class R, class T>
void structure_matcher<R, T>::effective_producers(std::size_t t) const {
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
template <class R, class T>
double structure_matcher<R, T>::producer_consistency(const std::vector<std::size_t>& producers, std::size_t t,
                                                     std::size_t known_producer) const {
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
template <class R, class T>
bool structure_matcher<R, T>::fits_a_consumer(std::size_t r, std::size_t t) const {
    for (auto consumer : reference_consumers_.consumers(r))
        if (equivalent_(reference_attributes_.op[consumer], target_attributes_.op[t])) return true;
    return false;
}

} // namespace numgap::detail
