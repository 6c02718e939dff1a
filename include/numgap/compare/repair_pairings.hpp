#pragma once
// repair_pairings: checks structural pairings against the tensors, after
// compare_runs has compared every group once.
//
// Structural matching may pair a reference node with the wrong one of several
// target nodes it cannot tell apart (match_group::ambiguous_with: parallel
// convolutions of a Fire module, q/k/v projections). numgap holds both
// tensors, so when such a pair fails the data can say which pairing is right.
// Only groups of strategy "structure" are touched; exact strategies (name,
// handle, explicit) are never second-guessed.
//
// A structural group needs attention when its tensors' shapes differ (the
// pairing is then certainly wrong) or when it fails and is ambiguous. For
// such a group G, in repair_mode on or warn, every candidate c of its
// ambiguity class is tried:
//   - c is the target output node of another structural group H: the swap
//     (G's reference against H's target, H's reference against G's target);
//   - c is an unmatched target node and G has one target node: G against c.
// Each pair scores 2 (pass), 1 (fail) or 0 (not comparable: shapes differ,
// missing, error). A re-pairing is taken when every pair it creates is
// comparable and its total score beats the current pairing's; among several,
// the best, ties to the first in ambiguous_with order (topological, never the
// target's listing order). So a genuinely broken node whose healthy twin
// passes is never "repaired": swapping them moves the failure, it does not
// remove it.
// Outcome per group (repair_state on the row):
//   on:   the re-pairing is applied to the match groups and rows, both
//         rows marked repaired_by_values, the message names the old target
//         and says what the values showed (the new target passes, or it
//         fails too but the swap lets the partner pass);
//   warn: nothing changes but the row is marked repair_possible and the
//         message names the candidate and what it showed, in the same words;
//   no better re-pairing, the pair fails, and every candidate was tried and
//         none passes against G's reference: confirmed_by_values (the pair
//         fails whichever candidate is right);
//   settled: a row's failure is settled by the values (group_report::
//         fails_every_candidate, which analyze_report reads) when every
//         candidate of G's ambiguity class was tried against G's reference
//         and none passes, whether or not a re-pairing was then taken. So a
//         broken node first paired with its healthy twin's target, repaired
//         (the twin now passes) and still failing is settled and can be named;
//         a swap partner H is settled when it still fails, its pairing before
//         the swap failed too and its remaining ambiguity class is just that
//         earlier target (both of H's pairings were compared);
//   shapes differ and nothing better is taken (or mode warn/off): the group
//         is dropped and its nodes become unmatched rows whose message says
//         why — a shape mismatch on a structural pair is never an `error`.
// Bound: at most 2·|ambiguous_with| extra evaluations per group needing
// attention (one per candidate for G, one more for a swap partner H, skipped
// when G's score alone cannot win); nothing at all when every structural pair
// passes, is unambiguous and its shapes agree. Groups are visited in report
// order and a group changed by a swap is not revisited.
// Complexity: O(groups + target nodes) plus the bounded evaluations.
// Throws: std::bad_alloc; per-pair failures are scores, never exceptions.
#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <numgap/compare/compare_options.hpp>
#include <numgap/graph/concepts.hpp>
#include <numgap/match/match_kind.hpp>
#include <numgap/match/match_result.hpp>
#include <numgap/match/node_list.hpp>
#include <numgap/metric/evaluation.hpp>
#include <numgap/metric/metric_set.hpp>
#include <numgap/report/group_report.hpp>
#include <numgap/report/repair_state.hpp>

namespace numgap::detail {

// What the repair pass changes besides rows and groups: rows to drop (their
// nodes become unmatched) and the message each newly unmatched node gets.
struct repair_outcome {
    std::vector<bool> dropped;
    std::unordered_map<std::size_t, std::string> reference_messages, target_messages;
};

inline int pair_score(const group_report& row) noexcept {
    return row.status == group_status::pass ? 2 : row.status == group_status::fail ? 1 : 0;
}

inline std::string quoted_names(const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "'" : ", '") + name + "'";
    return text;
}

