#pragma once
// evaluate: computes metrics on one (reference, target) pair.
//
// Runtime form: evaluate(reference, target, metric_set, options) validates the
// pair once (numgap::error naming the tensors and the reason), then makes ONE
// pass over both tensors in reference order through the fused SIMD kernel
// chosen by kernels::active_kernels(), serving every sum-based built-in and
// the per-side statistics at once (kernels::accumulate_views: two dense
// float32 or float64 views go to the kernel as they are; otherwise a plan:
// contiguous data is read where it lies, float16 / bfloat16 / quantized
// integers widened in registers, other layouts go through L1 blocks of
// <= 2048 elements). User
// reduction metrics receive float32 blocks, so with one in the set every
// block is converted once and handed to both the kernel and accumulate(). The pass is split over
// parallel_for over options.threads threads (core/parallel_for.hpp's rule: 0 =
// every core, 1 = the calling thread; each thread gets >= 65536 elements),
// whose partial states
// merge. Whole-tensor metrics (kl_div, topk, user tier-1 metrics) run after,
// each on its own. Results keep the set's order; rules are the override given
// to metric_set::add, else the metric's default.
// float64 pairs are processed in float64 blocks (user reduction metrics still
// receive float32 copies of each block, as their signature promises).
//
// Compile-time form: evaluate(reference, target, m1, m2, ...) takes metric
// objects directly and returns std::array<metric_result, N>; it runs the same
// single-threaded engine without side statistics (no counts either). When
// every metric is finalised from the fused moments (the sum-based built-ins,
// fused_builtin.hpp) and their tolerances agree, it calls the kernel itself:
// no metric_set, allocation or type-erased call, the values bit for bit the
// runtime form's (a metric_set built per call cost ~3x the whole pass at 2^10
// elements). Any other mix builds a metric_set per call.
// The default evaluate_options gather each side's NaN / +-Inf counts only
// (evaluate_options.hpp says what the other side statistics cost).
//
// Complexity: O(n) for the fused pass; row metrics O(n log k). Allocation:
// per call, not per element: none with built-in sum metrics on one thread
// (results kept inside the evaluation up to inline_metric_results metrics;
// names as short as the built-ins' fit inside a std::string in libstdc++,
// libc++ and MSVC's library); user reduction states, threads and row-metric
// blocks of at most 1 MiB (see numgap/kernels/rows/for_each_row.hpp)
// otherwise.
// Throws: numgap::error for invalid input; whatever a user metric throws
// (rethrown on the calling thread); std::bad_alloc. A thread that cannot
// start is no error (its share runs on the calling thread).
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/parallel_for.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/dispatch/dispatch.hpp>
#include <numgap/kernels/fused/kernel_options.hpp>
#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/kernels/plan/for_each_block.hpp>
#include <numgap/kernels/plan/pair_plan.hpp>
#include <numgap/kernels/plan/validate_pair.hpp>
#include <numgap/kernels/table/accumulate_plan.hpp>
#include <numgap/kernels/table/accumulate_views.hpp>
#include <numgap/metric/concept.hpp>
#include <numgap/metric/evaluate_options.hpp>
#include <numgap/metric/evaluation.hpp>
#include <numgap/metric/fused_builtin.hpp>
#include <numgap/metric/metric_result.hpp>
#include <numgap/metric/metric_set.hpp>
#include <numgap/metric/pass_layout.hpp>
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

// Folds `from` into `into`: how threads' partial states meet, and how the
// pieces of a segmented tensor do (evaluate_segments.hpp).
inline void merge_partial(pass_partial& into, const pass_partial& from,
                          const std::vector<const erased_reduction*>& reductions) {
    into.moments.merge(from.moments);
    for (std::size_t i = 0; i < reductions.size(); ++i) reductions[i]->merge(*into.states[i], *from.states[i]);
}

