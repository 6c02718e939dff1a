// Pins max_abs and max_rel (metric/max_abs.hpp, metric/max_rel.hpp).
#include <doctest/doctest.h>

#include "test_support.hpp"

using namespace numgap_test;

TEST_SUITE("metric") {
TEST_CASE("max_abs is the exact largest |r - t| and is NaN when any difference is NaN") {
    CHECK(evaluate_one<numgap::max_abs>({1, 2, 3}, {1.5f, 2, -1}).value == 4.0);
    CHECK(evaluate_one<numgap::max_abs>({0, 0}, {0, 0}).value == 0.0);
    const auto with_nan = evaluate_one<numgap::max_abs>({1, 2, nan_f}, {1, 200, 3});
    CHECK(std::isnan(with_nan.value));
    CHECK_FALSE(with_nan.passed);
    CHECK(std::isnan(evaluate_one<numgap::max_abs>({inf_f}, {inf_f}).value));
    CHECK(evaluate_one<numgap::max_abs>({inf_f, 0}, {1, 0}).value == std::numeric_limits<double>::infinity());
    CHECK(std::isnan(numgap::max_abs{}.finalize({})));
}

TEST_CASE("max_abs with no rule passes any non-NaN value") {
    CHECK(evaluate_one<numgap::max_abs>({0}, {1e30f}).passed);
}

TEST_CASE("max_rel divides by max(|r|, FLT_MIN) and is NaN when a difference is NaN") {
    CHECK(evaluate_one<numgap::max_rel>({2, 4}, {1, 5}).value == 0.5);
    CHECK(evaluate_one<numgap::max_rel>({0}, {1e-38f}).value ==
          doctest::Approx(double(1e-38f / std::numeric_limits<float>::min())));
    CHECK(evaluate_one<numgap::max_rel>({0, 1}, {0, 1}).value == 0.0);
    CHECK(std::isnan(evaluate_one<numgap::max_rel>({nan_f, 1}, {0, 1}).value));
}
} // TEST_SUITE("metric")
