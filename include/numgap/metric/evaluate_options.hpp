#pragma once
// evaluate_options: how evaluate() runs. threads: how many std::threads split
// the fused pass (>= 1; tensors below 65536 elements per thread use fewer, a
// small tensor stays single-threaded). side_statistics: compute the per-side
// statistics (min/max/mean/std, NaN/Inf counts) in the same pass (on AVX-512
// inside the moments loop: ~1.4-1.6x the metrics alone while the pair is in
// L1/L2, free once memory-bound; elsewhere two more L1-resident loops per
// block); turning it off leaves evaluation::reference / target with count set
// and everything else NaN / 0.
// Complexity: none. Throws: nothing.

namespace numgap {

struct evaluate_options {
    int threads = 1;
    bool side_statistics = true;
};

} // namespace numgap
