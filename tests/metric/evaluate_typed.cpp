// Pins the compile-time form evaluate(reference, target, m1, m2, ...)
// (metric/evaluate.hpp): for sum-based built-ins it calls the kernel itself,
// and must give the runtime form's results bit for bit (names, values, rules,
// verdicts) on every kind of pair, with every tier of the fused pass, and
// fall back to a metric_set when the pass cannot serve the mix.
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/metric.hpp>

#include "../core/caught_error.hpp"
#include "oracle_check.hpp"

namespace {

template <class... M>
numgap::metric_set set_of(const M&... metrics) {
    numgap::metric_set set;
    (set.add(metrics), ...);
    return set;
}

// The runtime form with the options the compile-time form documents: one
// thread, no side statistics.
constexpr numgap::evaluate_options typed_form_options{1, false, false, false};

template <class... M>
void check_typed_equals_runtime(const numgap::tensor_view& r, const numgap::tensor_view& t, const M&... metrics) {
    const auto typed = numgap::evaluate(r, t, metrics...);
    const numgap::metric_set set = set_of(metrics...);
    const numgap::evaluation runtime = numgap::evaluate(r, t, set, typed_form_options);
    // The default options (each side's counts) change no metric's value.
    const numgap::evaluation with_defaults = numgap::evaluate(r, t, set);
    REQUIRE(runtime.metrics.size() == typed.size());
    for (std::size_t i = 0; i < typed.size(); ++i) {
        INFO(runtime.metrics[i].name);
        CHECK(numgap_test::same_bits(typed[i].value, with_defaults.metrics[i].value));
        CHECK(typed[i].name == runtime.metrics[i].name);
        CHECK(numgap_test::same_bits(typed[i].value, runtime.metrics[i].value));
        CHECK(typed[i].rule == runtime.metrics[i].rule);
        CHECK(typed[i].passed == runtime.metrics[i].passed);
    }
}

// Every sum-based built-in: the moments, the closeness tier (allclose,
// max_rel, psnr_db) and the tolerances of one allclose.
void check_every_fused_builtin(const numgap::tensor_view& r, const numgap::tensor_view& t) {
    check_typed_equals_runtime(r, t, numgap::cosine{}, numgap::atol{}, numgap::mse{}, numgap::max_abs{}, numgap::l1{},
                               numgap::snr_db{}, numgap::psnr_db{}, numgap::norm_l2{}, numgap::max_rel{},
                               numgap::allclose{1e-3, 1e-2});
    check_typed_equals_runtime(r, t, numgap::cosine{}, numgap::atol{}, numgap::mse{}, numgap::max_abs{});
    check_typed_equals_runtime(r, t, numgap::max_abs{});
}

} // namespace

TEST_SUITE("metric") {
TEST_CASE("compile-time evaluate() gives the runtime form's results bit for bit, float32 pairs of every length") {
    for (const std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(15), std::size_t(16), std::size_t(17),
                                std::size_t(1024), std::size_t(2049), std::size_t(70001)}) {
        CAPTURE(n);
        const auto pair = numgap_test::make_pair(n, 23);
        const numgap::tensor_view r{std::span<const float>(pair.reference)}, t{std::span<const float>(pair.target)};
        check_every_fused_builtin(r, t);
        check_every_fused_builtin(r, r);
        // Starts off the 64-byte line.
        if (n > 1) {
            const numgap::tensor_view r1{std::span<const float>(pair.reference).subspan(1)},
                t1{std::span<const float>(pair.target).subspan(1)};
            check_every_fused_builtin(r1, t1);
        }
    }
}

TEST_CASE("compile-time evaluate(): NaN, infinities, zero vectors and huge values as the runtime form") {
    constexpr float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const auto pair = numgap_test::make_pair(3000, 5);
    for (const float odd : {nan, inf, -inf, 3e38f, 0.0f}) {
        CAPTURE(odd);
        std::vector<float> reference = pair.reference, target = pair.target;
        target[2500] = odd;
        reference[17] = odd;
        const numgap::tensor_view r{std::span<const float>(reference)}, t{std::span<const float>(target)};
        check_every_fused_builtin(r, t);
    }
    const std::vector<float> zeros(100, 0.0f);
    const numgap::tensor_view z{std::span<const float>(zeros)};
    check_every_fused_builtin(z, z);
}

