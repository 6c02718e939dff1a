#pragma once
// evaluate: computes metrics on one (reference, target) pair.
//
// Runtime form: evaluate(reference, target, metric_set, options) validates the
// pair once (numgap::error naming the tensors and the reason), then makes ONE
// pass over both tensors in reference order through the fused SIMD kernel
// chosen by kernels::active_kernels(), serving every sum-based built-in and
// the per-side statistics at once (kernels::accumulate_plan: contiguous data
// is read where it lies, float16 / bfloat16 / quantized integers widened in
// registers; other layouts go through L1 blocks of <= 2048 elements). User
// reduction metrics receive float32 blocks, so with one in the set every
// block is converted once and handed to both the kernel and accumulate(). The pass is split over
// options.threads std::threads (each >= 65536 elements), whose partial states
// merge. Whole-tensor metrics (kl_div, topk, user tier-1 metrics) run after,
// each on its own. Results keep the set's order; rules are the override given
// to metric_set::add, else the metric's default.
// float64 pairs are processed in float64 blocks (user reduction metrics still
// receive float32 copies of each block, as their signature promises).
//
// Compile-time form: evaluate(reference, target, m1, m2, ...) takes metric
// objects directly and returns std::array<metric_result, N>; it runs the same
// single-threaded engine without side statistics.
//
// Complexity: O(n) for the fused pass; row metrics O(n log k). Allocation:
// per call, not per element (states, results, row-metric blocks of at most
// 1 MiB, see kernels/for_each_row.hpp).
// Throws: numgap::error for invalid input or options; whatever a user metric
// throws (rethrown on the calling thread); std::bad_alloc; std::system_error
// if a thread cannot start.
#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/accumulate_plan.hpp>
#include <numgap/kernels/dispatch.hpp>
#include <numgap/kernels/kernel_options.hpp>
#include <numgap/kernels/pair_moments.hpp>
#include <numgap/kernels/pair_plan.hpp>
#include <numgap/kernels/validate_pair.hpp>
#include <numgap/metric/concept.hpp>
#include <numgap/metric/evaluate_options.hpp>
#include <numgap/metric/evaluation.hpp>
#include <numgap/metric/metric_result.hpp>
#include <numgap/metric/metric_set.hpp>
#include <numgap/metric/side_stats.hpp>

