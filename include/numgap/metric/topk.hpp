#pragma once
// topk: fraction of rows (the reference's last axis) whose top-k index sets
// differ between reference and target; k is settable and defaults to 1
// (argmax disagreement, the usual classification check, valid for any row
// length). Lower is better; no default rule. Ranking: value descending, ties
// to the lower index; sets compared regardless of order (numgap/kernels/rows/topk_rows.hpp).
// Exact. k < 1 or k greater than the row length: numgap::error naming the
// tensor (clamping would silently make the metric always 0). Empty tensors:
// numgap::error. NaN anywhere: NaN (fails). +/-Inf rank as ordinary values.
// Complexity: O(n log k). Memory: rows are read in blocks
// (numgap/kernels/rows/for_each_row.hpp), at most 1 MiB, plus O(k), whatever the row or
// tensor size. Throws: numgap::error; std::bad_alloc.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <numgap/core/error.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/rows/for_each_row.hpp>
#include <numgap/kernels/rows/topk_rows.hpp>
#include <numgap/kernels/plan/validate_pair.hpp>
#include <numgap/metric/rule.hpp>

namespace numgap {

struct topk {
    static constexpr std::string_view name = "topk";
    static constexpr direction better = direction::lower_is_better;
    static constexpr std::optional<pass_rule> default_rule = std::nullopt;
    // The mean over rows of the last axis: pieces holding whole rows combine (metric/evaluate_segments.hpp).
    static constexpr bool mean_over_rows = true;

    std::int64_t k = 1;

    double operator()(const tensor_view& reference, const tensor_view& target) const {
        validate_pair(reference, target);
        const std::int64_t length = kernels::row_length(reference);
        if (k < 1 || k > length)
            throw error(error_kind::usage,
                        "topk: k = " + std::to_string(k) + " is not in 1.." + std::to_string(length) +
                            ", the length of the last axis of reference " + reference.describe(),
                        error_location::of_item(std::string(reference.name())));
        return kernels::topk_rows(reference, target, k);
    }
};

} // namespace numgap
