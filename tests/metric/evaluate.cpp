// Pins evaluate() (metric/evaluate.hpp): every built-in against the
// long-double oracle through the runtime path, side statistics, threads,
// mixed dtypes and dequantization, axis_order and strides, float64 pairs,
// user metrics in the fused pass, and every bad-input error.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/kernels/plan/copy_as_float.hpp>
#include <numgap/kernels/scalar_reference.hpp>
#include <numgap/metric.hpp>

#include "../core/caught_error.hpp"
#include "oracle_check.hpp"
#include "test_support.hpp"

using namespace numgap_test;

// A user metric whose name is built at run time (a static std::string): the
// results' names view it.
struct run_time_named_metric {};
template <>
struct numgap::metric_traits<run_time_named_metric> {
    static inline const std::string name = std::string("run_time_") + "named";
    static constexpr numgap::direction better = numgap::direction::lower_is_better;
    static constexpr std::optional<numgap::pass_rule> default_rule = std::nullopt;
    static double compute(const run_time_named_metric&, const numgap::tensor_view&, const numgap::tensor_view&) {
        return 0.0;
    }
};

TEST_SUITE("metric") {
TEST_CASE("every built-in through evaluate() matches the long-double oracle, 0 (every core), 1 and 3 threads") {
    const std::size_t rows = 1501, columns = 200; // 300200 elements: several threads and a ragged end
    const auto pair = make_pair(rows * columns, 11);
    const numgap::tensor_view r(pair.reference.data(), {std::int64_t(rows), std::int64_t(columns)});
    const numgap::tensor_view t(pair.target.data(), {std::int64_t(rows), std::int64_t(columns)});
    for (const std::size_t threads : {0u, 1u, 3u}) {
        CAPTURE(threads);
        for (const bool min_max : {false, true}) {
            CAPTURE(min_max);
            const auto e = numgap::evaluate(r, t, all_builtins(), {threads, true, min_max});
            REQUIRE(e.metrics.size() == 12);
            check_against_oracle(e, pair.reference, pair.target, columns, min_max);
            CHECK(e.metrics[0].name == "cosine"); // order kept
        }
    }
}

TEST_CASE("results are the same for any thread count up to rounding of the float64 merge") {
    const auto pair = make_pair(1 << 20, 12);
    const numgap::tensor_view r{std::span<const float>(pair.reference)}, t{std::span<const float>(pair.target)};
    const auto one = numgap::evaluate(r, t, numgap::metric_set::defaults(), {1, true});
    for (const std::size_t threads : {0u, 2u, 4u, 7u}) {
        CAPTURE(threads);
        const auto many = numgap::evaluate(r, t, numgap::metric_set::defaults(), {threads, true});
        for (std::size_t i = 0; i < one.metrics.size(); ++i)
            CHECK(many.metrics[i].value == doctest::Approx(one.metrics[i].value).epsilon(1e-13));
        CHECK(many.reference.std == doctest::Approx(one.reference.std).epsilon(1e-12));
    }
}

TEST_CASE("defaults() is cosine, atol, mse; passed() and find() report them") {
    const std::vector<float> r = {1, 2, 3}, t = {1, 2, 3.001f};
    const numgap::tensor_view rv{std::span<const float>(r)}, tv{std::span<const float>(t)};
    const auto e = numgap::evaluate(rv, tv, numgap::metric_set::defaults());
    CHECK(numgap::metric_set::defaults().names() == std::vector<std::string>{"cosine", "atol", "mse"});
    CHECK(e.passed());
    CHECK(e.find("mse") != nullptr);
    CHECK(e.find("snr_db") == nullptr);
    numgap::metric_set strict;
    strict.add_builtin("mse", numgap::parse_pass_rule("< 1e-9"));
    CHECK_FALSE(numgap::evaluate(rv, tv, strict).passed());
}

TEST_CASE("side statistics count NaN and Inf per side; the NaN fails every metric") {
    const std::vector<float> r = {1, nan_f, 3, inf_f, -inf_f, -inf_f}, t = {1, 2, 3, 4, 5, 6};
    const numgap::tensor_view rv{std::span<const float>(r)}, tv{std::span<const float>(t)};
    const auto e = numgap::evaluate(rv, tv, all_builtins(), {1, true});
    CHECK(e.reference.nan_count == 1);
    CHECK(e.reference.positive_inf_count == 1);
    CHECK(e.reference.negative_inf_count == 2);
    CHECK(e.reference.finite_count() == 2);
    CHECK(e.reference.mean == 2.0);
    CHECK(e.target.nan_count == 0);
    CHECK(e.target.std == doctest::Approx(std::sqrt(17.5 / 6.0)));
    for (const auto& result : e.metrics) {
        CAPTURE(result.name);
        CHECK(std::isnan(result.value));
        CHECK_FALSE(result.passed);
    }
    const auto nothing = numgap::evaluate(rv, tv, numgap::metric_set::defaults(), {1, false, false, false});
    CHECK(nothing.reference.count == 6);
    CHECK(nothing.reference.nan_count == 0);
    CHECK(nothing.reference.negative_inf_count == 0);
    CHECK(std::isnan(nothing.reference.mean));
}

TEST_CASE("default options count each side's NaN and +-Inf and nothing more; mean, std, min and max are opt-in") {
    // Non-finite values in the second of three chunks of the reference and in
    // the tail of the target, on the paths evaluate() takes: a plain pair,
    // threads, a strided (planned) pair, the prepared form, a widened target
    // and the closeness tier (evaluate_segments: its own test file).
    std::vector<float> r(5000), t(5000);
    for (std::size_t i = 0; i < r.size(); ++i) {
        r[i] = float(i % 13) - 6.0f;
        t[i] = r[i] * 1.001f;
    }
    r[2500] = nan_f;
    r[2501] = nan_f;
    r[3000] = -inf_f;
    t[4999] = inf_f;
    const numgap::tensor_view rv{std::span<const float>(r)}, tv{std::span<const float>(t)};
    auto check_counts = [](const numgap::evaluation& e) {
        CHECK(e.reference.count == 5000);
        CHECK(e.reference.nan_count == 2);
        CHECK(e.reference.positive_inf_count == 0);
        CHECK(e.reference.negative_inf_count == 1);
        CHECK(e.target.nan_count == 0);
        CHECK(e.target.positive_inf_count == 1);
        CHECK(e.target.finite_count() == 4999);
    };
    const auto e = numgap::evaluate(rv, tv, numgap::metric_set::defaults());
    check_counts(e);
    CHECK(std::isnan(e.reference.mean));
    CHECK(std::isnan(e.target.std));
    CHECK(std::isnan(e.target.min));
    // Three threads over 300000 elements: the counts of every range merge.
    std::vector<float> big_r(300000, 1.0f), big_t(300000, 2.0f);
    big_r[10] = nan_f;
    big_r[150000] = nan_f;
    big_r[250000] = inf_f;
    big_t[299999] = -inf_f;
    const auto threaded = numgap::evaluate(numgap::tensor_view{std::span<const float>(big_r)},
                                           numgap::tensor_view{std::span<const float>(big_t)},
                                           numgap::metric_set::defaults(), {3, false});
    CHECK(threaded.reference.nan_count == 2);
    CHECK(threaded.reference.positive_inf_count == 1);
    CHECK(threaded.target.negative_inf_count == 1);
    CHECK(threaded.target.nan_count == 0);
    // Strided: every second element of 10000, so the pass goes through a plan.
    std::vector<float> r2(10000, 0.0f), t2(10000, 0.0f);
    for (std::size_t i = 0; i < r.size(); ++i) {
        r2[2 * i] = r[i];
        t2[2 * i] = t[i];
    }
    const std::int64_t shape[] = {5000}, strides[] = {2};
    const numgap::tensor_view rs(r2.data(), std::span<const std::int64_t>(shape),
                                 std::span<const std::int64_t>(strides));
    const numgap::tensor_view ts(t2.data(), std::span<const std::int64_t>(shape),
                                 std::span<const std::int64_t>(strides));
    check_counts(numgap::evaluate(rs, ts, numgap::metric_set::defaults()));
    numgap::prepared_metric_set prepared(numgap::metric_set::defaults());
    double values[3];
    numgap::side_stats reference_stats, target_stats;
    prepared.evaluate_into(rv, tv, values, &reference_stats, &target_stats);
    CHECK(reference_stats.nan_count == 2);
    CHECK(target_stats.positive_inf_count == 1);
    CHECK(std::isnan(reference_stats.mean));
    // Widened in registers (float16 target) and beside the closeness tier
    // (allclose in the set): the same counts.
    std::vector<numgap::float16> half(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) half[i] = numgap::to_float16(t[i]);
    const numgap::tensor_view hv(half.data(), numgap::dtype::float16, {5000});
    numgap::metric_set with_allclose = numgap::metric_set::defaults();
    with_allclose.add_builtin("allclose");
    for (const auto& widened : {numgap::evaluate(rv, hv, numgap::metric_set::defaults()),
                                numgap::evaluate(rv, hv, with_allclose), numgap::evaluate(rv, tv, with_allclose)}) {
        CHECK(widened.reference.nan_count == 2);
        CHECK(widened.reference.negative_inf_count == 1);
        CHECK(widened.target.positive_inf_count == 1);
        CHECK(widened.target.nan_count == 0);
    }
    // Opting in adds the mean and std (and min and max), the counts unchanged.
    const auto with = numgap::evaluate(rv, tv, numgap::metric_set::defaults(), {1, true});
    check_counts(with);
    CHECK(std::isfinite(with.reference.mean));
    CHECK(std::isfinite(with.target.std));
    CHECK(std::isnan(with.target.min));
    const auto all = numgap::evaluate(rv, tv, numgap::metric_set::defaults(), {1, false, true});
    check_counts(all);
    CHECK(all.target.min == double(-6.0f * 1.001f));
    CHECK(all.reference.max == 6.0);
    CHECK(all.reference.mean == with.reference.mean);
    // The metrics do not depend on what is gathered per side.
    for (std::size_t i = 0; i < e.metrics.size(); ++i) {
        CAPTURE(e.metrics[i].name);
        CHECK(close_value(e.metrics[i].value, with.metrics[i].value));
        CHECK(same_value(
            e.metrics[i].value,
            numgap::evaluate(rv, tv, numgap::metric_set::defaults(), {1, false, false, false}).metrics[i].value));
    }
}

TEST_CASE("all non-finite side: statistics are NaN, counts are exact") {
    const std::vector<float> r = {nan_f, nan_f}, t = {1, 2};
    const numgap::tensor_view rv{std::span<const float>(r)}, tv{std::span<const float>(t)};
    const auto e = numgap::evaluate(rv, tv, numgap::metric_set::defaults(), {1, true, true});
    CHECK(e.reference.nan_count == 2);
    CHECK(std::isnan(e.reference.min));
    CHECK(e.target.min == 1);
    CHECK(e.target.max == 2);
    CHECK(std::isnan(e.reference.std));
}

TEST_CASE("float64 sides beyond 1e154: a large mean keeps an exact std, a spread too large for M2 gives +Inf") {
    // The first chunk's merge multiplied delta^2 (here the mean squared,
    // which overflows) by the earlier count, 0: std was NaN.
    const std::vector<double> r = {1e160, 1.0000000001e160, 1.0000000002e160}, t = {-3e160, -3e160, -3e160};
    const numgap::tensor_view rv{std::span<const double>(r)}, tv{std::span<const double>(t)};
    const auto e = numgap::evaluate(rv, tv, numgap::metric_set::defaults(), {1, true, true});
    CHECK(e.reference.mean == doctest::Approx(1.0000000001e160).epsilon(1e-15));
    CHECK(e.reference.std == doctest::Approx(std::sqrt(2.0 / 3.0) * 1e150).epsilon(1e-6));
    CHECK(e.target.mean == -3e160);
    CHECK(e.target.std == 0);
    // Deviations of 2e200: their squares overflow, so does M2 (std was 0).
    const std::vector<double> spread = {1e200, 3e200, 5e200};
    const numgap::tensor_view sv{std::span<const double>(spread)};
    const auto wide = numgap::evaluate(sv, tv, numgap::metric_set::defaults(), {1, true, true});
    CHECK(wide.reference.mean == doctest::Approx(3e200).epsilon(1e-15));
    CHECK(wide.reference.std == std::numeric_limits<double>::infinity());
    CHECK(wide.reference.min == 1e200);
    CHECK(wide.reference.max == 5e200);
}

TEST_CASE("float64 sides near the largest finite: the mean stays finite and exact, std is +Inf") {
    // Found by the npy fuzz target: the deviations from the chunk's first
    // value (6.7e307) overflowed their double sum, and the mean came out -Inf.
    const std::vector<double> fuzzed = {6.741349255736239e307,  -1.487016908477783e284, 3.4756671983726453e-152,
                                        6.013470016999068e-154, 9.9999999999945e-311,   1.0};
    const long double exact = std::accumulate(fuzzed.begin(), fuzzed.end(), 0.0L) / fuzzed.size();
    const numgap::tensor_view fv{std::span<const double>(fuzzed)};
    const auto e = numgap::evaluate(fv, fv, numgap::metric_set::defaults(), {1, true, true});
    CHECK(e.reference.mean == doctest::Approx(double(exact)).epsilon(1e-15));
    CHECK(e.reference.std == std::numeric_limits<double>::infinity());
    CHECK(e.reference.min == -1.487016908477783e284);
    CHECK(e.reference.max == 6.741349255736239e307);
    // Both signs near the largest finite, over many chunks (the chunk means
    // themselves differ by more than the largest finite) and every length
    // around a vector's width: the mean of +-1.7e308 pairs and one 8e307.
    for (const std::size_t n : {2u, 7u, 8u, 9u, 15u, 16u, 17u, 4095u, 4096u, 4097u, 10001u}) {
        CAPTURE(n);
        std::vector<double> values(n);
        for (std::size_t i = 0; i < n; ++i) values[i] = (i < n / 2 ? 1.7e308 : -1.7e308);
        values[n - 1] = 8e307;
        const long double want = std::accumulate(values.begin(), values.end(), 0.0L) / n;
        const numgap::tensor_view v{std::span<const double>(values)};
        const auto got = numgap::evaluate(v, v, numgap::metric_set::defaults(), {1, true, true});
        CHECK(std::isfinite(got.reference.mean));
        // A float64 sum of n terms near 1.7e308 (scaled) rounds by up to ~n ulps of them.
        CHECK(std::fabs(got.reference.mean - double(want)) <= double(n) * 1e-15 * 1.7e308);
        CHECK(got.reference.mean >= -1.7e308);
        CHECK(got.reference.mean <= 1.7e308);
        CHECK(got.reference.std == std::numeric_limits<double>::infinity());
    }
}

TEST_CASE("mixed dtypes: float16, bfloat16, quantized uint8/int8/int16, raw ints agree with evaluating the dequantized floats") {
    const std::size_t channels = 3, spatial = 1000;
    const auto pair = make_pair(channels * spatial, 13, 0.05f);
    const std::int64_t shape[] = {std::int64_t(channels), std::int64_t(spatial)};
    const numgap::tensor_view r(pair.reference.data(), std::span<const std::int64_t>(shape));
    auto expect_same = [&](const numgap::tensor_view& target, const std::vector<float>& dequantized) {
        const numgap::tensor_view plain(dequantized.data(), std::span<const std::int64_t>(shape));
        const auto got = numgap::evaluate(r, target, all_builtins(), {1, true, true});
        const auto want = numgap::evaluate(r, plain, all_builtins(), {1, true, true});
        for (std::size_t i = 0; i < got.metrics.size(); ++i) {
            CAPTURE(got.metrics[i].name);
            // Per-channel axes are not coalesced, so chunk boundaries (and
            // float32 partial-sum rounding: a few float32 ulps for 3000
            // elements, averaging out for large n) differ from the
            // flat tensor's; the oracle check below pins the accuracy.
            CHECK(close_value(got.metrics[i].value, want.metrics[i].value));
        }
        CHECK(got.target.mean == doctest::Approx(want.target.mean).epsilon(1e-6));
        check_against_oracle(got, pair.reference, dequantized, spatial, true);
    };
    SUBCASE("float16") {
        std::vector<numgap::float16> half(pair.target.size());
        std::vector<float> exact(half.size());
        for (std::size_t i = 0; i < half.size(); ++i) {
            half[i] = numgap::to_float16(pair.target[i]);
            exact[i] = numgap::to_float(half[i]);
        }
        expect_same(numgap::tensor_view(half.data(), numgap::dtype::float16, std::span<const std::int64_t>(shape)), exact);
    }
    SUBCASE("bfloat16") {
        std::vector<numgap::bfloat16> half(pair.target.size());
        std::vector<float> exact(half.size());
        for (std::size_t i = 0; i < half.size(); ++i) {
            half[i] = numgap::to_bfloat16(pair.target[i]);
            exact[i] = numgap::to_float(half[i]);
        }
        expect_same(numgap::tensor_view(half.data(), numgap::dtype::bfloat16, std::span<const std::int64_t>(shape)), exact);
    }
    SUBCASE("uint8, per-tensor scale and zero point") {
        const float scale = 0.03f;
        const std::int32_t zero_point = 128;
        std::vector<std::uint8_t> q(pair.target.size());
        std::vector<float> exact(q.size());
        for (std::size_t i = 0; i < q.size(); ++i) {
            q[i] = std::uint8_t(std::clamp(std::lround(pair.target[i] / scale) + zero_point, 0L, 255L));
            exact[i] = scale * float(std::int32_t(q[i]) - zero_point);
        }
        numgap::tensor_view t(q.data(), std::span<const std::int64_t>(shape));
        t.with_quantization(numgap::quantization::per_tensor(scale, zero_point));
        expect_same(t, exact);
    }
    SUBCASE("int8, per-channel along the outer axis; int16 per-channel along the inner axis") {
        const float scales[] = {0.02f, 0.03f, 0.05f};
        const std::int32_t zero_points[] = {-3, 0, 4};
        std::vector<std::int8_t> q(pair.target.size());
        std::vector<float> exact(q.size());
        for (std::size_t c = 0; c < channels; ++c)
            for (std::size_t s = 0; s < spatial; ++s) {
                const std::size_t i = c * spatial + s;
                q[i] = std::int8_t(std::clamp(std::lround(pair.target[i] / scales[c]) + zero_points[c], -128L, 127L));
                exact[i] = scales[c] * float(std::int32_t(q[i]) - zero_points[c]);
            }
        numgap::tensor_view t(q.data(), std::span<const std::int64_t>(shape));
        t.with_quantization(numgap::quantization::along(0, scales, zero_points));
        expect_same(t, exact);

        std::vector<float> inner_scales(spatial);
        std::vector<std::int16_t> q16(pair.target.size());
        for (std::size_t s = 0; s < spatial; ++s) inner_scales[s] = 1e-3f * float(1 + s % 7);
        for (std::size_t i = 0; i < q16.size(); ++i) {
            const float scale = inner_scales[i % spatial];
            q16[i] = std::int16_t(std::lround(pair.target[i] / scale));
            exact[i] = scale * float(q16[i]);
        }
        numgap::tensor_view t16(q16.data(), std::span<const std::int64_t>(shape));
        t16.with_quantization(numgap::quantization::along(1, inner_scales));
        expect_same(t16, exact);
    }
    SUBCASE("raw int32 and uint16 without quantization compare their integer values") {
        std::vector<std::int32_t> ints(pair.target.size());
        std::vector<std::uint16_t> shorts(pair.target.size());
        std::vector<float> exact(ints.size()), exact_shorts(ints.size());
        for (std::size_t i = 0; i < ints.size(); ++i) {
            ints[i] = std::int32_t(std::lround(pair.target[i] * 3));
            exact[i] = float(ints[i]);
            shorts[i] = std::uint16_t(i % 5);
            exact_shorts[i] = float(shorts[i]);
        }
        expect_same(numgap::tensor_view(ints.data(), std::span<const std::int64_t>(shape)), exact);
        expect_same(numgap::tensor_view(shorts.data(), std::span<const std::int64_t>(shape)), exact_shorts);
    }
}

TEST_CASE("bool tensors compare as 0/1 with each other") {
    const bool r[] = {true, false, true, true}, t[] = {true, true, true, false};
    const auto e = numgap::evaluate(numgap::tensor_view(r, {4}), numgap::tensor_view(t, {4}), all_builtins());
    CHECK(e.find("atol")->value == 0.5);
    CHECK(e.find("max_abs")->value == 1.0);
}

TEST_CASE("an NHWC target through axis_order equals comparing against the materialised NCHW tensor") {
    const std::int64_t n = 2, c = 5, h = 7, w = 9;
    const auto pair = make_pair(std::size_t(n * c * h * w), 14);
    std::vector<float> nhwc(pair.target.size());
    for (std::int64_t in = 0; in < n; ++in)
        for (std::int64_t ic = 0; ic < c; ++ic)
            for (std::int64_t ih = 0; ih < h; ++ih)
                for (std::int64_t iw = 0; iw < w; ++iw)
                    nhwc[std::size_t(((in * h + ih) * w + iw) * c + ic)] = pair.target[std::size_t(((in * c + ic) * h + ih) * w + iw)];
    const numgap::tensor_view r(pair.reference.data(), {n, c, h, w});
    numgap::tensor_view t(nhwc.data(), {n, h, w, c});
    t.with_axis_order({0, 2, 3, 1});
    const auto got = numgap::evaluate(r, t, all_builtins(), {1, true, true});
    check_against_oracle(got, pair.reference, pair.target, std::size_t(w), true);
    std::vector<float> copied(nhwc.size());
    numgap::copy_as_float(t, copied);
    CHECK(copied == pair.target);
}

TEST_CASE("strided (non-contiguous) views, including a reversed axis, are gathered correctly") {
    // Reference: every other column of a 40 x 64 buffer; target: columns in reverse order.
    const std::int64_t rows = 40, columns = 32;
    const auto pair = make_pair(std::size_t(rows * columns), 15);
    std::vector<float> wide(std::size_t(rows * columns * 2), 1e9f), reversed(pair.target.size());
    for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < columns; ++j) {
            wide[std::size_t(i * columns * 2 + j * 2)] = pair.reference[std::size_t(i * columns + j)];
            reversed[std::size_t(i * columns + (columns - 1 - j))] = pair.target[std::size_t(i * columns + j)];
        }
    const std::int64_t shape[] = {rows, columns}, wide_strides[] = {columns * 2, 2}, reversed_strides[] = {columns, -1};
    const numgap::tensor_view r(wide.data(), std::span<const std::int64_t>(shape), std::span<const std::int64_t>(wide_strides));
    const numgap::tensor_view t(reversed.data() + (columns - 1), std::span<const std::int64_t>(shape),
                                std::span<const std::int64_t>(reversed_strides));
    check_against_oracle(numgap::evaluate(r, t, all_builtins(), {1, true}), pair.reference, pair.target,
                         std::size_t(columns), false);
}

