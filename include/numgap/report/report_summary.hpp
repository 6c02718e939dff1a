#pragma once
// report_summary: the counts and the two answers a user reads first — where
// the target first diverges and which groups introduce error.
//
// `groups` counts match groups (rows that are not `unmatched`);
// `unmatched_reference`/`unmatched_target` count unmatched nodes. The first
// divergence is the earliest failing group in reference topological order,
// named by its last reference node; origins are failing groups none of whose
// nearest compared ancestors fails (see analyze_report.hpp). Suspect groups
// (failing, ambiguous, not confirmed by the tensors) are listed apart and are
// never the first divergence or an origin.
// Complexity: O(1). Throws: nothing.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace numgap {

struct report_summary {
    std::size_t groups = 0;
    std::size_t passed = 0;
    std::size_t failed = 0;
    std::size_t missing = 0;
    std::size_t errors = 0;
    std::size_t unmatched_reference = 0;
    std::size_t unmatched_target = 0;
    std::optional<std::size_t> first_divergence_group; // index into comparison_report::groups
    std::string first_divergence;                      // reference node name; empty when none
    std::vector<std::size_t> origin_groups;            // in reference topological order
    std::vector<std::string> origins;                  // last reference node of each origin group
    std::vector<std::size_t> suspect_groups;           // failing ambiguous groups not named above
    std::size_t repaired = 0;                          // groups whose pairing the values repaired
    // Coverage: reference nodes in compared (pass/fail) groups, and unmatched
    // reference nodes whose tensor was dumped (an unmatched row naming a
    // reference tensor). A run where the second outnumbers the first compared
    // less than half of what it could have: see mostly_unmatched.
    std::size_t compared_reference = 0;
    std::size_t unmatched_reference_dumped = 0;
};

// True when more than half of the reference nodes with dumped tensors were
// not compared because they are unmatched: unmatched_reference_dumped >
// (compared_reference + unmatched_reference_dumped) / 2. Such a run says
// little whatever its pass/fail counts (the CLI warns and exits 1).
constexpr bool mostly_unmatched(const report_summary& summary) noexcept {
    return summary.unmatched_reference_dumped > summary.compared_reference;
}

} // namespace numgap
