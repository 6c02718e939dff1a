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
// side_statistics: compute the per-side statistics (NaN / +Inf / -Inf counts,
// mean and std of the finite values) in the same pass, inside the moments
// loop on every vector ISA: two vector additions per step on top of nine.
// Turning it off leaves evaluation::reference / target with count set and
// everything else NaN / 0.
// side_min_max: also each side's min and max (implies side_statistics). Off
// by default: four more vector operations per step, which is what made the
// side statistics cost 1.4-1.6x the metrics alone in cache (AVX-512);
// without it min and max are NaN.
// See the README's "The path users call" for the measured costs.
// Complexity: none. Throws: nothing.
#include <cstddef>

namespace numgap {

struct evaluate_options {
    std::size_t threads = 1;
    bool side_statistics = true;
    bool side_min_max = false;

    // Whether the pass gathers per-side statistics at all.
    constexpr bool any_side_statistics() const noexcept { return side_statistics || side_min_max; }
};

} // namespace numgap
