// Pins prepared_metric_set (metric/prepared_metric_set.hpp): evaluate_into
// gives evaluate()'s values bit for bit (built-ins, a stateful fused metric,
// whole-tensor metrics, a user reduction; side statistics; one and three
// threads, 0 = every core), passed() matches metric_result::passed, and a
// values span of the wrong size is a usage error.
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/metric.hpp>

#include "test_support.hpp"

TEST_SUITE("metric") {

namespace {

struct sum_of_reference { // a user reduction metric riding the fused pass
    static constexpr std::string_view name = "sum_of_reference";
    static constexpr numgap::direction better = numgap::direction::higher_is_better;
    static constexpr std::optional<numgap::pass_rule> default_rule = std::nullopt;
    using state_type = double;
    void accumulate(state_type& s, std::span<const float> r, std::span<const float>) const {
        for (const float x : r) s += double(x);
    }
    void merge(state_type& s, const state_type& o) const { s += o; }
    double finalize(const state_type& s) const { return s; }
};

// Side statistics equal to the bit, NaN included (a NaN from a bug in one path must not hide behind NaN != NaN).
void check_same_stats(const numgap::side_stats& a, const numgap::side_stats& b) {
    CHECK(a.count == b.count);
    CHECK(a.nan_count == b.nan_count);
    CHECK(a.positive_inf_count == b.positive_inf_count);
    CHECK(a.negative_inf_count == b.negative_inf_count);
    CHECK(numgap_test::same_bits(a.min, b.min));
    CHECK(numgap_test::same_bits(a.max, b.max));
    CHECK(numgap_test::same_bits(a.mean, b.mean));
    CHECK(numgap_test::same_bits(a.std, b.std));
}

void check_prepared_equals_evaluate(const numgap::metric_set& set, const numgap::evaluate_options& options,
                                    std::size_t n) {
    std::mt19937 generator(7);
    std::normal_distribution<float> normal(0.5f, 2.0f);
    std::vector<float> reference(n), target(n);
    for (std::size_t i = 0; i < n; ++i) {
        reference[i] = normal(generator);
        target[i] = reference[i] * 1.01f + 0.02f * normal(generator);
    }
    reference[n / 3] = std::numeric_limits<float>::infinity();
    target[n / 2] = std::numeric_limits<float>::quiet_NaN();
    const numgap::tensor_view r{std::span<const float>(reference)}, t{std::span<const float>(target)};

    const numgap::evaluation expected = numgap::evaluate(r, t, set, options);
    const numgap::prepared_metric_set prepared(set, options);
    REQUIRE(prepared.size() == set.size());
    std::vector<double> values(set.size(), 12345.0);
    numgap::side_stats reference_stats, target_stats;
    prepared.evaluate_into(r, t, values, &reference_stats, &target_stats);
    for (std::size_t i = 0; i < values.size(); ++i) {
        INFO(expected.metrics[i].name);
        CHECK(numgap_test::same_bits(values[i], expected.metrics[i].value));
        CHECK(prepared.passed(i, values[i]) == expected.metrics[i].passed);
    }
    if (options.any_side_statistics()) {
        check_same_stats(reference_stats, expected.reference);
        check_same_stats(target_stats, expected.target);
        CHECK(reference_stats.positive_inf_count == 1);
        CHECK(target_stats.nan_count == 1);
        CHECK(std::isnan(reference_stats.min) != options.side_min_max);
        CHECK(std::isnan(reference_stats.mean) != (options.side_statistics || options.side_min_max));
    } else {
        CHECK(expected.target.nan_count == 0); // nothing gathered per side
        CHECK(std::isnan(expected.target.mean));
    }
}

numgap::metric_set every_kind_of_metric() {
    numgap::metric_set set;
    for (const std::string_view name : numgap::builtin_metric_names()) set.add_builtin(name);
    // A second allclose with other tolerances cannot share the fused pass:
    // it runs as a reduction on the pass's blocks.
    set.add(numgap::allclose{1e-3, 1e-2});
    set.add(sum_of_reference{});
    return set;
}

} // namespace

TEST_CASE("prepared_metric_set writes evaluate()'s values bit for bit, with and without side statistics") {
    using options_type = numgap::evaluate_options;
    for (const options_type options : {options_type{1, true}, options_type{1, false}, options_type{1, true, true},
                                       options_type{1, false, false, false}}) {
        CAPTURE(options.side_statistics);
        CAPTURE(options.side_min_max);
        CAPTURE(options.side_counts);
        check_prepared_equals_evaluate(numgap::metric_set::defaults(), options, 5000);
        check_prepared_equals_evaluate(every_kind_of_metric(), options, 5000);
    }
}

TEST_CASE("prepared_metric_set on three threads equals evaluate() on three threads") {
    check_prepared_equals_evaluate(numgap::metric_set::defaults(), {3, true}, 300000);
    check_prepared_equals_evaluate(every_kind_of_metric(), {3, true}, 300000);
}

TEST_CASE("prepared_metric_set: side statistics only where the caller points, values reused across calls") {
    const std::vector<float> a{1, 2, 3, 4}, b{1, 2, 3, 5};
    const numgap::tensor_view r{std::span<const float>(a)}, t{std::span<const float>(b)};
    const numgap::prepared_metric_set prepared(numgap::metric_set::defaults(), {1, true});
    double values[3];
    numgap::side_stats target_stats;
    prepared.evaluate_into(r, t, values, nullptr, &target_stats);
    CHECK(values[1] == doctest::Approx(0.25)); // atol: mean |r - t|
    CHECK(values[2] == doctest::Approx(0.25)); // mse
    CHECK(target_stats.mean == 2.75);
    CHECK(std::isnan(target_stats.max)); // min and max only with side_min_max
    // Default options: the counts, not the mean.
    const numgap::prepared_metric_set counting(numgap::metric_set::defaults());
    const std::vector<float> with_nan{1, std::numeric_limits<float>::quiet_NaN(), 3, 4};
    counting.evaluate_into(r, numgap::tensor_view{std::span<const float>(with_nan)}, values, nullptr, &target_stats);
    CHECK(target_stats.nan_count == 1);
    CHECK(std::isnan(target_stats.mean));
    CHECK_FALSE(prepared.passed(1, values[1]));
    prepared.evaluate_into(r, r, values);
    CHECK(values[1] == 0.0);
    CHECK(prepared.passed(1, values[1]));
}

TEST_CASE("prepared_metric_set rejects a values span of the wrong size as a usage error; threads 0 means every core") {
    const std::vector<float> a{1, 2, 3};
    const numgap::tensor_view r{std::span<const float>(a)};
    const numgap::prepared_metric_set prepared(numgap::metric_set::defaults());
    double two[2];
    CHECK_THROWS_WITH_AS(prepared.evaluate_into(r, r, two), doctest::Contains("room for 2 values; the set has 3"),
                         numgap::error);
    try {
        prepared.evaluate_into(r, r, two);
    } catch (const numgap::error& e) {
        CHECK(e.kind() == numgap::error_kind::usage);
    }
    // parallel_for's rule: 0 is every core, not an error.
    check_prepared_equals_evaluate(numgap::metric_set::defaults(), {0, true}, 300000);
}

} // TEST_SUITE("metric")
