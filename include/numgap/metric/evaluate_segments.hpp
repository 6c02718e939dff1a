#pragma once
// evaluate_segments: evaluate() for tensors stored as segments along one axis
// (core/segmented_view.hpp: tensor-parallel shards), without concatenating
// either side.
//
// How: the cut points of both sides along the common axis split the logical
// range into pieces; a piece lies inside one segment of each side, so each
// side's part of it is a plain view (core/slice_along.hpp: pointer moved,
// strides kept). Every piece pair goes through the ordinary path - validate,
// plan, fused kernel (threads as options.threads allows) - and the pieces'
// pair_moments and user reduction states merge exactly as threads' partial
// states merge in evaluate.hpp, before the metrics are finalised once. So a
// sharded target against an unsplit reference reads both where they lie, with
// runs as long as a shard's rows. When the pieces are read in runs, they are
// walked together in reference order (interleaved_moments below), not one
// after the other, and float32 runs reach the kernel many at a time.
//
// Which layouts: either side may be split, or both, along the same axis with
// any offsets (the pieces are the union of the cuts). Both split along
// different axes: numgap::error (kind usage). An unsplit side is one segment
// at offset 0; its axis is ignored.
//
// Accuracy: the sums are the fused kernel's, in float32 chunks of at most
// flush_interval elements added into float64 (kernels/fused/pair_moments.hpp);
// pieces start new chunks, like threads, so sums differ from the unsplit
// comparison's only by the float64 rounding of the merge and the regrouping
// of chunks - both inside the kernel's stated bound against the long-double
// oracle (kernels/scalar_reference.hpp). Extremes, counts and not-close counts
// are exact and identical.
//
// Whole-tensor metrics: those that are a mean over the rows of the last axis
// (kl_div, topk: `mean_over_rows`) are computed per piece and combined as the
// row-weighted mean when the split axis is not the last one (every row lies in
// one piece); split along the last axis they would need rows assembled from
// shards, and are refused (numgap::error, kind usage) rather than approximated.
// Any other whole-tensor metric (tier 1 of metric/concept.hpp: it must see the
// whole tensor at once) is refused when there is more than one piece; write it
// as a reduction metric (accumulate/merge/finalize) to use it on shards.
//
// Complexity: O(n) plus O(segments) bookkeeping. Allocation: per piece as
// evaluate(). Throws: numgap::error for invalid segments or pairs, and as above.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/parallel_for.hpp>
#include <numgap/core/segmented_view.hpp>
#include <numgap/core/slice_along.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/dispatch/dispatch.hpp>
#include <numgap/kernels/plan/for_each_run.hpp>
#include <numgap/kernels/plan/pair_plan.hpp>
#include <numgap/kernels/plan/validate_pair.hpp>
#include <numgap/kernels/table/accumulate_plan.hpp>
#include <numgap/metric/evaluate.hpp>
#include <numgap/metric/evaluate_options.hpp>
#include <numgap/metric/evaluation.hpp>
#include <numgap/metric/metric_set.hpp>