TEST_CASE("float64 pairs are compared in float64: a 1e-12 difference is not rounded away") {
    std::vector<double> r(5000), t(5000);
    for (std::size_t i = 0; i < r.size(); ++i) {
        r[i] = 1.0 + 1e-3 * double(i);
        t[i] = r[i] + 1e-12;
    }
    const auto e = numgap::evaluate(numgap::tensor_view(std::span<const double>(r)),
                                    numgap::tensor_view(std::span<const double>(t)), all_builtins(), {1, true});
    const auto oracle = numgap::kernels::scalar_reference<double>(r, t);
    CHECK(e.find("atol")->value == doctest::Approx(double(oracle.atol())).epsilon(1e-3));
    CHECK(e.find("atol")->value > 0);
    CHECK(e.find("snr_db")->value == doctest::Approx(double(oracle.snr_db())).epsilon(1e-6));
    CHECK(e.reference.mean == doctest::Approx(double(oracle.reference.mean)).epsilon(1e-14));
}

namespace {
struct throws_on_negative {
    static constexpr std::string_view name = "throws_on_negative";
    static constexpr numgap::direction better = numgap::direction::higher_is_better;
    static constexpr std::optional<numgap::pass_rule> default_rule = std::nullopt;
    using state_type = int;
    void accumulate(state_type&, std::span<const float> r, std::span<const float>) const {
        for (const float x : r)
            if (x < -4.5f) throw std::runtime_error("negative value seen");
    }
    void merge(state_type&, const state_type&) const {}
    double finalize(const state_type&) const { return 0; }
};
} // namespace

