// Pins kernels::accumulate_views (numgap/kernels/table/accumulate_views.hpp):
// its direct path for dense float32 / float64 pairs gives, on every arch this
// CPU runs and for every kernel tier, the moments of the plan's walk bit for
// bit (lengths around the vector widths and the chunk size, NaN and Inf
// included, flat, rank 0 and with size-1 dimensions of any stride), and pairs
// that need a plan get its moments too.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/core/half.hpp>
#include <numgap/kernels/dispatch/dispatch.hpp>
#include <numgap/kernels/plan/pair_plan.hpp>
#include <numgap/kernels/table/accumulate_plan.hpp>
#include <numgap/kernels/table/accumulate_views.hpp>

namespace {

namespace kernel_feature = numgap::kernels::kernel_feature;
using numgap::kernels::kernel_options;
using numgap::kernels::kernel_table;
using numgap::kernels::pair_moments;
using numgap::kernels::side_moments;

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

bool same_side(const side_moments& a, const side_moments& b) {
    return a.finite_count == b.finite_count && a.nan_count == b.nan_count &&
           a.positive_inf_count == b.positive_inf_count && a.negative_inf_count == b.negative_inf_count &&
           same_bits(a.min, b.min) && same_bits(a.max, b.max) && same_bits(a.mean, b.mean) && same_bits(a.m2, b.m2);
}

bool same_moments(const pair_moments& a, const pair_moments& b) {
    return a.count == b.count && same_bits(a.sum_squared_diff, b.sum_squared_diff) &&
           same_bits(a.sum_abs_diff, b.sum_abs_diff) && same_bits(a.max_abs_diff, b.max_abs_diff) &&
           same_bits(a.sum_squared_reference, b.sum_squared_reference) &&
           same_bits(a.sum_squared_target, b.sum_squared_target) &&
           same_bits(a.sum_diff_times_sum, b.sum_diff_times_sum) &&
           same_bits(a.max_abs_reference, b.max_abs_reference) && same_bits(a.max_relative_diff, b.max_relative_diff) &&
           a.not_close_count == b.not_close_count && same_side(a.reference, b.reference) &&
           same_side(a.target, b.target);
}

pair_moments through_plan(const numgap::tensor_view& r, const numgap::tensor_view& t, const kernel_table& table,
                          const kernel_options& options) {
    numgap::kernels::pair_plan plan = numgap::kernels::make_pair_plan(r, t);
    plan.widen_f32 = table.widen_f32;
    plan.transpose_f32 = table.transpose_f32;
    pair_moments moments;
    numgap::kernels::accumulate_plan(plan, 0, plan.count, table, options, moments);
    return moments;
}

pair_moments through_views(const numgap::tensor_view& r, const numgap::tensor_view& t, const kernel_table& table,
                           const kernel_options& options) {
    pair_moments moments;
    numgap::kernels::accumulate_views(r, t, table, options, moments);
    return moments;
}

std::vector<kernel_options> every_tier() {
    kernel_options plain{}, with_sides{}, with_min_max{}, with_closeness{};
    with_sides.features |= kernel_feature::side_statistics;
    with_min_max.features |= kernel_feature::side_statistics | kernel_feature::side_min_max;
    with_closeness.features |= kernel_feature::closeness;
    return {plain, with_sides, with_min_max, with_closeness};
}

template <class T>
void check_dense_pairs(bool with_non_finite) {
    std::mt19937 generator(7);
    std::normal_distribution<double> normal(3.0, 2.0); // an offset mean: the side statistics' shifted re-read
    for (const std::size_t n :
         {1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 1023, 2047, 2048, 2049, 4096 + 5}) {
        std::vector<T> reference(n), target(n);
        for (std::size_t i = 0; i < n; ++i) {
            reference[i] = T(normal(generator));
            target[i] = T(double(reference[i]) + 0.01 * normal(generator));
        }
        if (with_non_finite) {
            target[n / 2] = std::numeric_limits<T>::quiet_NaN();
            reference[n - 1] = std::numeric_limits<T>::infinity();
            if (n > 2) target[0] = -std::numeric_limits<T>::infinity();
        }
        // Flat; rank 3 with size-1 dimensions whose strides are anything
        // (still dense: the shortcut); rank 0 for one element.
        const std::int64_t padded[] = {1, std::int64_t(n), 1};
        const std::int64_t reference_strides[] = {999, 1, 7}, target_strides[] = {0, 1, -5};
        std::vector<std::pair<numgap::tensor_view, numgap::tensor_view>> pairs = {
            {numgap::tensor_view{std::span<const T>(reference)}, numgap::tensor_view{std::span<const T>(target)}},
            {numgap::tensor_view(reference.data(), padded, reference_strides),
             numgap::tensor_view(target.data(), padded, target_strides)}};
        if (n == 1)
            pairs.emplace_back(numgap::tensor_view(reference.data(), std::span<const std::int64_t>()),
                               numgap::tensor_view(target.data(), std::span<const std::int64_t>()));
        for (const auto& pair : pairs)
            for (const kernel_table& table : numgap::kernels::available_kernels()) {
                const numgap::tensor_view& r = pair.first;
                const numgap::tensor_view& t = pair.second;
                const std::string_view arch = table.arch_name;
                const int rank = r.rank();
                for (const kernel_options& options : every_tier()) {
                    CAPTURE(arch);
                    CAPTURE(n);
                    CAPTURE(rank);
                    CAPTURE(options.features);
                    REQUIRE(r.is_contiguous());
                    const pair_moments moments = through_views(r, t, table, options);
                    CHECK(same_moments(moments, through_plan(r, t, table, options)));
                    CHECK(moments.count == std::int64_t(n));
                }
            }
    }
}

} // namespace