inline pass_partial run_fused_pass(const kernels::pair_plan& plan, const kernels::kernel_options& options,
                                   const std::vector<const erased_reduction*>& reductions, std::size_t threads) {
    const kernels::kernel_table& table = kernels::active_kernels();
    const std::int64_t most_workers = std::max<std::int64_t>(1, plan.count / min_elements_per_thread);
    const std::size_t workers = std::min(resolve_threads(threads), static_cast<std::size_t>(most_workers));
    if (workers == 1) {
        // Small tensors: no thread bookkeeping (its allocations cost as much
        // as the pass itself at a few thousand elements).
        pass_partial partial;
        for (const erased_reduction* reduction : reductions) partial.states.push_back(reduction->make_state());
        run_range(plan, 0, plan.count, options, table, reductions, partial);
        return partial;
    }
    std::vector<pass_partial> partials(workers);
    for (auto& partial : partials)
        for (const erased_reduction* reduction : reductions) partial.states.push_back(reduction->make_state());
    // Ranges start on chunk boundaries so the float32 partial sums, and hence
    // the results, do not depend on the thread count beyond float64 rounding
    // of the merge.
    auto boundary = [&](std::size_t worker) {
        if (worker == workers) return plan.count;
        const std::int64_t chunk = std::int64_t(kernels::flush_interval);
        return plan.count * std::int64_t(worker) / std::int64_t(workers) / chunk * chunk;
    };
    parallel_for(workers, [&](std::size_t worker) {
        run_range(plan, boundary(worker), boundary(worker + 1), options, table, reductions, partials[worker]);
    });
    for (std::size_t w = 1; w < partials.size(); ++w) merge_partial(partials[0], partials[w], reductions);
    return std::move(partials[0]);
}

// What the kernel computes for `layout` with `options`' side statistics.
inline kernels::kernel_options pass_kernel_options(const pass_layout& layout,
                                                   const evaluate_options& options) noexcept {
    kernels::kernel_options kernel_options = layout.kernel_options;
    if (options.side_counts) kernel_options.features |= kernels::kernel_feature::side_counts;
    if (options.side_statistics) kernel_options.features |= kernels::kernel_feature::side_statistics;
    if (options.side_min_max) kernel_options.features |= kernels::kernel_feature::side_min_max;
    return kernel_options;
}

// Whether any metric or side statistic needs the fused pass at all.
inline bool needs_fused_pass(const pass_layout& layout, const evaluate_options& options) noexcept {
    return layout.any_fused || !layout.reductions.empty() || options.any_side_statistics();
}

// The fused pass over one validated pair into `pass` (fresh): moments and
// reduction states, as many threads as options.threads allows, nothing when
// no metric needs it. Allocates nothing for built-in sum metrics on one
// thread. Filled in place, not returned: copying the moments just after the
// kernel stored them cost ~5% of a call at 2^10 (the wider loads of the copy
// wait for the kernel's 8-byte stores to retire).
inline void fused_pass(const tensor_view& reference, const tensor_view& target, const pass_layout& layout,
                       const evaluate_options& options, const kernels::kernel_table& table, pass_partial& pass) {
    NUMGAP_ASSERT(pass.moments.count == 0 && pass.states.empty());
    if (!needs_fused_pass(layout, options)) return;
    const kernels::kernel_options kernel_options = pass_kernel_options(layout, options);
    if (layout.reductions.empty() && (options.threads == 1 || reference.size() < 2 * min_elements_per_thread)) {
        kernels::accumulate_views(reference, target, table, kernel_options, pass.moments);
        return;
    }
    const kernels::pair_plan plan = kernels::make_pair_plan(reference, target, table);
    pass = run_fused_pass(plan, kernel_options, layout.reductions, options.threads);
}

// Metric i's value from a finished pass; whole-tensor metrics through
// `whole_tensor(entry)`, which the caller supplies (one pair, or the pieces of
// a segmented tensor).
template <class WholeTensor>
double metric_value(const metric_set& metrics, std::size_t i, const pass_partial& pass, WholeTensor&& whole_tensor) {
    const pass_layout& layout = detail::metric_set_access::layout(metrics);
    const metric_entry& entry = detail::metric_set_access::entries(metrics)[i];
    const int source = layout.sources[i];
    if (source == pass_layout::from_fused_moments)
        return entry.from_moments_of_type ? entry.from_moments_of_type(pass.moments) : entry.from_moments(pass.moments);
    if (source >= 0) return layout.reductions[std::size_t(source)]->finalize(*pass.states[std::size_t(source)]);
    return whole_tensor(entry);
}

