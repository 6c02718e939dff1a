#pragma once
// What the fused kernel's accuracy tests share: a perturbed float32 pair, the
// relative error against the oracle, and 1 - cosine from the fused sums.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include <numgap/kernels/fused/pair_moments.hpp>

namespace numgap_test {

// The reference normal(0.5, 2), the target the reference times
// (1 + 1e-3 normal): 1 - cosine ~5e-7, the regime where a naive
// 1 - dot/(|r||t|) is useless.
inline std::pair<std::vector<float>, std::vector<float>> perturbed_pair(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 generator(seed);
    std::normal_distribution<float> normal(0.5f, 2.0f);
    std::vector<float> r(n), t(n);
    for (std::size_t i = 0; i < n; ++i) {
        r[i] = normal(generator);
        t[i] = r[i] * (1.0f + 1e-3f * normal(generator));
    }
    return {std::move(r), std::move(t)};
}

inline double relative_error(long double value, long double expected) {
    return double(std::fabs((value - expected) / expected));
}

// 1 - cosine as evaluate() computes it from the fused sums.
inline double one_minus_cosine(const numgap::kernels::pair_moments& m) {
    const double norm_r = std::sqrt(m.sum_squared_reference), norm_t = std::sqrt(m.sum_squared_target);
    const double norm_gap = m.sum_diff_times_sum / (norm_r + norm_t);
    return (m.sum_squared_diff - norm_gap * norm_gap) / (2 * norm_r * norm_t);
}

} // namespace numgap_test
