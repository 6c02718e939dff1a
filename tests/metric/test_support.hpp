#pragma once
// Helpers shared by the metric tests: evaluate one metric on float vectors.
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include <numgap/metric.hpp>

namespace numgap_test {

inline constexpr float nan_f = std::numeric_limits<float>::quiet_NaN();
inline constexpr float inf_f = std::numeric_limits<float>::infinity();

template <class M>
numgap::metric_result evaluate_one(const std::vector<float>& reference, const std::vector<float>& target, M m = {}) {
    const numgap::tensor_view r{std::span<const float>(reference)}, t{std::span<const float>(target)};
    return numgap::evaluate(r, t, m)[0];
}

// Also runs the metric through its standalone reduction interface, which
// must agree with the fused evaluate() path.
template <class M>
double standalone(const std::vector<float>& reference, const std::vector<float>& target, M m = {}) {
    typename M::state_type state{};
    m.accumulate(state, reference, target);
    return m.finalize(state);
}

inline bool same_value(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

} // namespace numgap_test