namespace numgap {

namespace detail {

struct pass_partial {
    kernels::pair_moments moments{};
    std::vector<std::unique_ptr<reduction_state>> states;
};

// Below this many elements per thread, starting a thread costs more than it saves.
inline constexpr std::int64_t min_elements_per_thread = std::int64_t(1) << 16;

inline void run_range(const kernels::pair_plan& plan, std::int64_t begin, std::int64_t end,
                      const kernels::kernel_options& options, const kernels::kernel_table& table,
                      const std::vector<const erased_reduction*>& reductions, pass_partial& partial) {
    if (reductions.empty()) {
        kernels::accumulate_plan(plan, begin, end, table, options, partial.moments);
        return;
    }
    if (!plan.wide) {
        kernels::for_each_block<float>(plan, begin, end, [&](std::span<const float> r, std::span<const float> t) {
            table.block_f32(r.data(), t.data(), r.size(), options, partial.moments);
            for (std::size_t i = 0; i < reductions.size(); ++i) reductions[i]->accumulate(*partial.states[i], r, t);
        });
        return;
    }
    kernels::for_each_block<double>(plan, begin, end, [&](std::span<const double> r, std::span<const double> t) {
        table.block_f64(r.data(), t.data(), r.size(), options, partial.moments);
        alignas(64) float reference_block[kernels::flush_interval];
        alignas(64) float target_block[kernels::flush_interval];
        std::transform(r.begin(), r.end(), reference_block, [](double x) { return float(x); });
        std::transform(t.begin(), t.end(), target_block, [](double x) { return float(x); });
        const std::span<const float> reference_floats(reference_block, r.size()), target_floats(target_block, t.size());
        for (std::size_t i = 0; i < reductions.size(); ++i)
            reductions[i]->accumulate(*partial.states[i], reference_floats, target_floats);
    });
}

inline pass_partial run_fused_pass(const kernels::pair_plan& plan, const kernels::kernel_options& options,
                                   const std::vector<const erased_reduction*>& reductions, int threads) {
    const kernels::kernel_table table = kernels::active_kernels();
    const std::int64_t most_workers = std::max<std::int64_t>(1, plan.count / min_elements_per_thread);
    const int workers = int(std::min<std::int64_t>(threads, most_workers));
    if (workers == 1) {
        // Small tensors: no thread bookkeeping (its allocations cost as much
        // as the pass itself at a few thousand elements).
        pass_partial partial;
        for (const erased_reduction* reduction : reductions) partial.states.push_back(reduction->make_state());
        run_range(plan, 0, plan.count, options, table, reductions, partial);
        return partial;
    }
    std::vector<pass_partial> partials(static_cast<std::size_t>(workers));
    for (auto& partial : partials)
        for (const erased_reduction* reduction : reductions) partial.states.push_back(reduction->make_state());
    std::vector<std::exception_ptr> failures(static_cast<std::size_t>(workers));
    auto work = [&](int worker) {
        try {
            // Ranges start on chunk boundaries so the float32 partial sums, and
            // hence the results, do not depend on the thread count beyond
            // float64 rounding of the merge.
            auto boundary = [&](int w) {
                if (w == workers) return plan.count;
                const std::int64_t chunk = std::int64_t(kernels::flush_interval);
                return plan.count * w / workers / chunk * chunk;
            };
            const std::int64_t begin = boundary(worker), end = boundary(worker + 1);
            run_range(plan, begin, end, options, table, reductions, partials[std::size_t(worker)]);
        } catch (...) {
            failures[std::size_t(worker)] = std::current_exception();
        }
    };
    {
        std::vector<std::jthread> pool;
        pool.reserve(std::size_t(workers - 1));
        for (int worker = 1; worker < workers; ++worker) pool.emplace_back(work, worker);
        work(0);
    }
    for (const auto& failure : failures)
        if (failure) std::rethrow_exception(failure);
    for (std::size_t w = 1; w < partials.size(); ++w) {
        partials[0].moments.merge(partials[w].moments);
        for (std::size_t i = 0; i < reductions.size(); ++i)
            reductions[i]->merge(*partials[0].states[i], *partials[w].states[i]);
    }
    return std::move(partials[0]);
}

} // namespace detail

inline evaluation evaluate(const tensor_view& reference, const tensor_view& target, const metric_set& metrics,
                           const evaluate_options& options = {}) {
    if (options.threads < 1)
        throw error(error_kind::usage,
                    "evaluate_options::threads is " + std::to_string(options.threads) + "; it must be at least 1");
    validate_pair(reference, target);
    const auto& entries = metrics.entries();
    kernels::kernel_options kernel_options{};
    bool closeness_claimed = false;
    bool any_fused = false;
    std::vector<const detail::erased_reduction*> reductions;
    // Per entry: the index of its user reduction, or one of these.
    constexpr int from_fused_moments = -2, whole_tensor = -1;
    std::vector<int> source(entries.size(), whole_tensor);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& entry = entries[i];
        if (entry.from_moments) {
            const auto& wanted = entry.fused_options;
            // Only metrics that read the tolerances claim them: psnr_db and
            // max_rel need the closeness tier but must not make a later
            // allclose's own tolerances a clash.
            const bool claims_tolerance = (wanted.features & kernels::kernel_feature::closeness) != 0 &&
                                         wanted.uses_tolerance;
            const bool tolerance_clash = claims_tolerance && closeness_claimed &&
                                         (wanted.allclose_atol != kernel_options.allclose_atol ||
                                          wanted.allclose_rtol != kernel_options.allclose_rtol);
            if (!tolerance_clash) {
                kernel_options.features |= wanted.features;
                if (claims_tolerance && !closeness_claimed) {
                    kernel_options.allclose_atol = wanted.allclose_atol;
                    kernel_options.allclose_rtol = wanted.allclose_rtol;
                    closeness_claimed = true;
                }
                source[i] = from_fused_moments;
                any_fused = true;
                continue;
            }
        }
        if (entry.reduction) {
            source[i] = int(reductions.size());
            reductions.push_back(entry.reduction.get());
        }
    }
    if (options.side_statistics) kernel_options.features |= kernels::kernel_feature::side_statistics;

    evaluation result;
    result.count = reference.size();
    result.reference.count = result.count;
    result.target.count = result.count;
    detail::pass_partial pass;
    if (any_fused || !reductions.empty() || options.side_statistics) {
        kernels::pair_plan plan = kernels::make_pair_plan(reference, target);
        plan.widen_f32 = kernels::active_kernels().widen_f32;
        plan.transpose_f32 = kernels::active_kernels().transpose_f32;
        pass = detail::run_fused_pass(plan, kernel_options, reductions, options.threads);
    }
    result.metrics.reserve(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& entry = entries[i];
        double value;
        if (source[i] == from_fused_moments)
            value = entry.from_moments(pass.moments);
        else if (source[i] >= 0)
            value = reductions[std::size_t(source[i])]->finalize(*pass.states[std::size_t(source[i])]);
        else
            value = entry.whole_tensor(reference, target);
        result.metrics.push_back(make_metric_result(entry.name, value, entry.rule));
    }
    if (options.side_statistics) {
        result.reference = make_side_stats(pass.moments.reference, result.count);
        result.target = make_side_stats(pass.moments.target, result.count);
    }
    return result;
}

template <class... M>
    requires(sizeof...(M) > 0 && (!std::is_same_v<std::remove_cvref_t<M>, metric_set> && ...) &&
             (!std::is_same_v<std::remove_cvref_t<M>, evaluate_options> && ...))
std::array<metric_result, sizeof...(M)> evaluate(const tensor_view& reference, const tensor_view& target,
                                                 const M&... metrics) {
    static_assert((require_metric<M>() && ...));
    metric_set set;
    (set.add(metrics), ...);
    evaluation result = evaluate(reference, target, set, evaluate_options{1, false});
    std::array<metric_result, sizeof...(M)> out;
    std::move(result.metrics.begin(), result.metrics.end(), out.begin());
    return out;
}

} // namespace numgap
