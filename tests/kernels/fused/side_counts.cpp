// Pins the side_counts tier (kernel_options.hpp, fused_kernel.hpp): alone it
// fills each side's NaN / +Inf / -Inf counts exactly, leaves every other side
// statistic untouched and the moments equal to those of a run without it,
// whatever the lengths and wherever the non-finite values sit, on every kernel
// this CPU can run, for float32 and float64 blocks and for accumulate_runs.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/kernels/constants.hpp>
#include <numgap/kernels/dispatch/dispatch.hpp>
#include <numgap/kernels/fused/fused_kernel.hpp>

#include "../same_sums.hpp"

namespace side_counts_test { // named: the test units are unity builds

using numgap::kernels::flush_interval;
using numgap::kernels::kernel_feature::side_counts;

struct expected_counts {
    std::int64_t nan = 0, positive_inf = 0, negative_inf = 0;
};

template <class T>
expected_counts count_directly(std::span<const T> values) {
    expected_counts counts;
    for (const T x : values) {
        counts.nan += std::isnan(x) ? 1 : 0;
        counts.positive_inf += x == std::numeric_limits<T>::infinity() ? 1 : 0;
        counts.negative_inf += x == -std::numeric_limits<T>::infinity() ? 1 : 0;
    }
    return counts;
}

// The counts asked for, and nothing else of the side: no finite count, mean,
// M2, min or max.
template <class T>
void check_side(const numgap::kernels::side_moments& side, std::span<const T> values) {
    const expected_counts want = count_directly(values);
    CHECK(side.nan_count == want.nan);
    CHECK(side.positive_inf_count == want.positive_inf);
    CHECK(side.negative_inf_count == want.negative_inf);
    CHECK(side.finite_count == 0);
    CHECK(side.mean == 0.0);
    CHECK(side.m2 == 0.0);
    CHECK(side.min == std::numeric_limits<double>::infinity());
    CHECK(side.max == -std::numeric_limits<double>::infinity());
}

// A random pair with `how_many` non-finite values (NaN, +Inf, -Inf in turn)
// scattered over each side, clusters within one chunk included.
template <class T>
void make_scattered_pair(std::size_t n, std::size_t how_many, unsigned seed, std::vector<T>& r, std::vector<T>& t) {
    std::mt19937 random(seed);
    std::normal_distribution<T> normal(T(0.5), T(2));
    r.resize(n);
    t.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        r[i] = normal(random);
        t[i] = r[i] + T(0.01) * normal(random);
    }
    if (n == 0) return;
    const T specials[3] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                           -std::numeric_limits<T>::infinity()};
    std::uniform_int_distribution<std::size_t> position(0, n - 1);
    for (std::size_t k = 0; k < how_many; ++k) {
        r[position(random)] = specials[k % 3];
        t[position(random)] = specials[(k + 1) % 3];
    }
}

template <class T>
numgap::kernels::pair_moments run_block(const numgap::kernels::kernel_table& table, const std::vector<T>& r,
                                        const std::vector<T>& t, unsigned features) {
    numgap::kernels::pair_moments moments;
    const numgap::kernels::kernel_options options{features, 1e-8, 1e-5};
    if constexpr (std::is_same_v<T, float>) table.block_f32(r.data(), t.data(), r.size(), options, moments);
    else table.block_f64(r.data(), t.data(), r.size(), options, moments);
    return moments;
}

template <class T>
void check_every_length(const numgap::kernels::kernel_table& table) {
    for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(15), std::size_t(16),
                                std::size_t(17), std::size_t(63), std::size_t(64), std::size_t(65), flush_interval - 1,
                                flush_interval, flush_interval + 1, std::size_t(5000), std::size_t(10001)}) {
        for (const std::size_t how_many : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(7), n}) {
            CAPTURE(n);
            CAPTURE(how_many);
            std::vector<T> r, t;
            make_scattered_pair<T>(n, how_many, unsigned(n * 31 + how_many), r, t);
            const auto counted = run_block(table, r, t, side_counts);
            numgap_test::check_same_sums(counted, run_block(table, r, t, 0));
            check_side<T>(counted.reference, r);
            check_side<T>(counted.target, t);
        }
    }
}

