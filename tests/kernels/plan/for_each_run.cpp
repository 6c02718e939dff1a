// Pins the in-register widening path (numgap/kernels/plan/stored_run.hpp,
// kernel_source.hpp, for_each_run.hpp, kernel_table::run_f32): reading
// float16 / bfloat16 / float8 / (de)quantized 8- and 16-bit integers straight from
// memory gives exactly what the fused kernel gives on the same values
// converted to float32 first, on every kernel this CPU can run, at every
// length around the vector widths and chunk size, in both orientations; and
// which plans take this path.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/kernels/table/accumulate_plan.hpp>
#include <numgap/kernels/dispatch/dispatch.hpp>
#include <numgap/kernels/plan/for_each_run.hpp>
#include <numgap/kernels/plan/pair_plan.hpp>
#include <numgap/kernels/plan/validate_pair.hpp>

#include "../float8_codes.hpp"
#include "../same_sums.hpp"

namespace {

// Per-side statistics with min and max (their own pass over each chunk).
constexpr unsigned every_side_statistic =
    numgap::kernels::kernel_feature::side_statistics | numgap::kernels::kernel_feature::side_min_max;

using numgap::dtype;
using numgap::kernels::pair_moments;
using numgap::kernels::side_moments;
using numgap::kernels::stored_run;

using numgap_test::equal_or_both_nan;

void check_same_side(const side_moments& got, const side_moments& want) {
    CHECK(got.finite_count == want.finite_count);
    CHECK(got.nan_count == want.nan_count);
    CHECK(got.positive_inf_count == want.positive_inf_count);
    CHECK(got.negative_inf_count == want.negative_inf_count);
    CHECK(equal_or_both_nan(got.min, want.min));
    CHECK(equal_or_both_nan(got.max, want.max));
    CHECK(equal_or_both_nan(got.mean, want.mean));
    CHECK(equal_or_both_nan(got.m2, want.m2));
}

void check_same(const pair_moments& got, const pair_moments& want) {
    numgap_test::check_same_sums(got, want);
    CHECK(equal_or_both_nan(got.max_abs_reference, want.max_abs_reference));
    CHECK(equal_or_both_nan(got.max_relative_diff, want.max_relative_diff));
    CHECK(got.not_close_count == want.not_close_count);
    check_same_side(got.reference, want.reference);
    check_same_side(got.target, want.target);
}

// Narrow data of one dtype and its float32 values, computed here (not by
// the library): raw bits for the 16-bit floats, scale * float(q - zp) for
// integers.
struct narrow_data {
    dtype type;
    std::vector<unsigned char> bytes;
    std::vector<float> values;
    float scale = 1.0f;
    std::int32_t zero_point = 0;
};

template <class Stored>
narrow_data make_integers(dtype type, std::size_t n, float scale, std::int32_t zero_point, unsigned seed) {
    std::mt19937 generator(seed);
    std::uniform_int_distribution<std::int64_t> any(std::numeric_limits<Stored>::min(), std::numeric_limits<Stored>::max());
    narrow_data d{type, std::vector<unsigned char>(n * sizeof(Stored)), std::vector<float>(n), scale, zero_point};
    for (std::size_t i = 0; i < n; ++i) {
        // Both extremes appear, so sign and zero extension are both pinned.
        const Stored q = i % 17 == 3 ? std::numeric_limits<Stored>::min()
                         : i % 17 == 5 ? std::numeric_limits<Stored>::max()
                                       : Stored(any(generator));
        std::memcpy(d.bytes.data() + i * sizeof(Stored), &q, sizeof q);
        d.values[i] = scale * float(std::int32_t(q) - zero_point);
    }
    return d;
}

float half_bits_to_float(std::uint16_t bits) {
    // Independent of numgap::to_float: decode binary16 by its definition.
    const int sign = bits >> 15, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
    float magnitude;
    if (exponent == 0) magnitude = std::ldexp(float(mantissa), -24);
    else if (exponent == 31) magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    else magnitude = std::ldexp(float(1024 + mantissa), exponent - 25);
    return sign ? -magnitude : magnitude;
}

narrow_data make_halves(dtype type, std::size_t n, unsigned seed, bool specials) {
    std::mt19937 generator(seed);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    narrow_data d{type, std::vector<unsigned char>(n * 2), std::vector<float>(n)};
    for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t bits;
        if (type == dtype::float16) {
            bits = numgap::to_float16(normal(generator)).bits;
            if (i % 23 == 7) bits = 0x0001; // smallest subnormal
            d.values[i] = half_bits_to_float(bits);
        } else {
            std::uint32_t wide;
            const float x = normal(generator);
            std::memcpy(&wide, &x, 4);
            bits = std::uint16_t(wide >> 16);
            const std::uint32_t back = std::uint32_t(bits) << 16;
            std::memcpy(&d.values[i], &back, 4);
        }
        std::memcpy(d.bytes.data() + 2 * i, &bits, 2);
    }
    if (specials && n > 40) {
        const std::uint16_t inf = type == dtype::float16 ? 0x7c00 : 0x7f80, nan = type == dtype::float16 ? 0x7e00 : 0x7fc0;
        const std::size_t inf_at = n / 3, nan_at = n - 5;
        std::memcpy(d.bytes.data() + 2 * inf_at, &inf, 2);
        d.values[inf_at] = std::numeric_limits<float>::infinity();
        std::memcpy(d.bytes.data() + 2 * nan_at, &nan, 2);
        d.values[nan_at] = std::numeric_limits<float>::quiet_NaN();
    }
    return d;
}

