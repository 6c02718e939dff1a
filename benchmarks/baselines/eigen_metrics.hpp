#pragma once
// The Eigen baseline of benchmarks/kernels.cpp: cosine, atol, mse and max_abs
// of two float32 vectors the way an Eigen user writes them (cosine as
// dot / (norm * norm), mean and max of |a - b|, squaredNorm() / n), compiled
// in its own translation unit with -march=native so Eigen vectorises with
// the widest instructions of the machine (the benchmark itself is portable).
// Only built when CMake finds Eigen3 (NUMGAP_BENCHMARK_EIGEN).
#include <cstddef>

namespace numgap_benchmark {

struct eigen_values {
    double cosine, atol, mse, max_abs;
};

eigen_values eigen_metrics(const float* reference, const float* target, std::size_t n);

} // namespace numgap_benchmark
