// Pins kernels::accumulate_bands (numgap/kernels/table/accumulate_bands.hpp),
// the band walk of transposed float32 pairs, on every arch this CPU runs:
// which pairs and options take it (and which keep the tiles: too few rows
// or columns, both sides transposed, re-reading tiers); exact moments against a float64 oracle
// (small integers, so every float32 partial sum is exact and any lost,
// doubled or mispaired element shows) for both orientations, rows around
// the band height and the column blocks, several outer indices and negative
// strides; every partition of the walk into ranges (cut inside columns,
// pieces and blocks) summing to the whole; NaN / +-Inf counts from either
// side; and evaluate() on such a pair alike with one and two threads. Where
// a table has a square band kernel (AVX-512), everything runs with it and
// without it, and the walk is shown to take it up to square_most_bands bands.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/kernels/dispatch/dispatch.hpp>
#include <numgap/kernels/plan/pair_plan.hpp>
#include <numgap/kernels/table/accumulate_plan.hpp>
#include <numgap/metric.hpp>

#include "../same_sums.hpp"

namespace {

namespace kernels = numgap::kernels;
using kernels::kernel_options;
using kernels::kernel_table;
using kernels::pair_moments;
using numgap_test::check_same_sums;

// A [outer, rows, columns] reference and target, one of them stored
// transposed as [outer, columns, rows] (axis_order {0, 2, 1}); values are
// small integers (and optionally non-finite ones).
struct band_pair {
    std::int64_t outer, rows, columns;
    std::vector<float> reference, target; // in reference order
    std::vector<float> stored_reference, stored_target;
    bool target_transposed = true;
    bool flipped = false; // the transposed side's outer dimension stored back to front

    numgap::tensor_view view(const std::vector<float>& stored, bool transposed) const {
        if (!transposed) {
            const std::int64_t shape[] = {outer, rows, columns};
            return numgap::tensor_view(stored.data(), shape);
        }
        const std::int64_t shape[] = {outer, columns, rows};
        numgap::tensor_view view(stored.data(), shape);
        if (flipped) {
            // Outer index o at (outer - 1 - o): a negative outer stride.
            const std::int64_t strides[] = {-columns * rows, rows, 1};
            view = numgap::tensor_view(stored.data() + (outer - 1) * columns * rows, shape, strides);
        }
        view.with_axis_order({0, 2, 1});
        return view;
    }
    numgap::tensor_view reference_view() const { return view(stored_reference, !target_transposed); }
    numgap::tensor_view target_view() const { return view(stored_target, target_transposed); }
};

band_pair make_pair(std::int64_t outer, std::int64_t rows, std::int64_t columns, bool target_transposed, bool flipped,
                    unsigned seed) {
    band_pair pair{outer, rows, columns, {}, {}, {}, {}, target_transposed, flipped};
    const auto n = std::size_t(outer * rows * columns);
    std::mt19937 generator(seed);
    std::uniform_int_distribution<int> value(-8, 8);
    pair.reference.resize(n);
    pair.target.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        pair.reference[i] = float(value(generator));
        pair.target[i] = pair.reference[i] + float(value(generator) / 4);
    }
    // Stored copies: the transposed side as [outer, columns, rows].
    const auto store = [&](const std::vector<float>& values, bool transposed) {
        if (!transposed) return values;
        std::vector<float> stored(n);
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t r = 0; r < rows; ++r)
                for (std::int64_t c = 0; c < columns; ++c) {
                    const std::int64_t stored_outer = flipped ? outer - 1 - o : o;
                    stored[std::size_t((stored_outer * columns + c) * rows + r)] =
                        values[std::size_t((o * rows + r) * columns + c)];
                }
        return stored;
    };
    pair.stored_reference = store(pair.reference, !target_transposed);
    pair.stored_target = store(pair.target, target_transposed);
    return pair;
}

// Writes values into the pair at reference position `at` (both copies).
void put(band_pair& pair, std::size_t at, float reference, float target) {
    const auto place = [&](std::vector<float>& stored, bool transposed, float value) {
        const std::int64_t position = std::int64_t(at);
        const std::int64_t o = position / (pair.rows * pair.columns), r = position / pair.columns % pair.rows,
                           c = position % pair.columns;
        const std::int64_t stored_outer = transposed && pair.flipped ? pair.outer - 1 - o : o;
        const std::int64_t index = transposed ? (stored_outer * pair.columns + c) * pair.rows + r : position;
        stored[std::size_t(index)] = value;
    };
    pair.reference[at] = reference;
    pair.target[at] = target;
    place(pair.stored_reference, !pair.target_transposed, reference);
    place(pair.stored_target, pair.target_transposed, target);
}