TEST_SUITE("kernels") {
TEST_CASE("accumulate_views reads dense float32 pairs directly, with the plan's moments bit for bit") {
    check_dense_pairs<float>(false);
    check_dense_pairs<float>(true);
}

TEST_CASE("accumulate_views reads dense float64 pairs directly, with the plan's moments bit for bit") {
    check_dense_pairs<double>(false);
    check_dense_pairs<double>(true);
}

TEST_CASE("accumulate_views gives the plan's moments for every pair that is not two dense views of one float type") {
    const std::size_t rows = 37, columns = 29, n = rows * columns;
    std::vector<float> reference(n), transposed(n), strided(2 * n);
    std::vector<double> wide(n);
    std::vector<numgap::float16> half(n);
    for (std::size_t i = 0; i < n; ++i) {
        reference[i] = std::sin(float(i) * 0.1f);
        strided[2 * i] = reference[i] * 1.001f;
        wide[i] = double(reference[i]) + 1e-4;
        half[i] = numgap::to_float16(reference[i]);
    }
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < columns; ++c) transposed[c * rows + r] = reference[r * columns + c] - 0.002f;
    const std::int64_t shape[] = {std::int64_t(rows), std::int64_t(columns)};
    const numgap::tensor_view r(reference.data(), shape);
    const std::int64_t every_other[] = {2 * std::int64_t(columns), 2};
    const std::int64_t stored_shape[] = {std::int64_t(columns), std::int64_t(rows)};
    numgap::tensor_view nhwc(transposed.data(), stored_shape);
    nhwc.with_axis_order({1, 0});
    const numgap::tensor_view targets[] = {numgap::tensor_view(strided.data(), shape, every_other), nhwc,
                                           numgap::tensor_view(wide.data(), shape),
                                           numgap::tensor_view(half.data(), numgap::dtype::float16, shape)};
    for (const numgap::tensor_view& t : targets)
        for (const kernel_table& table : numgap::kernels::available_kernels())
            for (const kernel_options& options : every_tier()) {
                const std::string_view arch = table.arch_name;
                CAPTURE(arch);
                CAPTURE(options.features);
                const pair_moments moments = through_views(r, t, table, options);
                CHECK(same_moments(moments, through_plan(r, t, table, options)));
                CHECK(moments.count == std::int64_t(n));
                CHECK(moments.sum_squared_diff > 0);
            }
}
} // TEST_SUITE("kernels")
