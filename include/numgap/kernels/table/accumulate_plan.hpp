#pragma once
// accumulate_plan: the fused pass over positions [begin, end) of a pair_plan
// with one architecture's kernels: straight from memory through
// kernel_table::run_f32 when runs_in_registers(plan) (narrow types widened and
// dequantized in registers), transposed float32 pairs in bands through
// band_f32 when walks_in_bands (accumulate_bands.hpp: there [begin, end)
// counts positions in the band walk's order), else through for_each_block
// and block_f32 / block_f64 (converted, gathered or transposed L1 blocks).
// evaluate() reaches it through accumulate_views (a whole pair that is not two
// dense float views) and through its multi-threaded pass (ranges of one plan)
// whenever no user reduction metric needs float blocks.
// Precondition: validate_pair() accepted the views behind the plan; the
// plan's widen_f32 / transpose_f32 are the caller's choice (usually the same
// table's: make_pair_plan(reference, target, table)); the ranges of one pass
// all take the same walk (same plan, table and options): ranges of
// different walks need not partition the pair.
// Complexity: O(end - begin) plus plan_walk_of's O(rank + channels) when the
// walk is not given; no allocation. Throws: nothing.
#include <cstddef>
#include <cstdint>
#include <span>

#include <numgap/kernels/fused/kernel_options.hpp>
#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/kernels/plan/for_each_block.hpp>
#include <numgap/kernels/plan/for_each_run.hpp>
#include <numgap/kernels/plan/pair_plan.hpp>
#include <numgap/kernels/table/accumulate_bands.hpp>
#include <numgap/kernels/table/kernel_table.hpp>

namespace numgap::kernels {

// make_pair_plan with the conversions of `table`'s architecture (its
// widen_f32 and transpose_f32): the plan every caller of accumulate_plan
// with one table wants.
inline pair_plan make_pair_plan(const tensor_view& reference, const tensor_view& target, const kernel_table& table) {
    pair_plan plan = make_pair_plan(reference, target);
    plan.widen_f32 = table.widen_f32;
    plan.transpose_f32 = table.transpose_f32;
    return plan;
}
// A pointer to a table would otherwise convert to make_pair_plan's bool keep_last_axis.
pair_plan make_pair_plan(const tensor_view&, const tensor_view&, const kernel_table*) = delete;

// How accumulate_plan walks a plan; decided once per plan (plan_walk_of is
// O(rank + channels)), so a caller walking one plan in many ranges
// (evaluate_segments.hpp) decides it once.
enum class plan_walk { wide_blocks, runs, bands, float_blocks };

inline plan_walk plan_walk_of(const pair_plan& plan, const kernel_table& table,
                              const kernel_options& options) noexcept {
    if (plan.wide) return plan_walk::wide_blocks;
    if (table.run_f32 != nullptr && runs_in_registers(plan)) return plan_walk::runs;
    if (walks_in_bands(plan, table, options)) return plan_walk::bands;
    return plan_walk::float_blocks;
}

// Precondition: walk == plan_walk_of(plan, table, options).
inline void accumulate_plan(const pair_plan& plan, plan_walk walk, std::int64_t begin, std::int64_t end,
                            const kernel_table& table, const kernel_options& options, pair_moments& moments) noexcept {
    switch (walk) {
    case plan_walk::wide_blocks:
        for_each_block<double>(plan, begin, end, [&](std::span<const double> r, std::span<const double> t) {
            table.block_f64(r.data(), t.data(), r.size(), options, moments);
        });
        return;
    case plan_walk::runs:
        for_each_run(plan, begin, end, [&](const stored_run& r, const stored_run& t, std::size_t n) {
            table.run_f32(r, t, n, options, moments);
        });
        return;
    case plan_walk::bands: accumulate_bands(plan, begin, end, table, options, moments); return;
    case plan_walk::float_blocks:
        for_each_block<float>(plan, begin, end, [&](std::span<const float> r, std::span<const float> t) {
            table.block_f32(r.data(), t.data(), r.size(), options, moments);
        });
        return;
    }
}

inline void accumulate_plan(const pair_plan& plan, std::int64_t begin, std::int64_t end, const kernel_table& table,
                            const kernel_options& options, pair_moments& moments) noexcept {
    accumulate_plan(plan, plan_walk_of(plan, table, options), begin, end, table, options, moments);
}

} // namespace numgap::kernels
