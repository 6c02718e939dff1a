#pragma once
// numgap::compared_groups: what compare_groups found for every match group,
// before build_report turns it into a comparison_report (compare_runs does
// both; see compare_groups.hpp for why a caller may want them apart).
//
// Packed: a group's outcome is ~60 bytes (status, element count, dtypes, a
// shape of rank up to four) plus one value and one verdict per metric, kept
// in columns whose name and rule are stored once (the metric set's). The rare
// rest (a message, quantization, an error's kind and location, a longer shape,
// metrics that do not follow the set's columns) is boxed. A report row,
// which names its nodes and repeats each metric's name and rule, is ~0.7 KB.
// When the repair pass had work (structural pairs whose shapes differ, or
// ambiguous ones that failed: rare), the groups are kept as full report rows
// instead, with the repaired match result, because repair works on rows.
//
// Treat it as a value to hand to build_report: its members are private and
// read through detail::compared_groups_access by compare_groups and
// build_report only.
// Complexity: O(1) accessors. Throws: nothing.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <numgap/core/boxed.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/match/match_result.hpp>
#include <numgap/metric/rule.hpp>
#include <numgap/report/group_error.hpp>
#include <numgap/report/group_report.hpp>
#include <numgap/report/group_status.hpp>
#include <numgap/report/report_metric.hpp>

namespace numgap {

namespace detail {
struct compared_groups_access;

// The parts of a group's outcome that most groups do not have.
struct group_outcome_extras {
    std::string message;
    std::string quantization_reference;
    std::string quantization_target;
    boxed<group_error> error_detail;
    std::vector<std::int64_t> shape;    // when the rank exceeds group_outcome::inline_rank
    std::vector<report_metric> metrics; // when they do not follow the metric columns
};

// One group's outcome, packed (see the file comment).
struct group_outcome {
    static constexpr std::size_t inline_rank = 4;

    std::int64_t count = 0;
    std::array<std::int64_t, inline_rank> dims{}; // the shape when shape_in_extras is false
    boxed<group_outcome_extras> extras;
    group_status status = group_status::missing;
    std::optional<dtype> dtype_reference;
    std::optional<dtype> dtype_target;
    std::uint8_t rank = 0;
    bool shape_in_extras = false;
    bool metrics_in_columns = false; // values and verdicts are in the columns

    group_outcome_extras& extra() { return extras ? *extras : extras.emplace(); }
    // As group_report::compared().
    bool compared() const noexcept { return status == group_status::pass || status == group_status::fail; }
};

// The columns every conforming group's metrics follow: the metric set's names and rules, in order.
struct metric_columns {
    std::vector<std::string> names;
    std::vector<std::optional<pass_rule>> rules;

    std::size_t size() const noexcept { return names.size(); }
    bool fit(const std::vector<report_metric>& metrics) const noexcept {
        if (metrics.size() != names.size()) return false;
        for (std::size_t m = 0; m < metrics.size(); ++m)
            if (metrics[m].name != names[m] || metrics[m].rule != rules[m]) return false;
        return true;
    }
};

// Moves the outcome fields of `row` (what compare_group writes) into `outcome`;
// values and passed are the group's slots in the metric columns.
inline void pack_outcome(group_report& row, group_outcome& outcome, const metric_columns& columns, double* values,
                         unsigned char* passed) {
    outcome.count = row.count;
    outcome.status = row.status;
    outcome.dtype_reference = row.dtype_reference;
    outcome.dtype_target = row.dtype_target;
    if (row.shape.size() <= group_outcome::inline_rank) {
        outcome.rank = std::uint8_t(row.shape.size());
        for (std::size_t d = 0; d < row.shape.size(); ++d) outcome.dims[d] = row.shape[d];
    } else {
        outcome.shape_in_extras = true;
        outcome.extra().shape = std::move(row.shape);
    }
    if (columns.fit(row.metrics)) {
        outcome.metrics_in_columns = true;
        for (std::size_t m = 0; m < row.metrics.size(); ++m) {
            values[m] = row.metrics[m].value;
            passed[m] = row.metrics[m].passed;
        }
    } else if (!row.metrics.empty()) {
        outcome.extra().metrics = std::move(row.metrics);
    }
    if (!row.message.empty()) outcome.extra().message = std::move(row.message);
    if (!row.quantization_reference.empty())
        outcome.extra().quantization_reference = std::move(row.quantization_reference);
    if (!row.quantization_target.empty()) outcome.extra().quantization_target = std::move(row.quantization_target);
    if (row.error_detail) outcome.extra().error_detail = std::move(row.error_detail);
}

// The inverse of pack_outcome: writes the outcome into `row`, whose other fields are left as they are.
inline void unpack_outcome(group_outcome& outcome, group_report& row, const metric_columns& columns,
                           const double* values, const unsigned char* passed) {
    row.count = outcome.count;
    row.status = outcome.status;
    row.dtype_reference = outcome.dtype_reference;
    row.dtype_target = outcome.dtype_target;
    row.metrics.clear();
    if (outcome.metrics_in_columns) {
        row.metrics.resize(columns.size());
        for (std::size_t m = 0; m < columns.size(); ++m) {
            row.metrics[m].name = columns.names[m];
            row.metrics[m].value = values[m];
            row.metrics[m].rule = columns.rules[m];
            row.metrics[m].passed = passed[m] != 0;
        }
    }
    if (outcome.shape_in_extras) row.shape = std::move(outcome.extras->shape);
    else row.shape.assign(outcome.dims.begin(), outcome.dims.begin() + outcome.rank);
    if (!outcome.extras) return;
    group_outcome_extras& extras = *outcome.extras;
    if (!outcome.metrics_in_columns) row.metrics = std::move(extras.metrics);
    row.message = std::move(extras.message);
    row.quantization_reference = std::move(extras.quantization_reference);
    row.quantization_target = std::move(extras.quantization_target);
    row.error_detail = std::move(extras.error_detail);
    outcome.extras.reset();
}

// Everything compare_groups hands to build_report.
struct compared_groups_state {
    metric_columns columns;
    // Packed, one per match group (when `full` is false).
    std::vector<group_outcome> outcomes;
    std::vector<double> metric_values;        // outcomes.size() x columns.size()
    std::vector<unsigned char> metric_passed; // likewise
    // After a repair (`full` is true): the match groups' rows, named, in the
    // repaired match result's order, and that result.
    bool full = false;
    std::vector<group_report> rows;
    std::optional<match_result> repaired_matches;
    std::unordered_map<std::size_t, std::string> reference_messages, target_messages; // why a node became unmatched
    // Per node of the final match result's sorted unmatched lists: whether the run holds its tensor.
    std::vector<char> unmatched_reference_held, unmatched_target_held;
    // What build_report checks it is given the same graphs and match result.
    std::size_t reference_nodes = 0, target_nodes = 0, match_groups = 0;
};
} // namespace detail

class compared_groups {
public:
    // The metric names, in the order of every row's metrics (comparison_report::metric_names).
    const std::vector<std::string>& metric_names() const noexcept { return state_.columns.names; }
    // Match groups compared (after a repair: kept).
    std::size_t size() const noexcept { return state_.full ? state_.rows.size() : state_.outcomes.size(); }

private:
    friend struct detail::compared_groups_access;
    detail::compared_groups_state state_;
};

namespace detail {
struct compared_groups_access {
    static compared_groups_state& state(compared_groups& groups) noexcept { return groups.state_; }
};
} // namespace detail

} // namespace numgap
