// Pins what metric/evaluate.hpp and prepared_metric_set.hpp promise about the
// heap: built-in sum metrics on one thread allocate nothing per call, in the
// runtime form with default options, the prepared form and the compile-time
// form, on dense and planned pairs alike. Two controls do allocate (a user
// reduction metric's state; the compile-time form's metric_set for two
// allclose with other tolerances), which shows the count sees the calls.
#include <array>
#include <cstdint>
#include <iterator>
#include <span>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/metric.hpp>

#include "../allocation_counter.hpp"
#include "oracle_check.hpp"

namespace {

struct counted_pairs {
    numgap_test::random_pair pair;
    std::vector<numgap::float16> half;
    std::vector<std::uint8_t> codes;
    std::vector<double> wide_reference, wide_target;
};

counted_pairs make_counted_pairs(std::size_t n) {
    counted_pairs data{numgap_test::make_pair(n, 41), {}, {}, {}, {}};
    for (const float x : data.pair.target) data.half.push_back(numgap::to_float16(x));
    for (std::size_t i = 0; i < n; ++i) data.codes.push_back(std::uint8_t(i * 13 % 256));
    data.wide_reference.assign(data.pair.reference.begin(), data.pair.reference.end());
    data.wide_target.assign(data.pair.target.begin(), data.pair.target.end());
    return data;
}

} // namespace

TEST_SUITE("metric") {
TEST_CASE("evaluate() on built-in sum metrics with one thread allocates nothing per call, in all three forms") {
    if (!numgap_test::counting_allocations) {
        MESSAGE("operator new is not counted under this sanitizer: nothing to check");
        return;
    }
    for (const std::size_t n : {std::size_t(1000), std::size_t(200003)}) {
        CAPTURE(n);
        const counted_pairs data = make_counted_pairs(n);
        const auto count = std::int64_t(n);
        const numgap::tensor_view reference{std::span<const float>(data.pair.reference)};
        numgap::tensor_view quantized(data.codes.data(), numgap::dtype::uint8, {count});
        quantized.with_quantization(numgap::quantization::per_tensor(0.02f, 128));
        const std::int64_t half_shape[] = {count / 2}, every_other[] = {2};
        const numgap::tensor_view targets[] = {
            numgap::tensor_view{std::span<const float>(data.pair.target)},
            numgap::tensor_view(data.half.data(), numgap::dtype::float16, {count}),
            quantized,
        };
        const numgap::tensor_view strided_reference(data.pair.reference.data(),
                                                    std::span<const std::int64_t>(half_shape),
                                                    std::span<const std::int64_t>(every_other));
        const numgap::tensor_view strided_target(data.pair.target.data(), std::span<const std::int64_t>(half_shape),
                                                 std::span<const std::int64_t>(every_other));
        const numgap::tensor_view wide_reference{std::span<const double>(data.wide_reference)},
            wide_target{std::span<const double>(data.wide_target)};
        const std::pair<numgap::tensor_view, numgap::tensor_view> pairs[] = {{reference, targets[0]},
                                                                             {reference, targets[1]},
                                                                             {reference, targets[2]},
                                                                             {strided_reference, strided_target},
                                                                             {wide_reference, wide_target}};

        numgap::metric_set set = numgap::metric_set::defaults();
        set.add(numgap::max_abs{}).add(numgap::allclose{}).add(numgap::psnr_db{});
        const numgap::prepared_metric_set prepared(set);
        std::vector<double> values(set.size());
        numgap::side_stats reference_stats, target_stats;
        for (std::size_t p = 0; p < std::size(pairs); ++p) {
            CAPTURE(p);
            const numgap::tensor_view &r = pairs[p].first, &t = pairs[p].second;
            numgap::evaluate(r, t, set); // the first call may set up the kernel table
            // What a call returns is checked after the count: a failed
            // CHECK inside the counted call would allocate for its report.
            numgap::evaluation e, with_statistics;
            CHECK(numgap_test::allocations_of([&] { e = numgap::evaluate(r, t, set); }) == 0);
            CHECK(e.metrics.size() == set.size());
            CHECK(numgap_test::allocations_of([&] {
                      with_statistics = numgap::evaluate(r, t, set, {.side_statistics = true, .side_min_max = true});
                  }) == 0);
            CHECK(with_statistics.reference.count == t.size());
            CHECK(numgap_test::allocations_of(
                      [&] { prepared.evaluate_into(r, t, values, &reference_stats, &target_stats); }) == 0);
            CHECK(values[0] == e.metrics[0].value);
            // The compile-time form takes the kernel directly for every mix
            // of sum-based built-ins whose tolerances agree (no metric_set).
            std::array<numgap::metric_result, 4> four;
            CHECK(numgap_test::allocations_of([&] {
                      four =
                          numgap::evaluate(r, t, numgap::cosine{}, numgap::atol{}, numgap::mse{}, numgap::allclose{});
                  }) == 0);
            CHECK(four[0].name == "cosine");
            std::array<numgap::metric_result, 3> closeness;
            CHECK(
                numgap_test::allocations_of([&] {
                    closeness = numgap::evaluate(r, t, numgap::max_rel{}, numgap::allclose{0, 1e-3}, numgap::psnr_db{});
                }) == 0);
            CHECK(closeness[1].name == "allclose");
            std::array<numgap::metric_result, 2> same_tolerances;
            CHECK(numgap_test::allocations_of([&] {
                      same_tolerances = numgap::evaluate(r, t, numgap::allclose{1e-3, 0}, numgap::allclose{1e-3, 0});
                  }) == 0);
            CHECK(same_tolerances[0].value == same_tolerances[1].value);
        }
        // The controls: a user reduction's state lives on the heap, and two
        // allclose with other tolerances make the compile-time form build a
        // metric_set (the second runs as a reduction): the count sees both.
        numgap::metric_set with_user_metric = numgap::metric_set::defaults();
        with_user_metric.add(numgap_test::sum_of_target{});
        CHECK(numgap_test::allocations_of([&] { numgap::evaluate(reference, targets[0], with_user_metric); }) > 0);
        CHECK(numgap_test::allocations_of([&] {
                  numgap::evaluate(reference, targets[0], numgap::allclose{0.1, 0}, numgap::allclose{1.0, 0});
              }) > 0);
    }
}
} // TEST_SUITE("metric")