// Every finite code in turn (subnormals, both zeros, the largest values), so
// each vector lane meets each kind; with `specials`, one Inf (e5m2) and one NaN.
narrow_data make_float8(dtype type, std::size_t n, bool specials) {
    narrow_data d{type, std::vector<unsigned char>(n), std::vector<float>(n)};
    std::uint8_t code = 0;
    for (std::size_t i = 0; i < n; ++i) {
        do code = std::uint8_t(code + 37); // 37 is odd: every code comes round once per 256 steps
        while (!std::isfinite(numgap_test::float8_code_value(type, code)));
        d.bytes[i] = code;
        d.values[i] = numgap_test::float8_code_value(type, code);
    }
    if (specials && n > 40) {
        if (type == dtype::float8_e5m2) {
            d.bytes[n / 3] = 0xfc;
            d.values[n / 3] = -std::numeric_limits<float>::infinity();
        }
        d.bytes[n - 5] = 0x7f;
        d.values[n - 5] = std::numeric_limits<float>::quiet_NaN();
    }
    return d;
}

std::vector<narrow_data> every_narrow_type(std::size_t n, bool specials) {
    std::vector<narrow_data> all;
    all.push_back(make_halves(dtype::float16, n, 1, specials));
    all.push_back(make_halves(dtype::bfloat16, n, 2, specials));
    all.push_back(make_float8(dtype::float8_e4m3fn, n, specials));
    all.push_back(make_float8(dtype::float8_e5m2, n, specials));
    all.push_back(make_integers<std::uint8_t>(dtype::uint8, n, 0.02f, 128, 3));
    all.push_back(make_integers<std::int8_t>(dtype::int8, n, 0.05f, -3, 4));
    all.push_back(make_integers<std::int16_t>(dtype::int16, n, 1e-3f, 17, 5));
    all.push_back(make_integers<std::uint16_t>(dtype::uint16, n, 3e-4f, 32768, 6));
    all.push_back(make_integers<std::uint8_t>(dtype::uint8, n, 1.0f, 0, 7)); // raw integers
    // Zero points at the edge of the exact range.
    all.push_back(make_integers<std::int16_t>(dtype::int16, n, 0.5f, 1 << 24, 8));
    all.push_back(make_integers<std::uint8_t>(dtype::uint8, n, 0.25f, -(1 << 24), 9));
    return all;
}

std::vector<float> reference_values(std::size_t n, unsigned seed) {
    std::mt19937 generator(seed);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    std::vector<float> r(n);
    for (auto& x : r) x = normal(generator);
    return r;
}

} // namespace

