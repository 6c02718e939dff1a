#pragma once
// kl_div: KL(softmax(r) || softmax(t)) over each row of the reference's last
// axis, averaged over rows (a scalar is one row of length 1, giving 0).
// Lower is better; no default rule. A separate row-wise pass in float64 with
// log-sum-exp (numgap/kernels/rows/kl_div_rows.hpp): ~1e-15 absolute per row for logits of
// moderate magnitude. Zero vectors: two uniform distributions, 0. Empty
// tensors: numgap::error (validate_pair). Logits of -Inf are masked entries
// (probability 0) and are fine; a row with NaN or +Inf, or only -Inf: NaN
// (fails). A target -Inf where the reference has probability > 0: +Inf.
// Memory: rows are read in blocks (numgap/kernels/rows/for_each_row.hpp), at most 1 MiB
// whatever the row or tensor size.
// Throws: numgap::error for invalid views; std::bad_alloc.
#include <optional>
#include <string_view>

#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/rows/kl_div_rows.hpp>
#include <numgap/kernels/plan/validate_pair.hpp>
#include <numgap/metric/rule.hpp>

namespace numgap {

struct kl_div {
    static constexpr std::string_view name = "kl_div";
    static constexpr direction better = direction::lower_is_better;
    static constexpr std::optional<pass_rule> default_rule = std::nullopt;
    // The mean over rows of the last axis: pieces holding whole rows combine (metric/evaluate_segments.hpp).
    static constexpr bool mean_over_rows = true;

    double operator()(const tensor_view& reference, const tensor_view& target) const {
        validate_pair(reference, target);
        return kernels::kl_div_rows(reference, target);
    }
};

} // namespace numgap