namespace numgap {

namespace detail {

struct segment_piece {
    tensor_view reference, target;
};

// The pieces both sides' cut points make, in order along the axis.
inline std::vector<segment_piece> segment_pieces(const segmented_view& reference, const segmented_view& target,
                                                 int axis, std::int64_t length) {
    std::vector<segment_piece> pieces;
    std::size_t r = 0, t = 0;
    const auto end_of = [](const segmented_view& side, std::size_t i, std::int64_t whole) {
        return i + 1 < side.segments.size() ? side.segments[i + 1].offset : whole;
    };
    for (std::int64_t begin = 0; begin < length;) {
        const std::int64_t end = std::min(end_of(reference, r, length), end_of(target, t, length));
        const tensor_segment& in_reference = reference.segments[r];
        const tensor_segment& in_target = target.segments[t];
        pieces.push_back({slice_along(in_reference.view, axis, begin - in_reference.offset, end - begin),
                          slice_along(in_target.view, axis, begin - in_target.offset, end - begin)});
        begin = end;
        if (end == end_of(reference, r, length)) ++r;
        if (end == end_of(target, t, length)) ++t;
    }
    return pieces;
}

inline double whole_tensor_over_pieces(const metric_entry& entry, const std::vector<segment_piece>& pieces, int axis,
                                       int rank) {
    if (pieces.size() == 1) return entry.whole_tensor(pieces.front().reference, pieces.front().target);
    const error_location where = error_location::of_item(std::string(pieces.front().reference.name()));
    if (!entry.mean_over_rows)
        throw error(error_kind::usage,
                    "metric '" + std::string(entry.name) +
                        "' reads the whole tensor at once, and numgap does not assemble a "
                        "tensor from its shards; write it as a reduction metric (accumulate/merge/finalize) or compare "
                        "unsplit tensors",
                    where);
    if (axis == rank - 1)
        throw error(error_kind::usage,
                    "metric '" + std::string(entry.name) +
                        "' reads whole rows of the last axis, but the tensors are split along "
                        "that axis (" +
                        std::to_string(axis) + ") into " + std::to_string(pieces.size()) +
                        " pieces; it is computed only for tensors split along another axis",
                    where);
    // Row-weighted mean of the pieces' row means: every row lies in one piece.
    double weighted = 0.0;
    std::int64_t rows = 0;
    for (const segment_piece& piece : pieces) {
        const std::int64_t row_length = piece.reference.logical_shape()[std::size_t(rank - 1)];
        const std::int64_t piece_rows = row_length == 0 ? 0 : piece.reference.size() / row_length;
        weighted += double(piece_rows) * entry.whole_tensor(piece.reference, piece.target);
        rows += piece_rows;
    }
    return weighted / double(rows);
}

// The fused pass over the pieces in reference order, when the split axis has
// dimensions before it (`outer` > 1 indices of them) and every piece is read
// in runs (kernels/plan/for_each_run.hpp): for each outer index, each piece's
// slab of it in turn, so the reference and every segment are read front to
// back once, as an unsplit pair is. Piece after piece instead reads 1/S of
// every reference row per pass, and the kernel's software prefetch runs past
// each row's end into columns only a later pass reads (an unsplit reference
// against 2 and 8 shards: 57-64% and ~42% of the unsplit pair's speed, AMD
// EPYC Zen 4).
// Threads take ranges of outer indices. Returns nothing (the caller walks
// piece by piece) when some piece is not read in runs: blocks gathered
// across short rows would be cut at every slab. Plain float32 rows are runs
// from shortest_batched_row elements on (a runs_f32 batch costs no call per
// row; shorter rows are mostly the kernel's scalar tails).
inline constexpr std::int64_t shortest_batched_row = 64;

inline std::optional<kernels::pair_moments> interleaved_moments(const std::vector<segment_piece>& pieces,
                                                                std::int64_t outer,
                                                                const kernels::kernel_options& kernel_options,
                                                                std::size_t threads,
                                                                const kernels::kernel_table& table) {
    struct walked_piece {
        kernels::pair_plan plan;
        std::int64_t slab; // elements per outer index
        // Plan rows per outer index when the slab is whole rows of plain
        // float32, unit stride along them, on both sides (else 0): these
        // rows are walked by a row_cursor and batched into runs_f32 from
        // shortest_batched_row elements a row. for_each_run takes rows of
        // shortest_run or more only, leaving shorter ones to blocks gathered
        // piece by piece (8 shards of [1024, 128]: 3.3x the unsplit pair's time).
        std::int64_t plain_rows = 0;
    };
    std::vector<walked_piece> walked;
    walked.reserve(pieces.size());
    std::int64_t count = 0;
    for (const segment_piece& piece : pieces) {
        const kernels::pair_plan plan = kernels::make_pair_plan(piece.reference, piece.target, table);
        const std::int64_t slab = plan.count / outer, inner = plan.shape[std::size_t(plan.rank - 1)];
        const auto plain = [&](const kernels::plan_side& side) {
            return side.type == dtype::float32 && !side.quantized && side.scales == nullptr &&
                   side.block_scales == nullptr && side.strides[std::size_t(plan.rank - 1)] == 1;
        };
        const bool plain_rows = table.runs_f32 != nullptr && plain(plan.reference) && plain(plan.target) &&
                                inner >= shortest_batched_row && slab % inner == 0;
        if (!plain_rows && kernels::plan_walk_of(plan, table, kernel_options) != kernels::plan_walk::runs)
            return std::nullopt;
        walked.push_back({plan, slab, plain_rows ? slab / inner : 0});
        count += plan.count;
    }
    // Runs of float32 on both sides are handed to the kernel many at a time
    // (kernels::accumulate_runs): one call per row of a piece cost its own
    // accumulator set-up and reduction (8 shards of [8192, 1024] against an
    // unsplit f32 reference: 28.5 ms through run_f32 a row against 21.7 ms
    // unsplit, AMD EPYC Zen 5). Other runs take run_f32 one by one.
    const auto walk_outer = [&](std::int64_t begin, std::int64_t end, kernels::pair_moments& moments) {
        constexpr std::size_t most_runs = 256;
        const float* references[most_runs];
        const float* targets[most_runs];
        std::size_t lengths[most_runs];
        std::size_t batched = 0;
        const auto pass_batch = [&] {
            if (batched != 0) table.runs_f32(references, targets, lengths, batched, kernel_options, moments);
            batched = 0;
        };
        const auto add_run = [&](const float* reference, const float* target, std::size_t n) {
            references[batched] = reference;
            targets[batched] = target;
            lengths[batched] = n;
            if (++batched == most_runs) pass_batch();
        };
        std::vector<kernels::detail::row_cursor> cursors;
        cursors.reserve(walked.size());
        for (const walked_piece& piece : walked) cursors.emplace_back(piece.plan, begin * piece.plain_rows);
        for (std::int64_t o = begin; o < end; ++o)
            for (std::size_t p = 0; p < walked.size(); ++p) {
                const walked_piece& piece = walked[p];
                if (piece.plain_rows != 0) {
                    const auto inner = std::size_t(piece.plan.shape[std::size_t(piece.plan.rank - 1)]);
                    const auto* reference = reinterpret_cast<const float*>(piece.plan.reference.base);
                    const auto* target = reinterpret_cast<const float*>(piece.plan.target.base);
                    for (std::int64_t row = 0; row < piece.plain_rows; ++row, cursors[p].advance())
                        add_run(reference + cursors[p].reference_element(), target + cursors[p].target_element(),
                                inner);
                    continue;
                }
                kernels::for_each_run(piece.plan, o * piece.slab, (o + 1) * piece.slab,
                                      [&](const kernels::stored_run& r, const kernels::stored_run& t, std::size_t n) {
                                          if (r.type != dtype::float32 || t.type != dtype::float32) {
                                              pass_batch();
                                              table.run_f32(r, t, n, kernel_options, moments);
                                              return;
                                          }
                                          add_run(static_cast<const float*>(r.data), static_cast<const float*>(t.data),
                                                  n);
                                      });
            }
        pass_batch();
    };
    const std::int64_t most_workers = std::min(outer, std::max<std::int64_t>(1, count / min_elements_per_thread));
    const std::size_t workers = std::min(resolve_threads(threads), std::size_t(most_workers));
    std::vector<kernels::pair_moments> partials(workers);
    if (workers == 1) {
        walk_outer(0, outer, partials[0]);
        return partials[0];
    }
    parallel_for(workers, [&](std::size_t worker) {
        const auto bound = [&](std::size_t w) { return outer * std::int64_t(w) / std::int64_t(workers); };
        walk_outer(bound(worker), bound(worker + 1), partials[worker]);
    });
    for (std::size_t w = 1; w < workers; ++w) partials[0].merge(partials[w]);
    return partials[0];
}

} // namespace detail

inline evaluation evaluate_segments(const segmented_view& reference, const segmented_view& target,
                                    const metric_set& metrics, const evaluate_options& options = {}) {
    // Errors about the pair name the reference's first segment (what a reader
    // names after the tensor), as validate_pair does for an unsplit pair.
    const auto where = [&] {
        return error_location::of_item(
            reference.segments.empty() ? std::string() : std::string(reference.segments.front().view.name()));
    };
    if (reference.is_split() && target.is_split() && reference.axis != target.axis)
        throw error(error_kind::usage,
                    "the reference is split along axis " + std::to_string(reference.axis) + " and the target along axis " +
                        std::to_string(target.axis) + "; numgap compares shards split along one common axis only",
                    where());
    const int axis = reference.is_split() ? reference.axis : target.axis;
    const auto label = [](const char* side) {
        return [side](std::size_t i) { return std::string(side) + " segment " + std::to_string(i); };
    };
    const std::array<std::int64_t, max_rank> reference_shape =
        segmented_extent(segmented_view{reference.segments, axis}, label("reference"));
    const std::array<std::int64_t, max_rank> target_shape =
        segmented_extent(segmented_view{target.segments, axis}, label("target"));
    const int rank = reference.segments.front().view.rank();
    if (rank != target.segments.front().view.rank() ||
        !std::equal(reference_shape.begin(), reference_shape.begin() + rank, target_shape.begin()))
        throw error(error_kind::shape,
                    "the reference's logical shape " +
                        detail::shape_text(std::span<const std::int64_t>(reference_shape.data(), std::size_t(rank))) +
                        " differs from the target's " +
                        detail::shape_text(std::span<const std::int64_t>(target_shape.data(),
                                                                 std::size_t(target.segments.front().view.rank()))),
                    where());
    const std::vector<detail::segment_piece> pieces =
        detail::segment_pieces(reference, target, axis, reference_shape[std::size_t(axis)]);
    for (const detail::segment_piece& piece : pieces) validate_pair(piece.reference, piece.target);

    const detail::pass_layout& layout = detail::metric_set_access::layout(metrics);
    const kernels::kernel_table& table = kernels::active_kernels();
    std::int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= reference_shape[std::size_t(d)];
    std::optional<kernels::pair_moments> interleaved;
    if (pieces.size() > 1 && outer > 1 && layout.reductions.empty() && detail::needs_fused_pass(layout, options))
        interleaved = detail::interleaved_moments(pieces, outer, detail::pass_kernel_options(layout, options),
                                                  options.threads, table);
    detail::pass_partial pass;
    if (interleaved) {
        pass.moments = *interleaved;
    } else {
        for (std::size_t p = 0; p < pieces.size(); ++p) {
            if (p == 0) {
                detail::fused_pass(pieces[p].reference, pieces[p].target, layout, options, table, pass);
                continue;
            }
            detail::pass_partial piece;
            detail::fused_pass(pieces[p].reference, pieces[p].target, layout, options, table, piece);
            detail::merge_partial(pass, piece, layout.reductions);
        }
    }

    evaluation result;
    for (const detail::segment_piece& piece : pieces) result.count += piece.reference.size();
    result.reference.count = result.count;
    result.target.count = result.count;
    const auto& entries = detail::metric_set_access::entries(metrics);
    result.metrics.resize(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
        metric_result& out = result.metrics[i];
        out.name = entries[i].name;
        out.value = detail::metric_value(metrics, i, pass, [&](const detail::metric_entry& entry) {
            return detail::whole_tensor_over_pieces(entry, pieces, axis, rank);
        });
        out.rule = entries[i].rule;
        out.passed = metric_passes(out.rule, out.value);
    }
    if (options.any_side_statistics()) {
        result.reference = make_side_stats(pass.moments.reference, result.count, options.side_detail_asked());
        result.target = make_side_stats(pass.moments.target, result.count, options.side_detail_asked());
    }
    return result;
}

} // namespace numgap