TEST_SUITE("kernels") {
TEST_CASE("run_f32 equals block_f32 on the converted values, bit for bit, every arch, dtype, length and orientation") {
    const std::size_t lengths[] = {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 2047, 2048, 2049, 4100};
    const unsigned all_features = numgap::kernels::kernel_feature::side_statistics |
                                  numgap::kernels::kernel_feature::side_min_max |
                                  numgap::kernels::kernel_feature::closeness;
    const unsigned side_sums_only = numgap::kernels::kernel_feature::side_statistics;
    const std::size_t longest = 4100;
    const auto narrow = every_narrow_type(longest, true);
    const auto reference = reference_values(longest, 10);
    for (const auto& table : numgap::kernels::available_kernels()) {
        CAPTURE(std::string(table.arch_name));
        REQUIRE(bool(table.run_f32));
        for (const auto& d : narrow) {
            CAPTURE(std::string(numgap::name_of(d.type)));
            CAPTURE(d.zero_point);
            for (const std::size_t n : lengths) {
                CAPTURE(n);
                // The default side tier (sums only) and every tier at once.
                for (const unsigned features : {0u, side_sums_only, all_features}) {
                    const numgap::kernels::kernel_options options{features, 1e-3, 1e-2};
                    const stored_run f32{reference.data(), dtype::float32};
                    const stored_run narrow_run{d.bytes.data(), d.type, d.scale, d.zero_point};
                    pair_moments got, want;
                    table.run_f32(f32, narrow_run, n, options, got);
                    table.block_f32(reference.data(), d.values.data(), n, options, want);
                    check_same(got, want);
                    pair_moments got_swapped, want_swapped;
                    table.run_f32(narrow_run, f32, n, options, got_swapped);
                    table.block_f32(d.values.data(), reference.data(), n, options, want_swapped);
                    check_same(got_swapped, want_swapped);
                }
            }
        }
        // float32 against float32 through run_f32 is the zero-copy block path.
        pair_moments got, want;
        const auto other = reference_values(longest, 11);
        table.run_f32({reference.data(), dtype::float32}, {other.data(), dtype::float32}, longest, {}, got);
        table.block_f32(reference.data(), other.data(), longest, {}, want);
        check_same(got, want);
    }
}

TEST_CASE("runs_in_registers: contiguous narrow data and per-channel outer axes read in place; other layouts take blocks") {
    const std::size_t channels = 3, spatial = 300;
    std::vector<float> r(channels * spatial, 1.0f);
    std::vector<std::uint8_t> q(r.size(), 7);
    std::vector<std::int32_t> ints(r.size(), 7);
    std::vector<double> wide(r.size(), 1.0);
    const std::int64_t shape[] = {std::int64_t(channels), std::int64_t(spatial)};
    const numgap::tensor_view rv(r.data(), std::span<const std::int64_t>(shape));
    auto in_registers = [&](const numgap::tensor_view& target) {
        numgap::validate_pair(rv, target);
        return numgap::kernels::runs_in_registers(numgap::kernels::make_pair_plan(rv, target));
    };
    numgap::tensor_view per_tensor(q.data(), std::span<const std::int64_t>(shape));
    per_tensor.with_quantization(numgap::quantization::per_tensor(0.1f, 3));
    CHECK(in_registers(per_tensor));

    const float scales[] = {0.1f, 0.2f, 0.3f};
    const std::int32_t zero_points[] = {1, 2, 3};
    numgap::tensor_view per_channel_outer(q.data(), std::span<const std::int64_t>(shape));
    per_channel_outer.with_quantization(numgap::quantization::along(0, scales, zero_points));
    CHECK(in_registers(per_channel_outer));

    std::vector<float> inner_scales(spatial, 0.1f);
    numgap::tensor_view per_channel_inner(q.data(), std::span<const std::int64_t>(shape));
    per_channel_inner.with_quantization(numgap::quantization::along(1, inner_scales));
    CHECK_FALSE(in_registers(per_channel_inner));

    const std::int32_t extreme[] = {1, std::numeric_limits<std::int32_t>::min(), 3};
    numgap::tensor_view extreme_zero_point(q.data(), std::span<const std::int64_t>(shape));
    extreme_zero_point.with_quantization(numgap::quantization::along(0, scales, extreme));
    CHECK_FALSE(in_registers(extreme_zero_point));

    CHECK_FALSE(in_registers(numgap::tensor_view(ints.data(), std::span<const std::int64_t>(shape))));
    CHECK_FALSE(in_registers(numgap::tensor_view(wide.data(), std::span<const std::int64_t>(shape))));

    // A transposed target (stored [spatial, channels]) is not unit-stride along the rows.
    const std::int64_t stored_shape[] = {std::int64_t(spatial), std::int64_t(channels)};
    numgap::tensor_view transposed(q.data(), std::span<const std::int64_t>(stored_shape));
    transposed.with_axis_order({1, 0});
    CHECK_FALSE(in_registers(transposed));

    // Rows shorter than shortest_run are gathered into blocks instead.
    const std::int64_t short_rows[] = {std::int64_t(r.size() / 100), 100};
    const numgap::tensor_view short_reference(r.data(), std::span<const std::int64_t>(short_rows));
    numgap::tensor_view short_target(q.data(), std::span<const std::int64_t>(short_rows));
    const float short_scales[] = {0.5f, 0.25f, 0.125f, 1.0f, 2.0f, 4.0f, 8.0f, 16.0f, 32.0f};
    short_target.with_quantization(numgap::quantization::along(0, short_scales));
    numgap::validate_pair(short_reference, short_target);
    CHECK_FALSE(numgap::kernels::runs_in_registers(numgap::kernels::make_pair_plan(short_reference, short_target)));
}

TEST_CASE("for_each_run covers any range once, row by row, with each row's channel parameters") {
    // Reference: a [4, 3, 300] slice of a [4, 3, 310] buffer (outer strides
    // do not coalesce); target: int8 per-channel along axis 1.
    const std::int64_t outer = 4, channels = 3, inner = 300, padded = 310;
    std::vector<float> buffer(std::size_t(outer * channels * padded));
    for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = float(i);
    const std::int64_t shape[] = {outer, channels, inner};
    const std::int64_t strides[] = {channels * padded, padded, 1};
    const numgap::tensor_view rv(buffer.data(), numgap::dtype::float32, std::span<const std::int64_t>(shape),
                                 std::span<const std::int64_t>(strides));
    std::vector<std::int8_t> q(std::size_t(outer * channels * inner));
    for (std::size_t i = 0; i < q.size(); ++i) q[i] = std::int8_t(i % 251 - 125);
    const float scales[] = {0.5f, 0.25f, 2.0f};
    const std::int32_t zero_points[] = {-1, 0, 9};
    numgap::tensor_view tv(q.data(), std::span<const std::int64_t>(shape));
    tv.with_quantization(numgap::quantization::along(1, scales, zero_points));
    numgap::validate_pair(rv, tv);
    const auto plan = numgap::kernels::make_pair_plan(rv, tv);
    REQUIRE(numgap::kernels::runs_in_registers(plan));
    for (const auto& range : {std::pair<std::int64_t, std::int64_t>{0, plan.count}, {1, 301}, {299, 1500}, {3599, 3600}}) {
        const std::int64_t begin = range.first, end = range.second;
        CAPTURE(begin);
        CAPTURE(end);
        std::int64_t position = begin;
        numgap::kernels::for_each_run(plan, begin, end, [&](const stored_run& r, const stored_run& t, std::size_t n) {
            const std::int64_t row = position / inner, column = position % inner;
            const std::int64_t b = row / channels, c = row % channels;
            CHECK(n <= std::size_t(inner - column)); // never crosses a row end
            CHECK(r.type == numgap::dtype::float32);
            CHECK(static_cast<const float*>(r.data) == buffer.data() + (b * channels + c) * padded + column);
            CHECK(static_cast<const std::int8_t*>(t.data) == q.data() + position);
            CHECK(t.scale == scales[c]);
            CHECK(t.zero_point == zero_points[c]);
            position += std::int64_t(n);
        });
        CHECK(position == end);
    }
}

TEST_CASE("accumulate_plan reads in place and agrees with the converting block path") {
    const std::int64_t shape[] = {3, 1000};
    const auto reference = reference_values(3000, 12);
    const numgap::tensor_view rv(reference.data(), std::span<const std::int64_t>(shape));
    const auto narrow = every_narrow_type(3000, false);
    for (const auto& table : numgap::kernels::available_kernels()) {
        CAPTURE(std::string(table.arch_name));
        for (const auto& d : narrow) {
            CAPTURE(std::string(numgap::name_of(d.type)));
            numgap::tensor_view tv(d.bytes.data(), d.type, std::span<const std::int64_t>(shape));
            if (!numgap::is_floating(d.type))
                tv.with_quantization(numgap::quantization::per_tensor(d.scale, d.zero_point));
            numgap::validate_pair(rv, tv);
            const auto plan = numgap::kernels::make_pair_plan(rv, tv);
            REQUIRE(numgap::kernels::runs_in_registers(plan));
            pair_moments got, want;
            numgap::kernels::accumulate_plan(plan, 0, plan.count, table, {}, got);
            table.block_f32(reference.data(), d.values.data(), 3000, {}, want);
            check_same(got, want);
        }
    }
}
TEST_CASE("two narrow float sides (float8 against bfloat16, float8, float16) take blocks and agree with the converted values") {
    const std::int64_t shape[] = {3, 1000};
    const std::vector<narrow_data> sides{make_float8(dtype::float8_e4m3fn, 3000, true), make_float8(dtype::float8_e5m2, 3000, true),
                                         make_halves(dtype::bfloat16, 3000, 13, true), make_halves(dtype::float16, 3000, 14, false)};
    for (const auto& table : numgap::kernels::available_kernels()) {
        CAPTURE(std::string(table.arch_name));
        for (const auto& r : sides)
            for (const auto& t : sides) {
                if (r.type != dtype::float8_e4m3fn && r.type != dtype::float8_e5m2 && t.type != dtype::float8_e4m3fn &&
                    t.type != dtype::float8_e5m2)
                    continue;
                CAPTURE(std::string(numgap::name_of(r.type)));
                CAPTURE(std::string(numgap::name_of(t.type)));
                const numgap::tensor_view rv(r.bytes.data(), r.type, std::span<const std::int64_t>(shape));
                const numgap::tensor_view tv(t.bytes.data(), t.type, std::span<const std::int64_t>(shape));
                numgap::validate_pair(rv, tv);
                auto plan = numgap::kernels::make_pair_plan(rv, tv);
                plan.widen_f32 = table.widen_f32; // as evaluate() does: the table's in-register widening
                CHECK_FALSE(numgap::kernels::runs_in_registers(plan));
                pair_moments got, want;
                numgap::kernels::accumulate_plan(plan, 0, plan.count, table, {every_side_statistic}, got);
                table.block_f32(r.values.data(), t.values.data(), 3000, {every_side_statistic}, want);
                check_same(got, want);
                CHECK(got.target.nan_count == (t.type == dtype::float16 ? 0 : 1));
            }
    }
}
TEST_CASE("float8_e8m0fnu (a scale type) takes blocks against float32 and reads 2^(e-127), 0xFF as NaN") {
    const std::size_t n = 600;
    std::vector<std::uint8_t> codes(n);
    std::vector<float> decoded(n);
    for (std::size_t i = 0; i < n; ++i) {
        codes[i] = std::uint8_t(i * 7); // every code within 256 steps
        decoded[i] = codes[i] == 0xff ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, int(codes[i]) - 127);
    }
    const auto reference = reference_values(n, 15);
    const numgap::tensor_view rv(reference.data(), {std::int64_t(n)});
    const numgap::tensor_view tv(codes.data(), dtype::float8_e8m0fnu, {std::int64_t(n)});
    numgap::validate_pair(rv, tv);
    for (const auto& table : numgap::kernels::available_kernels()) {
        CAPTURE(std::string(table.arch_name));
        auto plan = numgap::kernels::make_pair_plan(rv, tv);
        plan.widen_f32 = table.widen_f32;
        CHECK_FALSE(numgap::kernels::runs_in_registers(plan));
        pair_moments got, want;
        numgap::kernels::accumulate_plan(plan, 0, plan.count, table, {every_side_statistic}, got);
        table.block_f32(reference.data(), decoded.data(), n, {every_side_statistic}, want);
        check_same(got, want);
        CHECK(got.target.nan_count == 3); // code 0xff at i = 73, 329 and 585
    }
}
} // TEST_SUITE("kernels")