TEST_CASE("user reduction metrics see every element once, across threads and for float64 pairs") {
    const std::size_t n = 300000;
    std::vector<float> r(n, 1.0f), t(n, 2.0f);
    std::vector<double> rd(n, 1.0), td(n, 2.0);
    numgap::metric_set set;
    set.add(sum_of_target{}).add(numgap::mse{});
    for (const std::size_t threads : {1u, 4u}) {
        const auto e = numgap::evaluate(numgap::tensor_view(std::span<const float>(r)),
                                        numgap::tensor_view(std::span<const float>(t)), set, {threads, true});
        CHECK(e.find("sum_of_target")->value == 2.0 * double(n));
        CHECK(e.find("mse")->value == 1.0);
        const auto wide = numgap::evaluate(numgap::tensor_view(std::span<const double>(rd)),
                                           numgap::tensor_view(std::span<const double>(td)), set, {threads, true});
        CHECK(wide.find("sum_of_target")->value == 2.0 * double(n));
    }
}

TEST_CASE("an exception from a user metric on a worker thread reaches the caller") {
    std::vector<float> r(400000, 0.0f), t(400000, 0.0f);
    r.back() = -5.0f; // only the last thread's range sees it
    numgap::metric_set set;
    set.add(throws_on_negative{});
    CHECK_THROWS_WITH_AS(numgap::evaluate(numgap::tensor_view(std::span<const float>(r)),
                                          numgap::tensor_view(std::span<const float>(t)), set, {4, true}),
                         "negative value seen", std::runtime_error);
}

