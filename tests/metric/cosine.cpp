// Pins cosine's documented contract (metric/cosine.hpp).
#include <vector>

#include <doctest/doctest.h>

#include <numgap/kernels/scalar_reference.hpp>

#include "test_support.hpp"

using namespace numgap_test;

TEST_SUITE("metric") {
TEST_CASE("cosine describes itself: higher is better, default rule >= 0.99") {
    static_assert(numgap::reduction_metric<numgap::cosine> && numgap::metric<numgap::cosine>);
    CHECK(numgap::cosine::name == "cosine");
    CHECK(numgap::cosine::better == numgap::direction::higher_is_better);
    CHECK(*numgap::cosine::default_rule == numgap::pass_rule{numgap::comparison::ge, 0.99});
}

TEST_CASE("cosine edge cases: zero vectors, scaling, opposite, NaN, Inf, empty state") {
    CHECK(evaluate_one<numgap::cosine>({0, 0, 0}, {0, 0, 0}).value == 1.0);
    CHECK(evaluate_one<numgap::cosine>({0, 0, 0}, {1, 2, 3}).value == 0.0);
    CHECK(evaluate_one<numgap::cosine>({1, 2, 3}, {0, 0, 0}).value == 0.0);
    CHECK(evaluate_one<numgap::cosine>({1, 2, 3}, {2, 4, 6}).value == doctest::Approx(1.0).epsilon(1e-15));
    CHECK(evaluate_one<numgap::cosine>({1, 2, 3}, {-1, -2, -3}).value == doctest::Approx(-1.0).epsilon(1e-15));
    CHECK(evaluate_one<numgap::cosine>({1, 0}, {0, 1}).value == doctest::Approx(0.0));
    const auto with_nan = evaluate_one<numgap::cosine>({1, nan_f, 3}, {1, 2, 3});
    CHECK(std::isnan(with_nan.value));
    CHECK_FALSE(with_nan.passed);
    CHECK(std::isnan(evaluate_one<numgap::cosine>({1, inf_f, 3}, {1, 2, 3}).value));
    CHECK(std::isnan(numgap::cosine{}.finalize({})));
}

TEST_CASE("cosine::distance keeps 1 - cosine accurate for a pure scaling error") {
    // t = r * (1 + 1e-4): cosine is exactly 1, yet the naive formula's rounding
    // noise (~1e-16) must not appear; distance must be ~0 and never negative.
    std::vector<float> r(4096), t(4096);
    for (std::size_t i = 0; i < r.size(); ++i) {
        r[i] = float(std::sin(double(i)));
        t[i] = r[i] * 1.0001f;
    }
    numgap::kernels::pair_moments m;
    numgap::kernels::accumulate_pair_block(numgap::kernels::scalar_arch{}, r.data(), t.data(), r.size(), {}, m);
    const auto oracle = numgap::kernels::scalar_reference<float>(r, t);
    CHECK(numgap::cosine::distance(m) >= 0.0);
    CHECK(numgap::cosine::distance(m) == doctest::Approx(double(oracle.one_minus_cosine())).epsilon(1e-3).scale(1e-12));
}

TEST_CASE("cosine passes at 0.995 and fails at 0.98 under its default rule; an override replaces it") {
    std::vector<float> r = {1, 0}, t_close = {1, 0.1f}, t_far = {1, 0.21f};
    CHECK(evaluate_one<numgap::cosine>(r, t_close).passed);
    CHECK_FALSE(evaluate_one<numgap::cosine>(r, t_far).passed);
    numgap::metric_set set;
    set.add(numgap::cosine{}, numgap::pass_rule{numgap::comparison::ge, 0.9});
    const numgap::tensor_view rv{std::span<const float>(r)}, tv{std::span<const float>(t_far)};
    const auto result = numgap::evaluate(rv, tv, set);
    CHECK(result.metrics[0].passed);
    CHECK(result.metrics[0].rule->value == 0.9);
}
} // TEST_SUITE("metric")