// Whether repair_pairings has anything to look at: a structural group whose
// shapes differ, or one that failed and is ambiguous. O(groups), no
// allocation, so compare_runs can skip the pass (and the copy of the match
// result it edits) for the usual run that has neither.
// status_of(g) is group g's status.
template <class StatusOf>
requires std::is_invocable_r_v<group_status, StatusOf, std::size_t>
bool repair_needs_attention(const std::vector<match_group>& groups, StatusOf status_of,
                            const std::vector<char>& shapes_differ) {
    for (std::size_t g = 0; g < groups.size(); ++g)
        if (groups[g].strategy == "structure" &&
            (shapes_differ[g] || (status_of(g) == group_status::fail && groups[g].ambiguous())))
            return true;
    return false;
}
inline bool repair_needs_attention(const std::vector<match_group>& groups, const std::vector<group_report>& rows,
                                   const std::vector<char>& shapes_differ) {
    return repair_needs_attention(
        groups, [&rows](std::size_t g) { return rows[g].status; }, shapes_differ);
}

// CompareGroup(row, shapes_are_evidence) compares row.reference_tensor with
// row.target_tensor into row and returns whether the shapes differ.
// target_names[node] is the report name of a target node (report_name_table).
template <graph TargetGraph, class TargetNames, class CompareGroup>
repair_outcome repair_pairings(match_result& matches, std::vector<group_report>& rows, std::vector<char>& shapes_differ,
                               const TargetGraph& target_graph, const TargetNames& target_names, repair_mode mode,
                               CompareGroup&& compare_group) {
    repair_outcome outcome;
    outcome.dropped.assign(rows.size(), false);
    std::vector<match_group>& groups = matches.groups;
    if (!repair_needs_attention(groups, rows, shapes_differ)) return outcome;

    // Which group outputs each target node (only what repair may swap with).
    std::unordered_map<std::size_t, std::size_t> group_of_target_output;
    std::unordered_set<std::size_t> unmatched_targets(matches.unmatched_target.begin(),
                                                      matches.unmatched_target.end());
    for (std::size_t g = 0; g < groups.size(); ++g) group_of_target_output.emplace(groups[g].target_output_node, g);

    auto drop = [&](std::size_t g, const std::string& why) {
        outcome.dropped[g] = true;
        for (std::size_t node : groups[g].reference_nodes) {
            matches.unmatched_reference.push_back(node);
            outcome.reference_messages[node] = why;
        }
        for (std::size_t node : groups[g].target_nodes) {
            matches.unmatched_target.push_back(node);
            outcome.target_messages[node] = why;
        }
    };
    auto with_target = [&](const group_report& row, std::vector<std::string> target_nodes, std::string tensor) {
        group_report trial = row;
        trial.target_nodes = std::move(target_nodes);
        trial.target_tensor = std::move(tensor);
        trial.message.clear();
        return trial;
    };
    auto target_label = [&](const group_report& row) {
        return row.target_nodes.empty() ? row.target_tensor : row.target_nodes.back();
    };

    std::vector<bool> touched(groups.size(), false);
    for (std::size_t g = 0; g < groups.size(); ++g) {
        if (touched[g] || groups[g].strategy != "structure") continue;
        const bool fails_ambiguous = rows[g].status == group_status::fail && groups[g].ambiguous();
        if (!shapes_differ[g] && !fails_ambiguous) continue;

        struct candidate_trial {
            std::size_t node = 0;
            std::optional<std::size_t> partner; // the swapped group, if any
            group_report row, partner_row;
            int gain = 0;
        };
        std::optional<candidate_trial> best;
        bool every_candidate_tried = true, some_candidate_passes = false;
        if (mode != repair_mode::off) {
            const int current = pair_score(rows[g]);
            for (std::size_t candidate : groups[g].ambiguous_with) {
                if (candidate == groups[g].target_output_node) continue;
                candidate_trial trial;
                trial.node = candidate;
                const auto owner = group_of_target_output.find(candidate);
                if (owner != group_of_target_output.end()) {
                    const std::size_t h = owner->second;
                    if (h == g || touched[h] || outcome.dropped[h] || groups[h].strategy != "structure") {
                        every_candidate_tried = false;
                        continue;
                    }
                    trial.partner = h;
                    trial.row = with_target(rows[g], rows[h].target_nodes, rows[h].target_tensor);
                    compare_group(trial.row, true);
                    some_candidate_passes = some_candidate_passes || trial.row.status == group_status::pass;
                    const int before = current + pair_score(rows[h]);
                    if (pair_score(trial.row) == 0 || pair_score(trial.row) + 2 <= before) continue;
                    trial.partner_row = with_target(rows[h], rows[g].target_nodes, rows[g].target_tensor);
                    compare_group(trial.partner_row, true);
                    if (pair_score(trial.partner_row) == 0) continue;
                    trial.gain = pair_score(trial.row) + pair_score(trial.partner_row) - before;
                } else if (unmatched_targets.count(candidate) != 0 && groups[g].target_nodes.size() == 1) {
                    const auto& keys = numgap::output_keys(target_graph, candidate);
                    if (std::empty(keys)) {
                        every_candidate_tried = false;
                        continue;
                    }
                    trial.row = with_target(rows[g], {std::string(target_names[candidate])},
                                            std::string(*std::prev(std::end(keys))));
                    compare_group(trial.row, true);
                    some_candidate_passes = some_candidate_passes || trial.row.status == group_status::pass;
                    if (pair_score(trial.row) == 0) continue;
                    trial.gain = pair_score(trial.row) - current;
                } else {
                    every_candidate_tried = false;
                    continue;
                }
                if (trial.gain > 0 && (!best || trial.gain > best->gain)) best = std::move(trial);
            }
        }

        const std::string old_target = target_label(rows[g]);
        const bool settled = every_candidate_tried && !some_candidate_passes && mode != repair_mode::off;
        // Exactly what the values showed for the best candidate, never more:
        // a candidate that only scores better is not said to pass.
        auto evidence = [&](const candidate_trial& trial) {
            const std::string candidate = target_label(trial.row);
            std::string text = "target '" + candidate + "' ";
            if (trial.row.status == group_status::pass) {
                text += "passes";
            } else if (trial.partner) {
                text += std::string(shapes_differ[g] ? "has the same shape but fails too" : "fails too") +
                        ", and after the swap reference '" + rows[*trial.partner].reference_nodes.back() + "' " +
                        (trial.partner_row.status == group_status::pass ? "passes" : "fails") + " against target '" +
                        old_target + "', so the swap scores better";
            } else {
                text += "has the same shape but fails too";
            }
            return text;
        };
        if (best && mode == repair_mode::on) {
            const std::string new_target = target_label(best->row);
            std::string why = "repaired by values: structure matching paired it with target '" + old_target +
                              "', which " + (shapes_differ[g] ? "has another shape" : "fails") + "; " +
                              evidence(*best);
            if (settled && best->row.status == group_status::fail) {
                std::vector<std::string> tried{old_target};
                tried.insert(tried.end(), rows[g].ambiguous_with.begin(), rows[g].ambiguous_with.end());
                why += "; it fails against every candidate (" + quoted_names(tried) + ")";
            }
            const bool partner_was_failing =
                best->partner && rows[*best->partner].status == group_status::fail;
            match_group& group = groups[g];
            node_list alternatives;
            for (std::size_t node : group.ambiguous_with)
                alternatives.push_back(node == best->node ? group.target_output_node : node);
            if (best->partner) {
                match_group& partner = groups[*best->partner];
                std::swap(group.target_nodes, partner.target_nodes);
                std::swap(group.target_output_node, partner.target_output_node);
                std::swap(group.target_tensor, partner.target_tensor);
                partner.kind = kind_of(partner.reference_nodes.size(), partner.target_nodes.size());
                node_list partner_alternatives;
                for (std::size_t node : partner.ambiguous_with)
                    partner_alternatives.push_back(node == partner.target_output_node ? group.target_output_node : node);
                partner.ambiguous_with = std::move(partner_alternatives);
                best->partner_row.repair = repair_state::repaired_by_values;
                best->partner_row.message =
                    "repaired by values: swapped targets with the group of reference '" +
                    rows[g].reference_nodes.back() + "'; against target '" + target_label(best->partner_row) +
                    "' it " + (best->partner_row.status == group_status::pass ? "passes" : "fails") +
                    ", against target '" + target_label(rows[*best->partner]) + "' it " +
                    (rows[*best->partner].status == group_status::pass ? "passed" : "failed");
                // Both of H's pairings were compared and both fail: settled
                // when nothing else is left in H's ambiguity class.
                best->partner_row.fails_every_candidate =
                    partner_was_failing && best->partner_row.status == group_status::fail &&
                    partner.ambiguous_with == node_list{group.target_output_node};
                best->partner_row.kind = partner.kind;
                best->partner_row.ambiguous_with.clear();
                for (std::size_t node : partner.ambiguous_with)
                    best->partner_row.ambiguous_with.emplace_back(target_names[node]);
                rows[*best->partner] = std::move(best->partner_row);
                shapes_differ[*best->partner] = false;
                touched[*best->partner] = true;
            } else {
                const std::size_t old_node = group.target_output_node;
                std::erase(matches.unmatched_target, best->node);
                matches.unmatched_target.push_back(old_node);
                unmatched_targets.erase(best->node);
                unmatched_targets.insert(old_node);
                group.target_nodes = node_list{best->node};
                group.target_output_node = best->node;
                group.target_tensor = best->row.target_tensor;
                outcome.target_messages[old_node] =
                    "repaired by values: reference '" + rows[g].reference_nodes.back() + "' is compared with target '" +
                    new_target + "' instead";
            }
            group.kind = kind_of(group.reference_nodes.size(), group.target_nodes.size());
            group.ambiguous_with = std::move(alternatives);
            best->row.repair = repair_state::repaired_by_values;
            best->row.message = why;
            best->row.fails_every_candidate = settled && best->row.status == group_status::fail;
            best->row.kind = group.kind;
            best->row.ambiguous_with.clear();
            for (std::size_t node : group.ambiguous_with) best->row.ambiguous_with.emplace_back(target_names[node]);
            rows[g] = std::move(best->row);
            shapes_differ[g] = false;
            touched[g] = true;
            continue;
        }
        if (best) { // warn
            if (shapes_differ[g]) {
                drop(g, rows[g].message + "; left unmatched (" + evidence(*best) +
                            "; repair mode on would compare it)");
            } else {
                rows[g].repair = repair_state::repair_possible;
                rows[g].message = "repair possible: target '" + old_target + "' fails; " + evidence(*best) +
                                  "; repair mode on would compare it";
            }
            continue;
        }
        if (shapes_differ[g]) {
            drop(g, rows[g].message + "; " +
                        (groups[g].ambiguous() && mode != repair_mode::off
                             ? "no other candidate (" + quoted_names(rows[g].ambiguous_with) +
                                   ") has the same shape and scores better, so "
                             : std::string()) +
                        "the pair is reported unmatched");
            continue;
        }
        if (mode != repair_mode::off && every_candidate_tried && !some_candidate_passes) {
            rows[g].repair = repair_state::confirmed_by_values;
            rows[g].fails_every_candidate = true;
            rows[g].message = "fails against every candidate of its ambiguity class (" +
                              quoted_names(rows[g].ambiguous_with) + ")";
        }
    }
    return outcome;
}

} // namespace numgap::detail