// The single-call engine behind evaluate() and prepared_metric_set: validates
// the pair, makes the fused pass with `table`'s kernels (threads as
// options.threads allows), then calls finish(value_of), where value_of(i)
// computes metric i's value (finish calls it once per metric, in the set's
// order), and writes the side statistics where asked. Allocates nothing for a
// set of built-in sum metrics on one thread: what each metric needs was
// decided when it was added (pass_layout); where the values go is finish's.
template <class Finish>
void evaluate_pass(const tensor_view& reference, const tensor_view& target, const metric_set& metrics,
                   const evaluate_options& options, const kernels::kernel_table& table, side_stats* reference_stats,
                   side_stats* target_stats, Finish&& finish) {
    validate_pair(reference, target);
    pass_partial pass;
    fused_pass(reference, target, detail::metric_set_access::layout(metrics), options, table, pass);
    finish([&](std::size_t i) {
        return metric_value(metrics, i, pass,
                            [&](const metric_entry& entry) { return entry.whole_tensor(reference, target); });
    });
    if (options.any_side_statistics()) {
        const std::int64_t elements = reference.size();
        if (reference_stats != nullptr)
            *reference_stats = make_side_stats(pass.moments.reference, elements, options.side_detail_asked());
        if (target_stats != nullptr)
            *target_stats = make_side_stats(pass.moments.target, elements, options.side_detail_asked());
    }
}

} // namespace detail

inline evaluation evaluate(const tensor_view& reference, const tensor_view& target, const metric_set& metrics,
                           const evaluate_options& options = {}) {
    evaluation result;
    result.count = reference.size();
    result.reference.count = result.count;
    result.target.count = result.count;
    const auto& entries = detail::metric_set_access::entries(metrics);
    // Inside the evaluation for up to inline_metric_results metrics, so a
    // call on built-in metrics allocates nothing (a heap block of results
    // and its release were ~15% of a call at 2^10 elements on Zen 4). Each
    // result is built where it lies (append_generated): a temporary per
    // metric cost ~4 ns each, resize-then-assign ~3 ns more a call (Zen 5).
    detail::evaluate_pass(reference, target, metrics, options, kernels::active_kernels(), &result.reference,
                          &result.target, [&](const auto& value_of) {
                              result.metrics.append_generated(entries.size(), [&](std::size_t i) {
                                  return make_metric_result(entries[i].name, value_of(i), entries[i].rule);
                              });
                          });
    return result;
}

template <class... M>
    requires(sizeof...(M) > 0 && (!std::is_same_v<std::remove_cvref_t<M>, metric_set> && ...) &&
             (!std::is_same_v<std::remove_cvref_t<M>, evaluate_options> && ...))
std::array<metric_result, sizeof...(M)> evaluate(const tensor_view& reference, const tensor_view& target,
                                                 const M&... metrics) {
    static_assert((require_metric<M>() && ...));
    if constexpr (((metric<M> && detail::fused_metric<M>)&&...)) {
        kernels::kernel_options options{};
        bool tolerances_claimed = false;
        if ((detail::merge_fused_options(options, tolerances_claimed, metrics.kernel_options()) && ...)) {
            validate_pair(reference, target);
            kernels::pair_moments moments;
            kernels::accumulate_views(reference, target, kernels::active_kernels(), options, moments);
            return {make_metric_result(metric_traits<M>::name, double(metrics.from_moments(moments)),
                                       metric_traits<M>::default_rule)...};
        }
    }
    metric_set set;
    (set.add(metrics), ...);
    evaluation result = evaluate(reference, target, set,
                                 evaluate_options{.threads = 1, .side_statistics = false, .side_counts = false});
    std::array<metric_result, sizeof...(M)> out;
    std::move(result.metrics.begin(), result.metrics.end(), out.begin());
    return out;
}

} // namespace numgap
