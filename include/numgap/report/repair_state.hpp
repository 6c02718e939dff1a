#pragma once
// repair_state: what checking a structural pairing against the tensors did
// to one row of a comparison report (see compare/repair_pairings.hpp).
//
// Why a state of its own and not a message: the analysis decides from it
// whether an ambiguous failing pair may be named as an error origin, and
// every writer shows it, so it must be data. The names are the CSV/JSON
// spellings.
//   none                nothing was tried (the pair passed, is not
//                       ambiguous, or repair is off);
//   repaired_by_values  the matcher's pairing failed (or its shapes differed)
//                       and a re-pairing within the ambiguity class scores
//                       better: the row now compares that candidate (repair
//                       on). The row may still fail (a broken node swapped
//                       back from its healthy twin's target); whether that
//                       failure is settled is group_report::
//                       fails_every_candidate;
//   repair_possible     as above, but the matcher's pairing was kept and the
//                       row only says which candidate scores better and what
//                       it showed (repair warn);
//   confirmed_by_values the pair fails and no candidate of its ambiguity
//                       class passes either: it fails whichever candidate is
//                       the right one, so the failure is real.
// Complexity: O(1). Throws: nothing.
#include <cstdint>
#include <optional>
#include <string_view>

namespace numgap {

enum class repair_state : std::uint8_t { none, repaired_by_values, repair_possible, confirmed_by_values };

constexpr std::string_view name_of(repair_state state) noexcept {
    switch (state) {
    case repair_state::none: return "none";
    case repair_state::repaired_by_values: return "repaired_by_values";
    case repair_state::repair_possible: return "repair_possible";
    case repair_state::confirmed_by_values: return "confirmed_by_values";
    }
    return "none";
}

constexpr std::optional<repair_state> parse_repair_state(std::string_view text) noexcept {
    for (repair_state state : {repair_state::none, repair_state::repaired_by_values, repair_state::repair_possible,
                               repair_state::confirmed_by_values})
        if (name_of(state) == text) return state;
    return std::nullopt;
}

} // namespace numgap
