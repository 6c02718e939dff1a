// Pins accumulate_runs (kernels/fused/fused_kernel.hpp, kernel_table::runs_f32):
// many pairs of float32 runs read as one stream must meet the fused kernel's
// accuracy bounds against the long-double oracle of the concatenated pair,
// whatever the run lengths (0, 1, around the vector width and flush_interval),
// on every kernel this CPU can run.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/kernels/constants.hpp>
#include <numgap/kernels/dispatch/dispatch.hpp>
#include <numgap/kernels/fused/fused_kernel.hpp>
#include <numgap/kernels/scalar_reference.hpp>

#include "accuracy_helpers.hpp"

namespace accumulate_runs_test { // named: the test units are unity builds

using numgap::kernels::flush_interval;
using numgap::kernels::kernel_feature::closeness;
using numgap::kernels::kernel_feature::side_statistics;
using numgap_test::one_minus_cosine;
using numgap_test::relative_error;

// r and t cut into runs of the given lengths (cycled until n is covered),
// handed over in a shuffled order: the sums must not depend on either.
struct cut_pair {
    std::vector<const float*> references, targets;
    std::vector<std::size_t> lengths;
};

cut_pair cut(const std::vector<float>& r, const std::vector<float>& t, const std::vector<std::size_t>& pattern,
             unsigned seed) {
    cut_pair runs;
    for (std::size_t at = 0, k = 0; at < r.size(); ++k) {
        const std::size_t length = std::min(pattern[k % pattern.size()], r.size() - at);
        runs.references.push_back(r.data() + at);
        runs.targets.push_back(t.data() + at);
        runs.lengths.push_back(length);
        at += length;
    }
    std::vector<std::size_t> order(runs.lengths.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937(seed));
    cut_pair shuffled;
    for (const std::size_t i : order) {
        shuffled.references.push_back(runs.references[i]);
        shuffled.targets.push_back(runs.targets[i]);
        shuffled.lengths.push_back(runs.lengths[i]);
    }
    return shuffled;
}

numgap::kernels::pair_moments accumulate(const numgap::kernels::kernel_table& table, const cut_pair& runs,
                                         unsigned features = 0) {
    numgap::kernels::pair_moments moments;
    table.runs_f32(runs.references.data(), runs.targets.data(), runs.lengths.data(), runs.lengths.size(),
                   {features, 1e-8, 1e-5}, moments);
    return moments;
}

std::vector<std::size_t> patterns_of(std::size_t width) {
    return {0,    1,    width - 1,          width,          width + 1,          3 * width + 5, 63, 64, 65,
            1000, 1024, flush_interval - 1, flush_interval, flush_interval + 1, 5000};
}

TEST_SUITE("kernels") {
TEST_CASE("accumulate_runs: runs of any length, in any order, meet the accuracy bounds of the whole pair") {
    const std::size_t n = 1'000'000;
    const auto [r, t] = numgap_test::perturbed_pair(n, 11);
    const auto oracle = numgap::kernels::scalar_reference<float>(r, t);
    // Each pattern alone (runs of one length) and all of them mixed.
    const std::vector<std::size_t> all = patterns_of(16);
    std::vector<std::vector<std::size_t>> patterns = {all};
    // 63: three remainder vectors a run on AVX-512, which the chains count.
    for (const std::size_t length : {std::size_t(1), std::size_t(7), std::size_t(15), std::size_t(17), std::size_t(63),
                                     std::size_t(100), std::size_t(1024), flush_interval + 1})
        patterns.push_back({length});
    for (const auto& table : numgap::kernels::available_kernels()) {
        CAPTURE(std::string_view(table.arch_name));
        for (std::size_t p = 0; p < patterns.size(); ++p) {
            CAPTURE(p);
            const numgap::kernels::pair_moments m = accumulate(table, cut(r, t, patterns[p], unsigned(p)));
            CHECK(m.count == std::int64_t(n));
            CHECK(relative_error(m.sum_squared_diff / double(n), oracle.mse()) < 1e-7);
            CHECK(relative_error(m.sum_abs_diff / double(n), oracle.atol()) < 1e-7);
            CHECK(relative_error(m.sum_squared_reference, oracle.sum_squared_reference) < 1e-7);
            CHECK(relative_error(m.sum_squared_target, oracle.sum_squared_target) < 1e-7);
            CHECK(relative_error(one_minus_cosine(m), oracle.one_minus_cosine()) < 1e-6);
            CHECK(m.max_abs_diff == double(float(oracle.max_abs())));
        }
    }
}

TEST_CASE("accumulate_runs: no runs, empty runs, overflowing and NaN runs, and the tiers that take runs one by one") {
    for (const auto& table : numgap::kernels::available_kernels()) {
        CAPTURE(std::string_view(table.arch_name));
        // Nothing to read: nothing changes.
        numgap::kernels::pair_moments none;
        table.runs_f32(nullptr, nullptr, nullptr, 0, {}, none);
        CHECK(none.count == 0);
        CHECK(none.sum_squared_diff == 0);
        const float one = 1.0f, two = 2.0f;
        const float* references[3] = {&one, &one, &one};
        const float* targets[3] = {&two, &two, &two};
        const std::size_t lengths[3] = {0, 1, 0};
        numgap::kernels::pair_moments single;
        table.runs_f32(references, targets, lengths, 3, {}, single);
        CHECK(single.count == 1);
        CHECK(single.sum_squared_diff == 1.0);
        CHECK(single.max_abs_diff == 1.0);

        // Float partials overflow in one run among many: the chunk is redone
        // in float64 run by run, and the sums stay finite and right.
        std::vector<float> r(3000), t(3000);
        for (std::size_t i = 0; i < r.size(); ++i) {
            r[i] = float(i % 7) - 3.0f;
            t[i] = r[i] + 0.25f;
        }
        for (std::size_t i = 1200; i < 1300; ++i) r[i] = 3e19f;
        const auto oracle = numgap::kernels::scalar_reference<float>(r, t);
        const numgap::kernels::pair_moments big = accumulate(table, cut(r, t, {13, 100, 1, 250}, 3));
        CHECK(std::isfinite(big.sum_squared_diff));
        CHECK(relative_error(big.sum_squared_diff, oracle.sum_squared_diff) < 1e-12);
        CHECK(relative_error(big.sum_squared_reference, oracle.sum_squared_reference) < 1e-12);
        CHECK(big.max_abs_diff == double(float(oracle.max_abs())));

        // A NaN makes the sums NaN (how metrics see it, fused_kernel.hpp).
        t[2500] = std::numeric_limits<float>::quiet_NaN();
        CHECK(std::isnan(accumulate(table, cut(r, t, {16, 17}, 4)).sum_abs_diff));
        t[2500] = 0.0f;

        // Side statistics and closeness: each run on its own, exactly as
        // block_f32 run after run.
        const cut_pair runs = cut(r, t, {5, 64, 2049}, 5);
        for (const unsigned features : {side_statistics, closeness, side_statistics | closeness}) {
            CAPTURE(features);
            numgap::kernels::pair_moments one_by_one;
            for (std::size_t k = 0; k < runs.lengths.size(); ++k)
                table.block_f32(runs.references[k], runs.targets[k], runs.lengths[k], {features, 1e-8, 1e-5},
                                one_by_one);
            const numgap::kernels::pair_moments together = accumulate(table, runs, features);
            CHECK(together.count == one_by_one.count);
            CHECK(together.sum_squared_diff == one_by_one.sum_squared_diff);
            CHECK(together.not_close_count == one_by_one.not_close_count);
            CHECK(together.reference.mean == one_by_one.reference.mean);
        }
    }
}
} // TEST_SUITE("kernels")

} // namespace accumulate_runs_test
