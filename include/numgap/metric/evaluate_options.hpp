#pragma once
// evaluate_options: how evaluate() runs. threads: how many std::threads split
// the fused pass (>= 1; tensors below 65536 elements per thread use fewer, a
// small tensor stays single-threaded). side_statistics: compute the per-side
// statistics (min/max/mean/std, NaN/Inf counts) in the same pass; turning it
// off saves one L1-resident loop per block and leaves evaluation::reference /
// target with count set and everything else NaN / 0.
// Complexity: none. Throws: nothing.

namespace numgap {

struct evaluate_options {
    int threads = 1;
    bool side_statistics = true;
};

} // namespace numgap
