// Pins atol, mse, l1, snr_db, psnr_db, norm_l2 edge cases as stated in their
// headers (metric/atol.hpp, mse.hpp, l1.hpp, snr_db.hpp, psnr_db.hpp, norm_l2.hpp).
#include <cmath>
#include <cstddef>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/kernels/dispatch/dispatch.hpp>

#include "test_support.hpp"

using namespace numgap_test;

TEST_SUITE("metric") {
TEST_CASE("descriptors of the sum-based metrics match the issue's table") {
    CHECK(*numgap::atol::default_rule == numgap::pass_rule{numgap::comparison::lt, 0.1});
    CHECK(*numgap::mse::default_rule == numgap::pass_rule{numgap::comparison::lt, 0.01});
    CHECK(*numgap::snr_db::default_rule == numgap::pass_rule{numgap::comparison::ge, 20});
    CHECK(*numgap::psnr_db::default_rule == numgap::pass_rule{numgap::comparison::ge, 30});
    CHECK_FALSE(numgap::l1::default_rule.has_value());
    CHECK_FALSE(numgap::norm_l2::default_rule.has_value());
    CHECK_FALSE(numgap::max_abs::default_rule.has_value());
    CHECK_FALSE(numgap::max_rel::default_rule.has_value());
    CHECK(numgap::atol::better == numgap::direction::lower_is_better);
    CHECK(numgap::snr_db::better == numgap::direction::higher_is_better);
    CHECK(numgap::psnr_db::better == numgap::direction::higher_is_better);
}

TEST_CASE("hand-computed values: r = {1, 2, 3, 4}, t = {1, 2, 3, 6}") {
    const std::vector<float> r = {1, 2, 3, 4}, t = {1, 2, 3, 6};
    CHECK(evaluate_one<numgap::atol>(r, t).value == 0.5);
    CHECK(evaluate_one<numgap::mse>(r, t).value == 1.0);
    CHECK(evaluate_one<numgap::l1>(r, t).value == 2.0);
    CHECK(evaluate_one<numgap::snr_db>(r, t).value == doctest::Approx(10 * std::log10(30.0 / 4.0)));
    CHECK(evaluate_one<numgap::psnr_db>(r, t).value == doctest::Approx(20 * std::log10(4.0) - 10 * std::log10(1.0)));
    CHECK(evaluate_one<numgap::norm_l2>(r, t).value == doctest::Approx(std::sqrt(4.0 / 30.0)));
    CHECK_FALSE(evaluate_one<numgap::atol>(r, t).passed);
}

TEST_CASE("identical inputs: zero errors, infinite SNR/PSNR, all pass") {
    const std::vector<float> r = {1, -2, 3};
    CHECK(evaluate_one<numgap::atol>(r, r).value == 0);
    CHECK(evaluate_one<numgap::mse>(r, r).value == 0);
    CHECK(evaluate_one<numgap::l1>(r, r).value == 0);
    CHECK(evaluate_one<numgap::norm_l2>(r, r).value == 0);
    CHECK(evaluate_one<numgap::snr_db>(r, r).value == std::numeric_limits<double>::infinity());
    CHECK(evaluate_one<numgap::psnr_db>(r, r).value == std::numeric_limits<double>::infinity());
    CHECK(evaluate_one<numgap::snr_db>(r, r).passed);
}

TEST_CASE("zero vectors: both zero is perfect; zero reference with non-zero target is -Inf / +Inf") {
    const std::vector<float> zero = {0, 0, 0}, ones = {1, 1, 1};
    CHECK(evaluate_one<numgap::snr_db>(zero, zero).value == std::numeric_limits<double>::infinity());
    CHECK(evaluate_one<numgap::norm_l2>(zero, zero).value == 0);
    CHECK(evaluate_one<numgap::snr_db>(zero, ones).value == -std::numeric_limits<double>::infinity());
    CHECK(evaluate_one<numgap::psnr_db>(zero, ones).value == -std::numeric_limits<double>::infinity());
    CHECK(evaluate_one<numgap::norm_l2>(zero, ones).value == std::numeric_limits<double>::infinity());
    CHECK_FALSE(evaluate_one<numgap::snr_db>(zero, ones).passed);
}

TEST_CASE("a NaN on either side makes every sum-based metric NaN and fail") {
    const std::vector<float> r = {1, 2, 3}, t = {1, nan_f, 3};
    for (const auto& result : {evaluate_one<numgap::atol>(r, t), evaluate_one<numgap::mse>(r, t),
                               evaluate_one<numgap::l1>(r, t), evaluate_one<numgap::snr_db>(r, t),
                               evaluate_one<numgap::psnr_db>(r, t), evaluate_one<numgap::norm_l2>(r, t),
                               evaluate_one<numgap::atol>(t, r), evaluate_one<numgap::snr_db>(t, r)}) {
        CAPTURE(result.name);
        CHECK(std::isnan(result.value));
        CHECK_FALSE(result.passed);
    }
}

TEST_CASE("Inf follows IEEE arithmetic: infinite difference gives +Inf errors; equal infinities give NaN") {
    CHECK(evaluate_one<numgap::atol>({inf_f, 0}, {0, 0}).value == std::numeric_limits<double>::infinity());
    CHECK(evaluate_one<numgap::mse>({inf_f, 0}, {0, 0}).value == std::numeric_limits<double>::infinity());
    CHECK(std::isnan(evaluate_one<numgap::atol>({inf_f, 0}, {inf_f, 0}).value));
    CHECK_FALSE(evaluate_one<numgap::mse>({inf_f, 0}, {0, 0}).passed);
}

TEST_CASE("standalone reduction interface agrees with evaluate(); an empty state is NaN") {
    const std::vector<float> r = {0.5f, 1.5f, -2.0f, 7.0f, 3.25f}, t = {0.25f, 1.0f, -2.5f, 7.5f, 3.0f};
    CHECK(same_value(standalone<numgap::atol>(r, t), evaluate_one<numgap::atol>(r, t).value));
    CHECK(same_value(standalone<numgap::mse>(r, t), evaluate_one<numgap::mse>(r, t).value));
    CHECK(same_value(standalone<numgap::psnr_db>(r, t), evaluate_one<numgap::psnr_db>(r, t).value));
    CHECK(std::isnan(numgap::mse{}.finalize({})));
    CHECK(std::isnan(numgap::atol{}.finalize({})));
    CHECK(std::isnan(numgap::snr_db{}.finalize({})));
    CHECK(std::isnan(numgap::l1{}.finalize({})));
}

TEST_CASE("max_rel is NaN, never a finite number, when an infinite reference element meets a different target") {
    // Inf / Inf is NaN per the header; a SIMD max drops NaN lanes, so this pins
    // the result on every kernel, with the infinity in the vector body (first
    // and last lane of a vector), in the tail, and at either end.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (const auto& table : numgap::kernels::available_kernels()) {
        const std::string_view arch = table.arch_name;
        CAPTURE(arch);
        for (const std::size_t n : {std::size_t(1), std::size_t(37), std::size_t(5000)}) {
            for (const std::size_t position : {std::size_t(0), std::size_t(7), std::size_t(15), std::size_t(16),
                                               std::size_t(31), std::size_t(35), n - 1}) {
                if (position >= n) continue;
                for (const float infinity : {inf_f, -inf_f}) {
                    for (const float other : {0.0f, 1.0f, -inf_f * (infinity > 0 ? 1.0f : -1.0f)}) {
                        CAPTURE(n);
                        CAPTURE(position);
                        CAPTURE(infinity);
                        CAPTURE(other);
                        std::vector<float> r(n, 1.0f), t(n, 1.0f);
                        r[position] = infinity;
                        t[position] = other;
                        numgap::kernels::pair_moments m;
                        table.block_f32(r.data(), t.data(), n, numgap::max_rel{}.kernel_options(), m);
                        CHECK(std::isnan(numgap::max_rel{}.from_moments(m)));
                        std::vector<double> r64(r.begin(), r.end()), t64(t.begin(), t.end());
                        numgap::kernels::pair_moments m64;
                        table.block_f64(r64.data(), t64.data(), n, numgap::max_rel{}.kernel_options(), m64);
                        CHECK(std::isnan(numgap::max_rel{}.from_moments(m64)));
                    }
                }
            }
        }
    }
    // The reviewer's input through evaluate() and the standalone interface.
    std::vector<float> r(37, 1.0f), t(37, 1.0f);
    r[0] = inf_f;
    t[0] = 0.0f;
    CHECK(same_value(evaluate_one<numgap::max_rel>(r, t).value, nan));
    CHECK(same_value(standalone<numgap::max_rel>(r, t), nan));
    // Equal infinities are a NaN difference: NaN as before.
    t[0] = inf_f;
    CHECK(same_value(evaluate_one<numgap::max_rel>(r, t).value, nan));
    // An infinite target over a finite reference stays +Inf, not NaN.
    r[0] = 2.0f;
    CHECK(evaluate_one<numgap::max_rel>(r, t).value == std::numeric_limits<double>::infinity());
    // Finite inputs are unaffected: max |r - t| / |r| = 0.5 / 2.
    t[0] = 2.5f;
    CHECK(evaluate_one<numgap::max_rel>(r, t).value == 0.25);
}
} // TEST_SUITE("metric")
