#pragma once
// A float32 pair for the accuracy tests: the reference normal(0.5, 2), the
// target the reference times (1 + 1e-3 normal): 1 - cosine ~5e-7, the
// regime where a naive 1 - dot/(|r||t|) is useless.
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace numgap_test {

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

} // namespace numgap_test