TEST_CASE("compile-time evaluate(): float16, quantized, strided and float64 pairs as the runtime form") {
    const auto pair = numgap_test::make_pair(5000, 9);
    const numgap::tensor_view r{std::span<const float>(pair.reference)};
    std::vector<numgap::float16> half(pair.target.size());
    for (std::size_t i = 0; i < half.size(); ++i) half[i] = numgap::to_float16(pair.target[i]);
    check_every_fused_builtin(r, numgap::tensor_view(half.data(), numgap::dtype::float16, {5000}));

    std::vector<std::uint8_t> codes(pair.target.size());
    for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = std::uint8_t(i * 7 % 256);
    numgap::tensor_view quantized(codes.data(), numgap::dtype::uint8, {5000});
    quantized.with_quantization(numgap::quantization::per_tensor(0.02f, 128));
    check_every_fused_builtin(r, quantized);

    const std::int64_t shape[] = {2500}, strides[] = {2};
    const numgap::tensor_view every_other_r(pair.reference.data(), std::span<const std::int64_t>(shape),
                                            std::span<const std::int64_t>(strides));
    const numgap::tensor_view every_other_t(pair.target.data(), std::span<const std::int64_t>(shape),
                                            std::span<const std::int64_t>(strides));
    check_every_fused_builtin(every_other_r, every_other_t);

    const std::vector<double> wide_r(pair.reference.begin(), pair.reference.end()),
        wide_t(pair.target.begin(), pair.target.end());
    const numgap::tensor_view wide_reference{std::span<const double>(wide_r)},
        wide_target{std::span<const double>(wide_t)};
    check_every_fused_builtin(wide_reference, wide_target);
    check_every_fused_builtin(wide_reference, numgap::tensor_view{std::span<const float>(pair.target)});
    check_every_fused_builtin(r, wide_target);

    std::vector<numgap::bfloat16> brain(pair.target.size());
    for (std::size_t i = 0; i < brain.size(); ++i) brain[i] = numgap::to_bfloat16(pair.target[i]);
    check_every_fused_builtin(r, numgap::tensor_view(brain.data(), numgap::dtype::bfloat16, {5000}));
}

TEST_CASE("compile-time evaluate(): per-channel quantized and NHWC targets as the runtime form") {
    const std::int64_t n = 2, c = 5, h = 7, w = 9;
    const auto pair = numgap_test::make_pair(std::size_t(n * c * h * w), 17);
    const numgap::tensor_view r(pair.reference.data(), {n, c, h, w});
    std::vector<float> nhwc(pair.target.size());
    for (std::int64_t in = 0; in < n; ++in)
        for (std::int64_t ic = 0; ic < c; ++ic)
            for (std::int64_t ih = 0; ih < h; ++ih)
                for (std::int64_t iw = 0; iw < w; ++iw)
                    nhwc[std::size_t(((in * h + ih) * w + iw) * c + ic)] =
                        pair.target[std::size_t(((in * c + ic) * h + ih) * w + iw)];
    numgap::tensor_view channels_last(nhwc.data(), {n, h, w, c});
    channels_last.with_axis_order({0, 2, 3, 1});
    check_every_fused_builtin(r, channels_last);

    std::vector<std::int8_t> codes(pair.target.size());
    for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = std::int8_t(int(i * 11 % 251) - 125);
    const float scales[] = {0.01f, 0.02f, 0.005f, 0.03f, 0.015f};
    const std::int32_t zero_points[] = {0, 3, -2, 1, 0};
    numgap::tensor_view per_channel(codes.data(), numgap::dtype::int8, {n, c, h, w});
    per_channel.with_quantization(numgap::quantization::along(1, scales, zero_points));
    check_every_fused_builtin(r, per_channel);
}

TEST_CASE("compile-time evaluate(): mixes the fused pass cannot serve alone still match the runtime form") {
    const auto pair = numgap_test::make_pair(4096, 31);
    const numgap::tensor_view r(pair.reference.data(), {64, 64}), t(pair.target.data(), {64, 64});
    // Two allclose with other tolerances: the second runs as a reduction.
    check_typed_equals_runtime(r, t, numgap::allclose{0.1, 0}, numgap::cosine{}, numgap::allclose{1.0, 0});
    // max_rel and psnr_db need the closeness tier but claim no tolerance.
    check_typed_equals_runtime(r, t, numgap::max_rel{}, numgap::allclose{0, 1e-3}, numgap::psnr_db{});
    // Whole-tensor metrics and a user reduction beside the built-ins.
    check_typed_equals_runtime(r, t, numgap::kl_div{}, numgap::cosine{}, numgap::topk{}, numgap_test::sum_of_target{});
}

TEST_CASE("compile-time evaluate(): refuses a bad pair as the runtime form does") {
    const std::vector<float> a(12, 1.0f), b(12, 1.0f);
    const std::vector<std::uint8_t> flags(12, 1);
    const numgap::tensor_view r(a.data(), {3, 4}), t(b.data(), {4, 3}), empty(a.data(), {0, 4}),
        no_data(static_cast<const float*>(nullptr), {3, 4}), booleans(flags.data(), numgap::dtype::boolean, {3, 4}),
        misaligned(reinterpret_cast<const char*>(b.data()) + 1, numgap::dtype::float32, {3, 4});
    const numgap::tensor_view bad_pairs[][2] = {{r, t}, {empty, empty}, {r, no_data}, {r, booleans}, {misaligned, r}};
    for (const auto& pair : bad_pairs) {
        const auto typed =
            numgap_test::caught_error([&] { (void)numgap::evaluate(pair[0], pair[1], numgap::cosine{}); });
        const auto runtime = numgap_test::caught_error(
            [&] { (void)numgap::evaluate(pair[0], pair[1], set_of(numgap::cosine{}), typed_form_options); });
        CAPTURE(runtime ? runtime->what() : "");
        REQUIRE(typed.has_value());
        REQUIRE(runtime.has_value());
        CHECK(typed->kind() == runtime->kind());
        CHECK(std::string(typed->what()) == std::string(runtime->what()));
    }
}
} // TEST_SUITE("metric")
