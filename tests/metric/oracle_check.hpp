#pragma once
// Shared by the metric tests that check whole evaluations against the
// long-double oracle (kernels/scalar_reference.hpp): random pairs, every
// built-in in one set, and the tolerances each metric's header states.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/kernels/scalar_reference.hpp>
#include <numgap/metric.hpp>

#include "test_support.hpp"

namespace numgap_test {

struct random_pair {
    std::vector<float> reference, target;
};

inline random_pair make_pair(std::size_t n, unsigned seed, float noise = 0.01f) {
    std::mt19937 generator(seed);
    std::normal_distribution<float> normal(0.1f, 1.0f);
    random_pair pair{std::vector<float>(n), std::vector<float>(n)};
    for (std::size_t i = 0; i < n; ++i) {
        pair.reference[i] = normal(generator);
        pair.target[i] = pair.reference[i] + noise * normal(generator);
    }
    return pair;
}

inline bool close_value(double a, double b) {
    return same_value(a, b) || std::fabs(a - b) <= 1e-6 * std::max(std::fabs(a), std::fabs(b));
}

inline numgap::metric_set all_builtins() {
    numgap::metric_set set;
    for (const std::string_view name : numgap::builtin_metric_names()) set.add_builtin(name);
    return set;
}

// with_min_max: whether e was evaluated with evaluate_options::side_min_max
// (else min and max must be NaN). row_length: that of kl_div and topk, or 0
// for a set without them (sum metrics only).
inline void check_against_oracle(const numgap::evaluation& e, const std::vector<float>& r, const std::vector<float>& t,
                                 std::size_t row_length, bool with_min_max) {
    const auto oracle = numgap::kernels::scalar_reference<float>(r, t);
    auto value = [&](std::string_view name) {
        const auto* result = e.find(name);
        REQUIRE(result != nullptr);
        return result->value;
    };
    CHECK(1.0 - value("cosine") == doctest::Approx(double(oracle.one_minus_cosine())).epsilon(1e-6));
    CHECK(value("atol") == doctest::Approx(double(oracle.atol())).epsilon(1e-7));
    CHECK(value("mse") == doctest::Approx(double(oracle.mse())).epsilon(1e-7));
    CHECK(value("max_abs") == double(float(oracle.max_abs())));
    CHECK(value("l1") == doctest::Approx(double(oracle.l1())).epsilon(1e-7));
    CHECK(value("snr_db") == doctest::Approx(double(oracle.snr_db())).epsilon(1e-7));
    CHECK(value("psnr_db") == doctest::Approx(double(oracle.psnr_db())).epsilon(1e-7));
    CHECK(value("norm_l2") == doctest::Approx(double(oracle.norm_l2())).epsilon(1e-7));
    CHECK(value("max_rel") == doctest::Approx(double(oracle.max_rel())).epsilon(3e-7));
    CHECK(value("allclose") == doctest::Approx(double(oracle.allclose())).epsilon(1e-12));
    if (row_length != 0) {
        CHECK(value("kl_div") ==
              doctest::Approx(double(numgap::kernels::kl_div_reference<float>(r, t, row_length))).epsilon(1e-9));
        CHECK(value("topk") == double(numgap::kernels::topk_reference<float>(r, t, row_length, 1)));
    }
    if (with_min_max) {
        CHECK(e.reference.min == double(oracle.reference.min));
        CHECK(e.reference.max == double(oracle.reference.max));
        CHECK(e.target.min == double(oracle.target.min));
        CHECK(e.target.max == double(oracle.target.max));
    } else {
        CHECK(std::isnan(e.reference.min));
        CHECK(std::isnan(e.target.max));
    }
    // The mean of zero-centred data cancels; its error is bounded relative to the spread.
    CHECK(std::fabs(e.reference.mean - double(oracle.reference.mean)) <= 1e-7 * double(oracle.reference.std));
    CHECK(e.target.std == doctest::Approx(double(oracle.target.std)).epsilon(1e-7));
    CHECK(e.count == std::int64_t(r.size()));
}

} // namespace numgap_test