pair_moments oracle(const band_pair& pair) {
    pair_moments m;
    for (std::size_t i = 0; i < pair.reference.size(); ++i) {
        const double r = pair.reference[i], t = pair.target[i], d = r - t;
        m.sum_squared_diff += d * d;
        m.sum_abs_diff += std::fabs(d);
        if (std::fabs(d) > m.max_abs_diff) m.max_abs_diff = std::fabs(d);
        m.sum_squared_reference += r * r;
        m.sum_squared_target += t * t;
        m.sum_diff_times_sum += d * (r + t);
    }
    m.count = std::int64_t(pair.reference.size());
    return m;
}

kernels::pair_plan plan_of(const band_pair& pair, const kernel_table& table) {
    return kernels::make_pair_plan(pair.reference_view(), pair.target_view(), table);
}

pair_moments over_ranges(const band_pair& pair, const kernel_table& table, const kernel_options& options,
                         const std::vector<std::int64_t>& cuts) {
    const kernels::pair_plan plan = plan_of(pair, table);
    pair_moments total;
    std::int64_t begin = 0;
    for (const std::int64_t cut : cuts) {
        pair_moments part;
        kernels::accumulate_plan(plan, begin, cut, table, options, part);
        CHECK(part.count == cut - begin);
        total.merge(part);
        begin = cut;
    }
    return total;
}

// Every table with a band walk; one with a square band kernel also without
// it, so the four-column kernel is pinned on those arches for every shape.
std::vector<kernel_table> band_tables() {
    std::vector<kernel_table> tables;
    for (const kernel_table& table : kernels::available_kernels()) {
        if (table.band_f32 == nullptr) continue;
        tables.push_back(table);
        if (table.band_square_f32 == nullptr) continue;
        kernel_table four_columns = table;
        four_columns.band_square_f32 = nullptr;
        four_columns.arch_name = "avx512bw without the square band kernel";
        tables.push_back(four_columns);
    }
    return tables;
}

// Band kernels that count their calls before running the real ones.
kernels::band_f32_function* real_square = nullptr;
kernels::band_f32_function* real_four_columns = nullptr;
int square_calls = 0, four_column_calls = 0;
void counted_square(const kernels::band_side& reference, const kernels::band_side& target, std::size_t columns,
                    const kernel_options& options, pair_moments& moments) noexcept {
    ++square_calls;
    real_square(reference, target, columns, options, moments);
}
void counted_four_columns(const kernels::band_side& reference, const kernels::band_side& target, std::size_t columns,
                          const kernel_options& options, pair_moments& moments) noexcept {
    ++four_column_calls;
    real_four_columns(reference, target, columns, options, moments);
}

} // namespace

