// Pins allclose (metric/allclose.hpp): numpy's rule, settable tolerances.
#include <vector>

#include <doctest/doctest.h>

#include "test_support.hpp"

using namespace numgap_test;

TEST_SUITE("metric") {
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

TEST_CASE("allclose gives the same value whatever the order of max_rel / psnr_db around it, float32 and float64") {
    // max_rel and psnr_db need the closeness tier but not the tolerances; they
    // must not claim the defaults and push a later allclose onto the fallback
    // pass (which, for float64 pairs, would see float32-rounded values).
    SUBCASE("float64: |t - r| = 1e-7 is within rtol 1.1e-7 in float64 but not after rounding to float32") {
        const std::vector<double> r(37, 1.0), t(37, 1.0 + 1e-7);
        const numgap::tensor_view rv{std::span<const double>(r)}, tv{std::span<const double>(t)};
        const numgap::allclose tight{0, 1.1e-7};
        const auto first = numgap::evaluate(rv, tv, tight, numgap::max_rel{}, numgap::psnr_db{});
        const auto after_max_rel = numgap::evaluate(rv, tv, numgap::max_rel{}, tight);
        const auto after_psnr = numgap::evaluate(rv, tv, numgap::psnr_db{}, tight, numgap::max_rel{});
        CHECK(first[0].value == 0.0);
        CHECK(after_max_rel[1].value == 0.0);
        CHECK(after_psnr[1].value == 0.0);
        // The other metrics are unchanged by sharing the pass with allclose.
        CHECK(first[1].value == doctest::Approx(1e-7).epsilon(1e-6));
        CHECK(after_max_rel[0].value == first[1].value);
        CHECK(after_psnr[2].value == first[1].value);
        CHECK(after_psnr[0].value == first[2].value);
        // Two allclose with different tolerances still each get their own
        // (the second runs on the fallback pass, so its tolerance is chosen
        // far from float32 rounding).
        const auto two = numgap::evaluate(rv, tv, numgap::max_rel{}, numgap::allclose{0, 0.9e-7},
                                          numgap::allclose{0, 1e-3});
        CHECK(two[1].value == 1.0);
        CHECK(two[2].value == 0.0);
    }
    SUBCASE("float32: a one-ulp difference at 1 (1.19e-7) against rtol 1.1e-7 and 1.3e-7") {
        const std::vector<float> r(37, 1.0f), t(37, std::nextafter(1.0f, 2.0f));
        const numgap::tensor_view rv{std::span<const float>(r)}, tv{std::span<const float>(t)};
        for (const double rtol : {1.1e-7, 1.3e-7}) {
            CAPTURE(rtol);
            const double expected = rtol < 1.19e-7 ? 1.0 : 0.0;
            const numgap::allclose tolerance{0, rtol};
            CHECK(numgap::evaluate(rv, tv, tolerance, numgap::max_rel{})[0].value == expected);
            CHECK(numgap::evaluate(rv, tv, numgap::max_rel{}, tolerance)[1].value == expected);
            CHECK(numgap::evaluate(rv, tv, numgap::psnr_db{}, tolerance)[1].value == expected);
        }
    }
}
} // TEST_SUITE("metric")
