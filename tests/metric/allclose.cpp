// Pins allclose (metric/allclose.hpp): numpy's rule, settable tolerances.
#include <doctest/doctest.h>

#include "test_support.hpp"

using namespace numgap_test;

TEST_CASE("allclose counts elements outside atol + rtol * |r|, numpy defaults, rule == 0") {
    CHECK(numgap::allclose{}.atol == 1e-8);
    CHECK(numgap::allclose{}.rtol == 1e-5);
    CHECK(*numgap::allclose::default_rule == numgap::pass_rule{numgap::comparison::eq, 0});
    // |d| = 1e-4 vs tol 1e-8 + 1e-5*100 = 1.00000001e-3: close. |d| = 1 vs 1e-5: not close.
    const auto result = evaluate_one<numgap::allclose>({100, 1, 5, 7}, {100.0001f, 2, 5, 7});
    CHECK(result.value == 0.25);
    CHECK_FALSE(result.passed);
    CHECK(evaluate_one<numgap::allclose>({1, 2}, {1, 2}).passed);
}

TEST_CASE("allclose tolerances are settable and two different allclose run in one evaluate") {
    const std::vector<float> r = {1, 2, 3, 4}, t = {1.05f, 2.5f, 3, 4};
    CHECK(evaluate_one(r, t, numgap::allclose{0.1, 0}).value == 0.25);
    CHECK(evaluate_one(r, t, numgap::allclose{1.0, 0}).value == 0.0);
    const numgap::tensor_view rv{std::span<const float>(r)}, tv{std::span<const float>(t)};
    const auto both = numgap::evaluate(rv, tv, numgap::allclose{0.1, 0}, numgap::allclose{1.0, 0}, numgap::allclose{});
    CHECK(both[0].value == 0.25);
    CHECK(both[1].value == 0.0);
    CHECK(both[2].value == 0.5);
}

TEST_CASE("allclose: equal infinities are close, NaN makes it NaN and fail") {
    CHECK(evaluate_one<numgap::allclose>({inf_f, 1}, {inf_f, 1}).value == 0.0);
    CHECK(evaluate_one<numgap::allclose>({inf_f, 1}, {-inf_f, 1}).value == 0.5);
    const auto with_nan = evaluate_one<numgap::allclose>({nan_f, 1}, {1, 1});
    CHECK(std::isnan(with_nan.value));
    CHECK_FALSE(with_nan.passed);
}