TEST_SUITE("kernels") {
TEST_CASE(
    "accumulate_bands: transposed float32 pairs with enough rows take the band walk, on moments and counts only") {
    REQUIRE(!band_tables().empty() == (kernels::active_kernels().band_f32 != nullptr));
    for (const kernel_table& table : kernels::available_kernels()) {
        const std::string_view arch = table.arch_name;
        CAPTURE(arch);
        CHECK((table.band_f32 == nullptr) == (table.band_rows == 0));
        if (table.band_f32 == nullptr) continue;
        const auto rows = std::int64_t(table.band_rows);
        const std::int64_t columns = kernels::shortest_band_row;
        const band_pair enough = make_pair(1, rows, columns, true, false, 1);
        const band_pair reversed = make_pair(1, rows, columns, false, false, 2);
        const band_pair too_few = make_pair(1, rows - 1, columns, true, false, 3);
        const band_pair too_short = make_pair(1, rows, columns - 1, true, false, 4);
        kernel_options counts{kernels::kernel_feature::side_counts};
        CHECK(kernels::plan_walk_of(plan_of(enough, table), table, {}) == kernels::plan_walk::bands);
        CHECK(kernels::plan_walk_of(plan_of(enough, table), table, counts) == kernels::plan_walk::bands);
        CHECK(kernels::plan_walk_of(plan_of(reversed, table), table, {}) == kernels::plan_walk::bands);
        CHECK(kernels::plan_walk_of(plan_of(too_few, table), table, {}) == kernels::plan_walk::float_blocks);
        CHECK(kernels::plan_walk_of(plan_of(too_short, table), table, {}) == kernels::plan_walk::float_blocks);
        for (const unsigned feature :
             {kernels::kernel_feature::side_statistics, kernels::kernel_feature::closeness,
              kernels::kernel_feature::side_statistics | kernels::kernel_feature::side_min_max})
            CHECK(kernels::plan_walk_of(plan_of(enough, table), table, {feature}) == kernels::plan_walk::float_blocks);
        // Both sides stored transposed, or neither: no band walk.
        const std::int64_t shape[] = {1, columns, rows};
        numgap::tensor_view both_reference(enough.stored_target.data(), shape),
            both_target(enough.stored_target.data(), shape);
        both_reference.with_axis_order({0, 2, 1});
        both_target.with_axis_order({0, 2, 1});
        const kernels::pair_plan both = kernels::make_pair_plan(both_reference, both_target, table);
        CHECK(kernels::plan_walk_of(both, table, {}) != kernels::plan_walk::bands);
    }
}

TEST_CASE(
    "accumulate_bands: every element once, exact sums, for rows around the band height and columns around the blocks") {
    for (const kernel_table& table : band_tables()) {
        const std::string_view arch = table.arch_name;
        const auto band = std::int64_t(table.band_rows);
        const std::int64_t block = std::int64_t(4 * kernels::flush_interval) / band; // band_piece_elements / rows
        const std::int64_t many_bands = (kernels::square_most_bands + 1) * band + 3;
        for (const std::int64_t rows : {band - 1, band, band + 1, 2 * band + 3, 4 * band, many_bands})
            for (const std::int64_t columns : {std::int64_t(1), std::int64_t(17), kernels::shortest_band_row,
                                               kernels::shortest_band_row + 3, block - 1, block + 7})
                for (const std::int64_t outer : {std::int64_t(1), std::int64_t(2)})
                    for (const bool target_transposed : {true, false}) {
                        const bool flipped = outer == 2 && columns != block - 1;
                        const band_pair pair = make_pair(outer, rows, columns, target_transposed, flipped,
                                                         unsigned(rows * 1000 + columns));
                        CAPTURE(arch);
                        CAPTURE(rows);
                        CAPTURE(columns);
                        CAPTURE(outer);
                        CAPTURE(target_transposed);
                        const bool banded = rows >= band && columns >= kernels::shortest_band_row;
                        CHECK((kernels::plan_walk_of(plan_of(pair, table), table, {}) == kernels::plan_walk::bands) ==
                              banded);
                        for (const kernel_options& options :
                             {kernel_options{}, kernel_options{kernels::kernel_feature::side_counts}}) {
                            CAPTURE(options.features);
                            pair_moments moments;
                            kernels::accumulate_views(pair.reference_view(), pair.target_view(), table, options,
                                                      moments);
                            check_same_sums(moments, oracle(pair));
                            CHECK(moments.reference.nan_count == 0);
                            CHECK(moments.target.positive_inf_count == 0);
                        }
                    }
    }
}

TEST_CASE("accumulate_bands: the square band kernel up to square_most_bands bands, the four-column one beyond") {
    for (const kernel_table& table : kernels::available_kernels()) {
        if (table.band_square_f32 == nullptr) continue;
        const std::string_view arch = table.arch_name;
        CAPTURE(arch);
        real_square = table.band_square_f32;
        real_four_columns = table.band_f32;
        kernel_table counting = table;
        counting.band_square_f32 = &counted_square;
        counting.band_f32 = &counted_four_columns;
        const auto band = std::int64_t(table.band_rows);
        for (const std::int64_t bands : {std::int64_t(1), kernels::square_most_bands, kernels::square_most_bands + 1}) {
            CAPTURE(bands);
            const band_pair pair = make_pair(2, bands * band + 1, 300, true, false, unsigned(bands));
            square_calls = four_column_calls = 0;
            pair_moments moments;
            kernels::accumulate_views(pair.reference_view(), pair.target_view(), counting, {}, moments);
            check_same_sums(moments, oracle(pair));
            CHECK((square_calls > 0) == (bands <= kernels::square_most_bands));
            CHECK((four_column_calls > 0) == (bands > kernels::square_most_bands));
        }
    }
}

TEST_CASE("accumulate_bands: any partition of the walk into ranges sums to the whole") {
    for (const kernel_table& table : band_tables()) {
        const std::string_view arch = table.arch_name;
        const auto band = std::int64_t(table.band_rows);
        const std::int64_t block = std::int64_t(4 * kernels::flush_interval) / band;
        // Two outer indices of 3 bands and 5 rows left over, a block and a half of columns.
        const band_pair pair = make_pair(2, 3 * band + 5, block + block / 2 + 3, true, false, 11);
        const pair_moments expected = oracle(pair);
        const std::int64_t count = expected.count;
        std::mt19937 generator(5);
        for (int trial = 0; trial < 40; ++trial) {
            std::vector<std::int64_t> cuts;
            std::uniform_int_distribution<std::int64_t> at(1, count - 1);
            const int pieces = trial < 10 ? 1 : trial % 7 + 2;
            for (int k = 0; k + 1 < pieces; ++k) cuts.push_back(at(generator));
            // Cuts on band, block and outer boundaries too.
            if (trial % 5 == 1) cuts.push_back(band * (block + block / 2 + 3));
            if (trial % 5 == 2) cuts.push_back(count / 2);
            if (trial % 5 == 3) cuts.push_back(band * block + 1);
            std::sort(cuts.begin(), cuts.end());
            cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
            cuts.push_back(count);
            CAPTURE(arch);
            CAPTURE(trial);
            check_same_sums(over_ranges(pair, table, {}, cuts), expected);
        }
        // One range per element's worth of a column: the element-by-element path throughout.
        std::vector<std::int64_t> tiny;
        for (std::int64_t cut = 7; cut < 3 * band * 5; cut += 7) tiny.push_back(cut);
        tiny.push_back(count);
        CAPTURE(arch);
        check_same_sums(over_ranges(pair, table, {}, tiny), expected);
    }
}

TEST_CASE("accumulate_bands: NaN and infinities on either side are counted exactly") {
    for (const kernel_table& table : band_tables()) {
        const std::string_view arch = table.arch_name;
        const auto band = std::int64_t(table.band_rows);
        for (const bool target_transposed : {true, false}) {
            band_pair pair = make_pair(1, 2 * band + 1, 301, target_transposed, false, 23);
            const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
            // In a band, in the row left over, at a band piece's last column, and in the remainder columns.
            put(pair, 5, nan, 1.0f);
            put(pair, std::size_t(band * 301 + 300), 2.0f, inf);
            put(pair, std::size_t(2 * band * 301 + 7), -inf, -inf);
            put(pair, std::size_t(3 * 301 + 299), 1.0f, nan);
            put(pair, std::size_t(4 * 301 + 100), inf, 3.0f);
            pair_moments moments;
            kernels::accumulate_views(pair.reference_view(), pair.target_view(), table,
                                      {kernels::kernel_feature::side_counts}, moments);
            CAPTURE(arch);
            CAPTURE(target_transposed);
            // One NaN, +Inf and -Inf on each side.
            const auto check_counts = [](const pair_moments& counted) {
                for (const numgap::kernels::side_moments* side : {&counted.reference, &counted.target}) {
                    CHECK(side->nan_count == 1);
                    CHECK(side->positive_inf_count == 1);
                    CHECK(side->negative_inf_count == 1);
                }
            };
            CHECK(moments.count == std::int64_t(pair.reference.size()));
            check_counts(moments);
            CHECK(std::isnan(moments.sum_abs_diff));
            // The same counts over ranges that cut columns, pieces and the NaNs' own columns.
            const std::int64_t count = moments.count;
            const pair_moments cut = over_ranges(pair, table, {kernels::kernel_feature::side_counts},
                                                 {3, 6, 1000, band * 301 + 299, band * 301 + 301, count});
            check_counts(cut);
        }
    }
}

TEST_CASE("accumulate_bands: padded and negative strides, and a pair large enough to prefetch") {
    for (const kernel_table& table : band_tables()) {
        const std::string_view arch = table.arch_name;
        CAPTURE(arch);
        const auto band = std::int64_t(table.band_rows);
        // Logical [2, rows, columns]; the row-major side's rows stored
        // bottom-up with 5 floats of padding, the column-major side's
        // columns 3 floats apart beyond its rows.
        const std::int64_t outer = 2, rows = 2 * band + 3, columns = 300;
        const std::int64_t row_stride = -(columns + 5), column_stride = rows + 3;
        std::vector<float> row_major(std::size_t(outer * rows * (columns + 5))),
            column_major(std::size_t(outer * columns * column_stride), 1e30f); // padding never read
        const std::int64_t row_outer = rows * (columns + 5), column_outer = columns * column_stride;
        std::mt19937 generator(41);
        std::uniform_int_distribution<int> value(-8, 8);
        pair_moments expected;
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t r = 0; r < rows; ++r)
                for (std::int64_t c = 0; c < columns; ++c) {
                    const float x = float(value(generator)), y = float(value(generator));
                    row_major[std::size_t(o * row_outer + (rows - 1 - r) * (columns + 5) + c)] = x;
                    column_major[std::size_t(o * column_outer + c * column_stride + r)] = y;
                    const double d = double(x) - double(y);
                    expected.sum_squared_diff += d * d;
                    expected.sum_abs_diff += std::fabs(d);
                    expected.max_abs_diff = std::max(expected.max_abs_diff, std::fabs(d));
                    expected.sum_squared_reference += double(x) * x;
                    expected.sum_squared_target += double(y) * y;
                    expected.sum_diff_times_sum += d * (double(x) + y);
                }
        expected.count = outer * rows * columns;
        const std::int64_t shape[] = {outer, rows, columns}, reference_strides[] = {row_outer, row_stride, 1};
        const std::int64_t target_strides[] = {column_outer, 1, column_stride};
        const numgap::tensor_view reference(row_major.data() + (rows - 1) * (columns + 5), shape, reference_strides);
        const numgap::tensor_view target(column_major.data(), shape, target_strides);
        REQUIRE(kernels::plan_walk_of(kernels::make_pair_plan(reference, target, table), table, {}) ==
                kernels::plan_walk::bands);
        pair_moments moments;
        kernels::accumulate_views(reference, target, table, {}, moments);
        check_same_sums(moments, expected);
        pair_moments swapped; // the column-major side as the reference
        kernels::accumulate_views(target, reference, table, {}, swapped);
        CHECK(swapped.sum_squared_diff == expected.sum_squared_diff);
        CHECK(swapped.sum_diff_times_sum == -expected.sum_diff_times_sum);
        CHECK(swapped.sum_squared_reference == expected.sum_squared_target);

        // More than band_prefetch_from elements: the pieces prefetch ahead.
        const band_pair large =
            make_pair(1, 2 * band + 5, kernels::band_prefetch_from / (2 * band + 5) + 1000, true, false, 43);
        REQUIRE(std::int64_t(large.reference.size()) > kernels::band_prefetch_from);
        pair_moments large_moments;
        kernels::accumulate_views(large.reference_view(), large.target_view(), table, {}, large_moments);
        check_same_sums(large_moments, oracle(large));
        // Three outer indices of that size: the prefetch counts on into the next one.
        const std::int64_t outer_columns = kernels::band_prefetch_from / (3 * (band + 1)) + 100;
        const band_pair images = make_pair(3, band + 1, outer_columns, false, false, 47);
        REQUIRE(std::int64_t(images.reference.size()) > kernels::band_prefetch_from);
        pair_moments images_moments;
        kernels::accumulate_views(images.reference_view(), images.target_view(), table, {}, images_moments);
        check_same_sums(images_moments, oracle(images));
    }
}