TEST_SUITE("kernels") {
TEST_CASE("side_counts alone: exact NaN and +-Inf counts, nothing else of the sides, the moments unchanged, every "
          "arch, float32 and float64") {
    for (const auto& table : numgap::kernels::available_kernels()) {
        CAPTURE(std::string_view(table.arch_name));
        check_every_length<float>(table);
        check_every_length<double>(table);
    }
}

TEST_CASE("side_counts: finite values too large to square leave the counts at zero, and a NaN beside them is counted") {
    for (const auto& table : numgap::kernels::available_kernels()) {
        CAPTURE(std::string_view(table.arch_name));
        std::vector<float> r(5000, 1.5f), t(5000, -0.5f);
        for (std::size_t i = 2100; i < 2200; ++i) r[i] = 3e19f; // float partial sums of squares overflow
        r[3] = 1e38f;
        t[4096] = 1e30f;
        auto counted = run_block(table, r, t, side_counts);
        numgap_test::check_same_sums(counted, run_block(table, r, t, 0));
        CHECK(std::isfinite(counted.sum_squared_reference)); // recomputed in float64
        check_side<float>(counted.reference, r);
        check_side<float>(counted.target, t);
        r[2150] = std::numeric_limits<float>::quiet_NaN();
        t[4097] = -std::numeric_limits<float>::infinity();
        counted = run_block(table, r, t, side_counts);
        CHECK(counted.reference.nan_count == 1);
        CHECK(counted.target.negative_inf_count == 1);
        CHECK(counted.reference.positive_inf_count == 0);
        const std::vector<double> huge = {1e200, -1e300, 2.0, std::numeric_limits<double>::infinity()};
        const std::vector<double> small = {1.0, 2.0, 3.0, 4.0};
        const auto wide = run_block(table, huge, small, side_counts);
        CHECK(wide.reference.positive_inf_count == 1);
        CHECK(wide.reference.nan_count == 0);
        CHECK(wide.target.positive_inf_count == 0);
    }
}

TEST_CASE("side_counts through accumulate_runs: the counts of every run, the moments of the run without the tier") {
    for (const auto& table : numgap::kernels::available_kernels()) {
        CAPTURE(std::string_view(table.arch_name));
        std::vector<float> r, t;
        make_scattered_pair<float>(9000, 11, 7, r, t);
        std::vector<const float*> references, targets;
        std::vector<std::size_t> lengths;
        const std::size_t pattern[] = {1, 17, 700, 0, flush_interval + 3, 64, 5};
        for (std::size_t at = 0, k = 0; at < r.size(); ++k) {
            const std::size_t length = std::min(pattern[k % 7], r.size() - at);
            references.push_back(r.data() + at);
            targets.push_back(t.data() + at);
            lengths.push_back(length);
            at += length;
        }
        auto runs = [&](unsigned features) {
            numgap::kernels::pair_moments moments;
            table.runs_f32(references.data(), targets.data(), lengths.data(), lengths.size(), {features, 1e-8, 1e-5},
                           moments);
            return moments;
        };
        const auto counted = runs(side_counts);
        numgap_test::check_same_sums(counted, runs(0));
        check_side<float>(counted.reference, r);
        check_side<float>(counted.target, t);
        // With the closeness tier each run is a pass of its own: the same counts.
        using numgap::kernels::kernel_feature::closeness;
        const auto with_closeness = runs(side_counts | closeness);
        numgap_test::check_same_sums(with_closeness, runs(closeness));
        CHECK(with_closeness.not_close_count == runs(closeness).not_close_count);
        check_side<float>(with_closeness.reference, r);
        check_side<float>(with_closeness.target, t);
    }
}
} // TEST_SUITE("kernels")

} // namespace side_counts_test
