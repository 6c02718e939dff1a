// Pins kl_div and topk (metric/kl_div.hpp, metric/topk.hpp): row semantics
// over the reference's last axis, edge cases, and the long-double oracle.
#include <cstdint>
#include <random>
#include <vector>

#include <fstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <numgap/kernels/scalar_reference.hpp>

#include "../core/caught_error.hpp"
#include "test_support.hpp"

using namespace numgap_test;

namespace {
numgap::tensor_view matrix(const std::vector<float>& values, std::int64_t rows, std::int64_t columns) {
    return numgap::tensor_view(values.data(), {rows, columns});
}
} // namespace

TEST_SUITE("metric") {
TEST_CASE("kl_div matches the long-double oracle on random logits, rows of the last axis") {
    std::mt19937 generator(3);
    std::normal_distribution<float> normal(0, 3);
    std::vector<float> r(7 * 33), t(7 * 33);
    for (std::size_t i = 0; i < r.size(); ++i) {
        r[i] = normal(generator);
        t[i] = r[i] + 0.3f * normal(generator);
    }
    const double value = numgap::kl_div{}(matrix(r, 7, 33), matrix(t, 7, 33));
    const long double oracle = numgap::kernels::kl_div_reference<float>(r, t, 33);
    CHECK(value == doctest::Approx(double(oracle)).epsilon(1e-12));
    CHECK(value > 0);
}

TEST_CASE("kl_div edge cases: identical rows 0, scalar 0, masked -inf logits, NaN, all -inf") {
    const std::vector<float> r = {1, 2, 3, 4, 5, 6};
    CHECK(numgap::kl_div{}(matrix(r, 2, 3), matrix(r, 2, 3)) == 0.0);
    // Adding a constant to a row does not change its softmax.
    const std::vector<float> shifted = {11, 12, 13, 4, 5, 6};
    CHECK(numgap::kl_div{}(matrix(r, 2, 3), matrix(shifted, 2, 3)) == doctest::Approx(0.0).scale(1e-12));
    const float one = 1.0f;
    CHECK(numgap::kl_div{}(numgap::tensor_view(&one, {}), numgap::tensor_view(&one, {})) == 0.0);
    const std::vector<float> masked_r = {-inf_f, 0, 0}, masked_t = {-inf_f, 0, 1};
    CHECK(std::isfinite(numgap::kl_div{}(matrix(masked_r, 1, 3), matrix(masked_t, 1, 3))));
    const std::vector<float> target_masks_mass = {0, -inf_f, 0};
    CHECK(numgap::kl_div{}(matrix(masked_t, 1, 3), matrix(target_masks_mass, 1, 3)) == std::numeric_limits<double>::infinity());
    const std::vector<float> with_nan = {1, nan_f, 3, 4, 5, 6};
    CHECK(std::isnan(numgap::kl_div{}(matrix(r, 2, 3), matrix(with_nan, 2, 3))));
    const std::vector<float> all_masked = {-inf_f, -inf_f, -inf_f};
    CHECK(std::isnan(numgap::kl_div{}(matrix(all_masked, 1, 3), matrix(all_masked, 1, 3))));
    CHECK_FALSE(evaluate_one<numgap::kl_div>({1, nan_f}, {1, 2}).passed);
}

TEST_CASE("topk: default k = 1 is argmax disagreement; ties go to the lower index") {
    CHECK(numgap::topk{}.k == 1);
    const std::vector<float> r = {1, 5, 2, /**/ 3, 3, 0, /**/ 9, 1, 1};
    const std::vector<float> t = {1, 4, 2, /**/ 3, 3.5f, 0, /**/ 9, 1, 1};
    // The second row ties at indices 0 and 1 in r (the lower index wins); t picks 1.
    CHECK(numgap::topk{}(matrix(r, 3, 3), matrix(t, 3, 3)) == doctest::Approx(1.0 / 3.0));
    CHECK(numgap::topk{3}(matrix(r, 3, 3), matrix(t, 3, 3)) == 0.0);
    CHECK(numgap::topk{2}(matrix(r, 3, 3), matrix(t, 3, 3)) == 0.0);
}

TEST_CASE("topk matches the oracle for k = 1..8 on random rows with ties") {
    std::mt19937 generator(5);
    std::uniform_int_distribution<int> small(0, 6);
    std::vector<float> r(40 * 8), t(40 * 8);
    for (std::size_t i = 0; i < r.size(); ++i) {
        r[i] = float(small(generator));
        t[i] = small(generator) < 5 ? r[i] : float(small(generator));
    }
    for (std::int64_t k = 1; k <= 8; ++k) {
        CAPTURE(k);
        CHECK(numgap::topk{k}(matrix(r, 40, 8), matrix(t, 40, 8)) ==
              doctest::Approx(double(numgap::kernels::topk_reference<float>(r, t, 8, std::size_t(k)))));
    }
}

TEST_CASE("topk rejects k outside 1..row length with a message naming the tensor; NaN gives NaN") {
    const std::vector<float> r = {1, 2, 3, 4};
    auto rv = matrix(r, 2, 2);
    rv.with_name("logits");
    CHECK_THROWS_WITH_AS(numgap::topk{3}(rv, matrix(r, 2, 2)),
                         doctest::Contains("'logits'"), numgap::error);
    CHECK_THROWS_AS(numgap::topk{0}(rv, matrix(r, 2, 2)), numgap::error);
    const auto k_too_large = numgap_test::caught_error([&] { (void)numgap::topk{3}(rv, matrix(r, 2, 2)); });
    REQUIRE(k_too_large.has_value());
    CHECK(k_too_large->kind() == numgap::error_kind::usage);
    CHECK(k_too_large->where().item == "logits");
    const std::vector<float> with_nan = {1, 2, nan_f, 4};
    CHECK(std::isnan(numgap::topk{}(rv, matrix(with_nan, 2, 2))));
}

TEST_CASE("row metrics follow the target's axis_order: rows are the reference's last axis") {
    // Reference [2 rows, 3 columns]; the target stores the transpose [3, 2].
    const std::vector<float> r = {1, 9, 2, 8, 3, 7};
    const std::vector<float> t_transposed = {1, 8, 9, 3, 2, 7};
    auto t = numgap::tensor_view(t_transposed.data(), {3, 2});
    t.with_axis_order({1, 0});
    CHECK(numgap::topk{}(matrix(r, 2, 3), t) == 0.0);
    CHECK(numgap::kl_div{}(matrix(r, 2, 3), t) == 0.0);
}

TEST_CASE("kl_div and topk on rows longer than one block match the oracle, whatever the block boundaries") {
    // Rows of 2.5 blocks, so every row is read in three blocks of which the
    // last is partial, and the maximum and the top k sit in different blocks.
    const std::int64_t columns = numgap::kernels::row_block_elements * 5 / 2, rows = 2;
    std::mt19937 generator(11);
    std::normal_distribution<float> normal(0, 3);
    std::vector<float> r(std::size_t(rows * columns)), t(r.size());
    for (std::size_t i = 0; i < r.size(); ++i) {
        r[i] = normal(generator);
        t[i] = r[i] + 0.3f * normal(generator);
    }
    r[std::size_t(columns) - 7] = 40; // the last block of row 0 holds its maximum
    t[std::size_t(columns) - 7] = 40;
    r[std::size_t(columns) + 70000] = 45; // row 1: the middle block
    t[std::size_t(columns) + 3] = 45.5f;
    const double kl = numgap::kl_div{}(matrix(r, rows, columns), matrix(t, rows, columns));
    CHECK(kl == doctest::Approx(double(numgap::kernels::kl_div_reference<float>(r, t, std::size_t(columns)))).epsilon(1e-9));
    for (std::int64_t k : {1, 2, 5}) {
        CAPTURE(k);
        CHECK(numgap::topk{k}(matrix(r, rows, columns), matrix(t, rows, columns)) ==
              double(numgap::kernels::topk_reference<float>(r, t, std::size_t(columns), std::size_t(k))));
    }
    CHECK(numgap::topk{1}(matrix(r, rows, columns), matrix(t, rows, columns)) == 0.5); // row 1 differs
    // A NaN in the last block of a row still makes the result NaN.
    t.back() = nan_f;
    CHECK(std::isnan(numgap::kl_div{}(matrix(r, rows, columns), matrix(t, rows, columns))));
    CHECK(std::isnan(numgap::topk{}(matrix(r, rows, columns), matrix(t, rows, columns))));
}

#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)

TEST_CASE("kl_div and topk work in bounded memory on a tensor whose float64 copy would not fit") {
    // One int8 row of 32 Mi elements per side (32 MiB each). A float64 copy of
    // the row would need 256 MiB per side; the child may grow by 64 MiB only.
    const std::int64_t count = std::int64_t(32) << 20;
    std::vector<std::int8_t> r(static_cast<std::size_t>(count)), t(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < r.size(); ++i) {
        r[i] = std::int8_t(i * 2654435761u % 200 - 100);
        t[i] = std::int8_t(r[i] < 0 ? r[i] - 1 : r[i]); // the top k (values >= 0) is unchanged
    }
    r[12345] = 127;
    t[12345] = 127;
    const numgap::tensor_view reference(r.data(), {count}), target(t.data(), {count});
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        long pages = 0;
        std::ifstream("/proc/self/statm") >> pages;
        const rlim_t limit = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (rlim_t(64) << 20);
        const rlimit address_space{limit, limit};
        if (setrlimit(RLIMIT_AS, &address_space) != 0) _exit(90);
        try {
            const double kl = numgap::kl_div{}(reference, target);
            const double differing = numgap::topk{3}(reference, target);
            _exit(std::isfinite(kl) && kl > 0 && differing == 0.0 ? 0 : 1);
        } catch (const std::bad_alloc&) {
            _exit(2);
        }
    }
    int status = 0;
    waitpid(child, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0); // 2: out of memory, as when the row was copied whole
}
#endif
} // TEST_SUITE("metric")