TEST_CASE("accumulate_bands: evaluate() on an NHWC pair gives one thread's results on two") {
    // [1, 32, 96, 100] against NHWC: 307200 elements, two threads' worth.
    const band_pair pair = make_pair(1, 32, 9600, true, false, 31);
    const kernel_table table = kernels::active_kernels();
    if (table.band_f32 != nullptr)
        CHECK(kernels::plan_walk_of(plan_of(pair, table), table, {}) == kernels::plan_walk::bands);
    numgap::metric_set metrics;
    metrics.add(numgap::cosine{}).add(numgap::mse{}).add(numgap::max_abs{}).add(numgap::l1{});
    const numgap::evaluation one = numgap::evaluate(pair.reference_view(), pair.target_view(), metrics, {.threads = 1});
    const numgap::evaluation two = numgap::evaluate(pair.reference_view(), pair.target_view(), metrics, {.threads = 2});
    const pair_moments expected = oracle(pair);
    REQUIRE(one.metrics.size() == 4);
    CHECK(one.metrics[1].value == expected.sum_squared_diff / double(expected.count));
    CHECK(one.metrics[2].value == expected.max_abs_diff);
    for (std::size_t i = 0; i < one.metrics.size(); ++i) {
        CAPTURE(i);
        CHECK(two.metrics[i].value == one.metrics[i].value);
    }
    CHECK(two.reference.nan_count == 0);
    CHECK(two.count == expected.count);
}
} // TEST_SUITE("kernels")
