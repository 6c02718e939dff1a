#pragma once
// Helpers shared by the metric tests: evaluate one metric on float vectors.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
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

// A tier-2 user metric riding the fused pass: the sum of the target.
struct sum_of_target {
    static constexpr std::string_view name = "sum_of_target";
    static constexpr numgap::direction better = numgap::direction::higher_is_better;
    static constexpr std::optional<numgap::pass_rule> default_rule = std::nullopt;
    using state_type = double;
    void accumulate(state_type& s, std::span<const float>, std::span<const float> t) const {
        for (const float x : t) s += double(x);
    }
    void merge(state_type& s, const state_type& o) const { s += o; }
    double finalize(const state_type& s) const { return s; }
};

inline bool same_value(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// The same double to the bit: NaN payloads and the sign of zero included.
inline bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

} // namespace numgap_test