namespace {
// A whole-tensor metric that throws: evaluate() reaches it while it builds
// the results, after the fused pass.
struct throws_when_computed {
    static constexpr std::string_view name = "throws_when_computed";
    static constexpr numgap::direction better = numgap::direction::higher_is_better;
    static constexpr std::optional<numgap::pass_rule> default_rule = std::nullopt;
    double operator()(const numgap::tensor_view&, const numgap::tensor_view&) const {
        throw std::runtime_error("whole-tensor metric refused");
    }
};
} // namespace

TEST_CASE("an exception from a whole-tensor metric while the results are built reaches the caller") {
    const auto pair = make_pair(1000, 7);
    const numgap::tensor_view r(std::span<const float>(pair.reference)), t(std::span<const float>(pair.target));
    // Four results (inside the evaluation) and fourteen (on the heap); the
    // throwing metric last, then between built-ins.
    numgap::metric_set few = numgap::metric_set::defaults();
    few.add(throws_when_computed{});
    numgap::metric_set many = all_builtins();
    many.add(throws_when_computed{}).add(numgap::cosine{});
    for (const numgap::metric_set* set : {&few, &many}) {
        CHECK_THROWS_WITH_AS(numgap::evaluate(r, t, *set), "whole-tensor metric refused", std::runtime_error);
        const numgap::prepared_metric_set prepared(*set);
        std::vector<double> values(prepared.size(), -1.0);
        CHECK_THROWS_WITH_AS(prepared.evaluate_into(r, t, values), "whole-tensor metric refused", std::runtime_error);
    }
    // The same sets without it still evaluate.
    CHECK(numgap::evaluate(r, t, all_builtins()).metrics.size() == 12);
}

