#pragma once
// group_report: one row of a comparison report — a match group (one or more
// reference nodes against one or more target nodes, compared through one
// tensor per side) or one unmatched node.
//
// Why so many plain fields: every writer (CSV, JSON, DOT, Model Explorer, the
// CLI table) reads the same row, and a person debugging an accuracy drop needs
// the dtypes and quantization next to the numbers to tell a quantization
// artefact from a real bug. Shape is the reference tensor's shape in reference
// dimension order (empty when not loaded).
// ambiguous_with names the other target nodes structural matching could not
// tell from this row's target (match_group::ambiguous_with); `repair` says
// what checking the pairing against the tensors did (repair_state.hpp).
// Kinds, dtypes, rules, states and error kinds are enums: writers spell them.
// `strategy` stays text because match_group::strategy is open: a user's own
// matcher names itself. Quantization is text because it describes
// parameters (scale, zero point, axis) for a person, not a choice among few.
// Complexity: O(1). Throws: nothing.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/core/boxed.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/match/match_kind.hpp>
#include <numgap/report/group_error.hpp>
#include <numgap/report/group_status.hpp>
#include <numgap/report/repair_state.hpp>
#include <numgap/report/report_metric.hpp>

namespace numgap {

struct group_report {
    std::vector<std::string> reference_nodes;
    std::vector<std::string> target_nodes;
    std::string reference_tensor;
    std::string target_tensor;
    std::optional<match_kind> kind; // the matcher's match kind; empty for an unmatched row
    std::string strategy;           // which matcher produced the group ("name", "handle", ...)
    // The matcher's confidence in the pairing; empty for an unmatched row,
    // which has no pairing (CSV writes an empty cell, JSON null).
    std::optional<double> confidence = 1.0;
    std::vector<std::string> ambiguous_with; // alternative target nodes; empty when the pairing is sure
    repair_state repair = repair_state::none;
    // Set by repair_pairings: every candidate of the ambiguity class was
    // compared against this row's reference and none passes, so the values
    // settled the pairing and this failure is real whichever candidate is
    // right (also after a repair). analyze_report names such a failure.
    bool fails_every_candidate = false;
    std::string op; // op of the group's reference output node
    std::vector<std::int64_t> shape;
    std::optional<dtype> dtype_reference; // empty until the tensor was loaded
    std::optional<dtype> dtype_target;
    std::string quantization_reference; // empty when not quantized
    std::string quantization_target;
    std::int64_t count = 0; // elements compared
    std::vector<report_metric> metrics;
    group_status status = group_status::pass;
    std::string message; // why missing / error; what a source inferred (a QNN raw file's shape); else empty
    // For an `error` row caused by a numgap::error: its kind and location.
    // Boxed (core/boxed.hpp): 8 bytes in the many rows that have none.
    boxed<group_error> error_detail;
    // Filled by analyze_report: the group's position in reference topological
    // order (that of its last reference node) and whether error starts here.
    std::size_t order = 0;
    bool error_origin = false;
    // Filled by analyze_report: a failing ambiguous pair that the tensors did
    // not confirm (see analyze_report.hpp); never a divergence or an origin.
    bool suspect = false;

    bool ambiguous() const noexcept { return !ambiguous_with.empty(); }

    const report_metric* find_metric(std::string_view name) const noexcept {
        for (const report_metric& metric : metrics)
            if (metric.name == name) return &metric;
        return nullptr;
    }
    bool compared() const noexcept {
        return status == group_status::pass || status == group_status::fail;
    }
};

} // namespace numgap
