#pragma once
// evaluate_options: how evaluate() runs.
// threads: how many threads split the fused pass, by numgap's one rule
// (core/parallel_for.hpp: 0 = std::thread::hardware_concurrency(), 1 = the
// calling thread only, N = at most N); each thread gets at least 65536
// elements, so a small tensor stays on the calling thread whatever is asked.
// Default 1: a caller comparing many pairs parallelises over pairs instead.
// Migration note: this was an `int` that threw below 1; it is now the
// std::size_t that compare_options::threads also is, and 0 means every core.
// Brace-initialising it from an `int` variable ({n, true}) is a narrowing
// error; write evaluate_options{std::size_t(n), true}.
// side_counts: count each side's NaN, +Inf and -Inf values. On by default:
// it costs no operation in the moments loop (a chunk whose sum of squares
// is finite holds none; only a chunk that may is read again).
// side_statistics: also the mean and std of each side's finite values, in
// the same pass, inside the moments loop on every vector ISA: two vector
// additions per step on top of nine. Off by default (on until 2026-12):
// they cost 1.08-1.38x the metrics alone at 2^10-2^20 on AMD Zen 4 and
// Zen 5 (1.37-1.38x at 2^16), where the loop is bound by its vector
// operations.
// side_min_max: also each side's min and max (implies side_statistics). Off
// by default: four more vector operations per step, which is what made the
// side statistics cost 1.4-1.6x the metrics alone in cache (AVX-512).
// What is not computed stays NaN in evaluation::reference / target (the
// counts 0 when side_counts is off too); count is always set.
// See the README's "The path users call" for the measured costs.
// Complexity: none. Throws: nothing.
#include <cstddef>

#include <numgap/metric/side_stats.hpp>

namespace numgap {

struct evaluate_options {
    std::size_t threads = 1;
    bool side_statistics = false;
    bool side_min_max = false;
    bool side_counts = true;

    // Whether the pass gathers anything per side (the counts alone included).
    constexpr bool any_side_statistics() const noexcept { return side_counts || side_statistics || side_min_max; }
    // What it gathers.
    constexpr side_detail side_detail_asked() const noexcept {
        return side_min_max ? side_detail::min_max : side_statistics ? side_detail::mean_std : side_detail::counts;
    }
};

} // namespace numgap