TEST_CASE("add_builtin rejects unknown names listing the valid ones") {
    numgap::metric_set set;
    CHECK_THROWS_WITH_AS(set.add_builtin("cosin"), doctest::Contains("'cosin'"), numgap::error);
    CHECK_THROWS_WITH_AS(set.add_builtin("cosin"), doctest::Contains("cosine, atol, mse"), numgap::error);
    const auto unknown = numgap_test::caught_error([&] { set.add_builtin("cosin"); });
    REQUIRE(unknown.has_value());
    CHECK(unknown->kind() == numgap::error_kind::usage);
    CHECK(unknown->where().item == "cosin");
    CHECK(set.add_builtin("topk").add_builtin("kl_div").size() == 2);
}
TEST_CASE("evaluate keeps up to inline_metric_results results inside the evaluation, more on the heap") {
    const auto pair = make_pair(1000, 5);
    const numgap::tensor_view r(std::span<const float>(pair.reference)), t(std::span<const float>(pair.target));
    auto inside = [](const numgap::evaluation& e) {
        const auto* results = reinterpret_cast<const unsigned char*>(e.metrics.data());
        const auto* object = reinterpret_cast<const unsigned char*>(&e);
        return results >= object && results < object + sizeof(e);
    };
    const numgap::evaluation few = numgap::evaluate(r, t, numgap::metric_set::defaults());
    CHECK(few.metrics.size() == 3);
    CHECK(inside(few)); // no heap block for the results
    const numgap::evaluation many = numgap::evaluate(r, t, all_builtins());
    REQUIRE(many.metrics.size() == 12);
    CHECK_FALSE(inside(many));
    CHECK(many.metrics.size() > numgap::inline_metric_results);
    // Copies and moves of either keep every result.
    for (const numgap::evaluation* original : {&few, &many}) {
        numgap::evaluation copy = *original;
        numgap::evaluation moved = std::move(copy);
        REQUIRE(moved.metrics.size() == original->metrics.size());
        for (std::size_t i = 0; i < moved.metrics.size(); ++i) {
            CHECK(moved.metrics[i].name == original->metrics[i].name);
            CHECK(same_value(moved.metrics[i].value, original->metrics[i].value));
        }
        CHECK(moved.passed() == original->passed());
        CHECK(moved.find("cosine") != nullptr);
    }
}

