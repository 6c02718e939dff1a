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
// side_statistics: compute the per-side statistics (min/max/mean/std,
// NaN/Inf counts) in the same pass, inside the moments loop on every vector
// ISA: 1.4-1.6x the metrics alone while the pair is in L1/L2 on AVX-512
// (Intel), 1.5-2.1x on AVX2 (Zen 3), free once memory-bound; turning it
// off leaves evaluation::reference / target with count set and everything
// else NaN / 0.
// Complexity: none. Throws: nothing.
#include <cstddef>

namespace numgap {

struct evaluate_options {
    std::size_t threads = 1;
    bool side_statistics = true;
};

} // namespace numgap
