#pragma once
// accumulate_views: the fused pass over a whole validated pair with one
// architecture's kernels. Two dense views of float32 (or two of float64) in
// the same order go straight to kernel_table::block_f32 / block_f64: the same
// kernel, chunks and sums as the plan's walk of such a pair, without
// building and walking a pair_plan (~25 ns, a tenth of a pass at 2^10
// elements). Every other pair: make_pair_plan (with the table's
// conversions) + accumulate_plan.
// Precondition: validate_pair() accepted the views. Complexity: O(n) plus
// make_pair_plan's O(rank) when a plan is needed; no allocation.
// Throws: nothing.
#include <cstddef>

#include <numgap/core/dtype.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/fused/kernel_options.hpp>
#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/kernels/plan/pair_plan.hpp>
#include <numgap/kernels/table/accumulate_plan.hpp>
#include <numgap/kernels/table/kernel_table.hpp>

namespace numgap::kernels {

inline void accumulate_views(const tensor_view& reference, const tensor_view& target, const kernel_table& table,
                             const kernel_options& options, pair_moments& moments) noexcept {
    const auto dense = [](const tensor_view& view, dtype type) {
        return view.type() == type && !view.is_quantized() && !view.has_axis_order() && view.is_contiguous();
    };
    const auto n = std::size_t(reference.size());
    if (dense(reference, dtype::float32) && dense(target, dtype::float32))
        return table.block_f32(static_cast<const float*>(reference.data()), static_cast<const float*>(target.data()), n,
                               options, moments);
    if (dense(reference, dtype::float64) && dense(target, dtype::float64))
        return table.block_f64(static_cast<const double*>(reference.data()), static_cast<const double*>(target.data()),
                               n, options, moments);
    const pair_plan plan = make_pair_plan(reference, target, table);
    accumulate_plan(plan, 0, plan.count, table, options, moments);
}

} // namespace numgap::kernels