TEST_CASE("evaluate(): a result's name views the metric's static name and outlives the metric_set") {
    const std::vector<float> reference{1.0f, 2.0f, 3.0f}, target{1.0f, 2.0f, 3.5f};
    const numgap::tensor_view r{std::span<const float>(reference)}, t{std::span<const float>(target)};
    numgap::evaluation result;
    {
        auto metrics = std::make_unique<numgap::metric_set>(all_builtins());
        metrics->add(run_time_named_metric{});
        result = numgap::evaluate(r, t, *metrics);
    } // the set is gone (ASan would see a view into it)
    const std::size_t builtins = numgap::builtin_metric_names().size();
    REQUIRE(result.metrics.size() == builtins + 1);
    std::size_t i = 0;
    numgap::for_each_builtin_metric([&](auto metric) {
        CHECK(result.metrics[i].name == decltype(metric)::name);
        CHECK(result.metrics[i].name.data() == decltype(metric)::name.data()); // a view, not a copy
        ++i;
        return false;
    });
    CHECK(i == builtins);
    CHECK(result.metrics[builtins].name == "run_time_named");
    CHECK(result.metrics[builtins].name.data() == numgap::metric_traits<run_time_named_metric>::name.data());
    CHECK(result.find("run_time_named") == &result.metrics[builtins]);
}
} // TEST_SUITE("metric")
