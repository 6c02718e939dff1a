// The MX element formats in the fused kernel (kernels/source/block_source.hpp
// with float codes, kernels/plan/gather.hpp's fallback), on every kernel this
// CPU can run: every code of float4_e2m1fn (both nibble phases), float6
// e2m3fn / e3m2fn (every byte: the high bits ignored) and float8 e4m3fn /
// e5m2 times its block's scale equals the scalar scale * to_float(code) bit
// for bit (to_float itself is pinned to the bit-field oracle in
// tests/core/float_mx.cpp and float8.cpp), in registers and on the converting
// path; MXINT8 (int8 with e8m0 * 2^-6 scales) is exact at every exponent; pairs
// without a float32 side (MXFP8 against MXFP8, bfloat16 against float8,
// MXFP4 against MXFP6) agree with the oracle; and validation refuses what an
// MX element cannot carry.
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include "../walk_both_paths.hpp"

#include <numgap/core/error.hpp>
#include <numgap/core/float8.hpp>
#include <numgap/core/float_mx.hpp>
#include <numgap/kernels/dispatch/dispatch.hpp>
#include <numgap/kernels/plan/validate_pair.hpp>
#include <numgap/kernels/scalar_reference.hpp>
#include <numgap/kernels/table/accumulate_plan.hpp>
#include <numgap/metric/builtin_metrics.hpp>
#include <numgap/metric/evaluate.hpp>

namespace {

using numgap::dtype;
namespace kernels = numgap::kernels;

constexpr dtype mx_types[] = {dtype::float4_e2m1fn, dtype::float6_e2m3fn, dtype::float6_e3m2fn, dtype::float8_e4m3fn,
                              dtype::float8_e5m2};

// Element e's decoded value (before its block's scale).
float decoded(dtype type, const std::vector<std::uint8_t>& bytes, std::size_t e) {
    switch (type) {
    case dtype::float4_e2m1fn: return numgap::to_float(numgap::float4_e2m1fn{std::uint8_t(bytes[e / 2] >> (4 * (e % 2)))});
    case dtype::float6_e2m3fn: return numgap::to_float(numgap::float6_e2m3fn{bytes[e]});
    case dtype::float6_e3m2fn: return numgap::to_float(numgap::float6_e3m2fn{bytes[e]});
    case dtype::float8_e4m3fn: return numgap::to_float(numgap::float8_e4m3fn{bytes[e]});
    default: return numgap::to_float(numgap::float8_e5m2{bytes[e]});
    }
}

// Every byte value first (every code, for float4 every pair of codes), then a
// pattern; float8's NaN and Inf codes are replaced by 0 (a NaN anywhere makes
// the sums NaN and the exact check meaningless; NaN handling is
// tests/kernels/fused's).
std::vector<std::uint8_t> every_code(dtype type, std::size_t count) {
    std::vector<std::uint8_t> bytes(count);
    for (std::size_t i = 0; i < count; ++i) {
        std::uint8_t byte = std::uint8_t(i < 256 ? i : (i * 2654435761u) >> 13);
        if (type == dtype::float8_e4m3fn && (byte & 0x7f) == 0x7f) byte = 0;
        if (type == dtype::float8_e5m2 && (byte & 0x7c) == 0x7c) byte = 0;
        bytes[i] = byte;
    }
    return bytes;
}

// e8m0-like powers of two with a few other scales between them.
float block_scale(std::size_t b) { return b % 7 == 3 ? 0.3f + 0.01f * float(b) : std::ldexp(1.0f, int(b % 11) - 5); }

} // namespace

TEST_SUITE("kernels") {
TEST_CASE("every MX element code times its block scale is exact in registers, every offset, length and arch") {
    const std::size_t row = 1000;
    for (const dtype type : mx_types) {
        const bool packed = numgap::is_packed(type);
        const std::vector<std::uint8_t> bytes = every_code(type, packed ? row / 2 + 300 : row);
        for (const std::uint32_t block : {32u, 0u, 16u, 64u, 128u, 5u, 1000u}) { // 0: no scales
            std::vector<float> scales(block == 0 ? 0 : (row + block - 1) / block);
            for (std::size_t b = 0; b < scales.size(); ++b) scales[b] = block_scale(b);
            for (const std::uint32_t offset : {0u, 1u, 3u, 8u, 16u, 32u, 48u, 500u}) {
                std::vector<float> reference(row - offset);
                for (std::size_t i = 0; i < reference.size(); ++i)
                    reference[i] = (block == 0 ? 1.0f : scales[(offset + i) / block]) * decoded(type, bytes, offset + i);
                kernels::stored_run target{packed ? bytes.data() + offset / 2 : bytes.data() + offset, type};
                target.nibble = std::uint8_t(packed ? offset % 2 : 0);
                if (block != 0) {
                    target.block_scales = scales.data();
                    target.offset_in_row = offset;
                    target.block_size = block;
                    target.divider = kernels::make_block_divider(block);
                } else if (type == dtype::float8_e4m3fn || type == dtype::float8_e5m2) {
                    continue; // unscaled float8 is widening_source's (tests/kernels/fused)
                }
                for (const auto& table : kernels::available_kernels()) {
                    for (const std::size_t n : numgap_test::block_walk_lengths) {
                        if (n > reference.size()) continue;
                        CAPTURE(std::string_view(table.arch_name));
                        CAPTURE(numgap::name_of(type));
                        CAPTURE(block);
                        CAPTURE(offset);
                        CAPTURE(n);
                        kernels::pair_moments moments;
                        table.run_f32(kernels::stored_run{reference.data(), dtype::float32}, target, n, {}, moments);
                        numgap_test::check_exact(moments, n);
                    }
                }
            }
        }
    }
}

TEST_CASE("MX block-scaled views walk exactly through both plan paths, every layout and arch") {
    struct layout {
        std::int64_t rows, columns;
        int axis;
        std::int64_t block;
    };
    const layout layouts[] = {{3, 1001, -1, 32}, {33, 257, 0, 32}, {7, 9, -1, 4}, {2, 777, -1, 1 << 20}};
    for (const dtype type : mx_types) {
        for (const layout& shape : layouts) {
            const std::int64_t count = shape.rows * shape.columns;
            const bool packed = numgap::is_packed(type);
            const std::vector<std::uint8_t> bytes = every_code(type, std::size_t(packed ? (count + 1) / 2 : count));
            const int axis = numgap::resolved_axis(shape.axis, 2);
            const std::int64_t length = axis == 0 ? shape.rows : shape.columns;
            const std::int64_t per_row = (length + shape.block - 1) / shape.block;
            std::vector<float> scales(std::size_t(axis == 0 ? per_row * shape.columns : shape.rows * per_row));
            for (std::size_t b = 0; b < scales.size(); ++b) scales[b] = block_scale(b);
            std::vector<float> reference(static_cast<std::size_t>(count));
            for (std::int64_t r = 0; r < shape.rows; ++r)
                for (std::int64_t c = 0; c < shape.columns; ++c) {
                    const std::int64_t e = r * shape.columns + c;
                    const std::int64_t b = axis == 0 ? (r / shape.block) * shape.columns + c : r * per_row + c / shape.block;
                    reference[std::size_t(e)] = scales[std::size_t(b)] * decoded(type, bytes, std::size_t(e));
                }
            numgap::tensor_view target(bytes.data(), type, {shape.rows, shape.columns});
            target.with_quantization(numgap::quantization::blocks(shape.axis, shape.block, scales));
            const numgap::tensor_view reference_view(reference.data(), {shape.rows, shape.columns});
            numgap::validate_pair(reference_view, target);
            const auto plan = kernels::make_pair_plan(reference_view, target);
            CHECK(kernels::runs_in_registers(plan) == (axis == 1 && shape.columns >= kernels::shortest_run));
            CAPTURE(numgap::name_of(type));
            CAPTURE(shape.rows);
            CAPTURE(shape.columns);
            CAPTURE(shape.axis);
            numgap_test::check_exact_on_both_paths(plan, count);
        }
    }
}

TEST_CASE("MXINT8 as int8 with e8m0 * 2^-6 block scales is exact at every exponent and code") {
    // 254 exponents x 256 codes; block b has exponent b % 254, so every
    // (exponent, code) pair occurs (32 codes a block, 8 blocks an exponent).
    // Exponent 254 (X = 2^127) is left out: X * 2^-6 * -128 = -2^128 is
    // beyond float32 (it becomes -Inf, core/float_mx.hpp says so).
    const std::int64_t count = 254 * 256;
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(count));
    std::vector<float> scales(static_cast<std::size_t>(count / 32));
    std::vector<float> reference(codes.size());
    for (std::size_t b = 0; b < scales.size(); ++b)
        scales[b] = numgap::to_float(numgap::float8_e8m0fnu{std::uint8_t(b % 254)}) * 0x1p-6f;
    for (std::size_t i = 0; i < codes.size(); ++i) {
        codes[i] = std::uint8_t(i % 256);
        // The OCP value X * 2^-6 * q, computed exactly in long double.
        reference[i] = float(std::ldexp((long double)std::int8_t(codes[i]), int((i / 32) % 254) - 127 - 6));
    }
    numgap::tensor_view target(codes.data(), dtype::int8, {count});
    target.with_quantization(numgap::quantization::blocks(-1, 32, scales));
    const numgap::tensor_view reference_view(reference.data(), {count});
    const auto plan = kernels::make_pair_plan(reference_view, target);
    for (const auto& table : kernels::available_kernels()) {
        CAPTURE(std::string_view(table.arch_name));
        kernels::pair_moments moments;
        kernels::accumulate_plan(plan, 0, count, table, {}, moments);
        // Squares of values near 2^121 overflow the sums; the largest
        // difference is exact and must be 0.
        CHECK(moments.count == count);
        CHECK(moments.max_abs_diff == 0.0);
    }
}

TEST_CASE("pairs without a float32 side: MXFP8 vs MXFP8, bfloat16 vs float8, MXFP4 vs MXFP6 agree with the oracle") {
    const std::int64_t rows = 4, columns = 320, count = rows * columns;
    std::vector<float> scales(std::size_t(count / 32));
    for (std::size_t b = 0; b < scales.size(); ++b) scales[b] = std::ldexp(1.0f, int(b % 5) - 2);
    const std::vector<std::uint8_t> e4m3 = every_code(dtype::float8_e4m3fn, std::size_t(count));
    const std::vector<std::uint8_t> e5m2 = every_code(dtype::float8_e5m2, std::size_t(count));
    const std::vector<std::uint8_t> e2m1 = every_code(dtype::float4_e2m1fn, std::size_t(count / 2));
    const std::vector<std::uint8_t> e3m2 = every_code(dtype::float6_e3m2fn, std::size_t(count));
    std::vector<numgap::bfloat16> brain(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < brain.size(); ++i) brain[i] = numgap::bfloat16{std::uint16_t(0x3f80 + i % 300)};
    struct side {
        const void* data;
        dtype type;
        bool scaled;
        float value(std::size_t e, const std::vector<float>& block_scales) const {
            const auto* bytes = static_cast<const std::uint8_t*>(data);
            const std::vector<std::uint8_t> one(bytes, bytes + (type == dtype::float4_e2m1fn ? e / 2 + 1 : e + 1));
            const float raw = type == dtype::bfloat16 ? numgap::to_float(static_cast<const numgap::bfloat16*>(data)[e])
                                                      : decoded(type, one, e);
            return scaled ? block_scales[e / 32] * raw : raw;
        }
    };
    const std::pair<side, side> pairs[] = {
        {{e4m3.data(), dtype::float8_e4m3fn, true}, {e5m2.data(), dtype::float8_e5m2, true}},
        {{brain.data(), dtype::bfloat16, false}, {e4m3.data(), dtype::float8_e4m3fn, false}},
        {{e2m1.data(), dtype::float4_e2m1fn, true}, {e3m2.data(), dtype::float6_e3m2fn, true}},
        {{e4m3.data(), dtype::float8_e4m3fn, false}, {e4m3.data(), dtype::float8_e4m3fn, true}},
    };
    for (const auto& sides : pairs) {
        // Named references, not a structured binding: clang 14 cannot
        // capture a binding in CAPTURE's lambda.
        const auto& left = sides.first;
        const auto& right = sides.second;
        std::vector<float> expected_left(static_cast<std::size_t>(count)), expected_right(static_cast<std::size_t>(count));
        for (std::size_t e = 0; e < std::size_t(count); ++e) {
            expected_left[e] = left.value(e, scales);
            expected_right[e] = right.value(e, scales);
        }
        auto view_of = [&](const side& s) {
            numgap::tensor_view view(s.data, s.type, {rows, columns});
            if (s.scaled) view.with_quantization(numgap::quantization::blocks(-1, 32, scales));
            return view;
        };
        const auto oracle = kernels::scalar_reference<float>(expected_left, expected_right);
        const auto results = numgap::evaluate(view_of(left), view_of(right), numgap::max_abs{}, numgap::mse{});
        CAPTURE(numgap::name_of(left.type));
        CAPTURE(numgap::name_of(right.type));
        CHECK(results[0].value == double(float(oracle.max_abs())));
        // max_abs exact shows every value decoded right; mse within float32
        // accumulation of these magnitudes (the 1e-7 bound at n = 10^7 is
        // tests/kernels/fused's, on realistic values).
        CHECK(std::abs(results[1].value - double(oracle.mse())) <= 1e-6 * double(oracle.mse()));
        CHECK(oracle.max_abs() > 0);
    }
}

TEST_CASE("validation: MX elements take block scales only, NaN block scales are NaN blocks, float4 is contiguous") {
    std::vector<std::uint8_t> bytes(64, 0x11);
    std::vector<float> scales(2, 1.0f);
    const std::vector<std::int32_t> zero_points(2, 1);
    numgap::tensor_view with_zero_points(bytes.data(), dtype::float6_e2m3fn, {64});
    with_zero_points.with_quantization(numgap::quantization::blocks(-1, 32, scales, zero_points));
    CHECK_THROWS_WITH_AS(numgap::validate_view(with_zero_points), doctest::Contains("block scales only"), numgap::error);
    numgap::tensor_view per_tensor(bytes.data(), dtype::float8_e4m3fn, {64});
    per_tensor.with_quantization(numgap::quantization::per_tensor(0.5f));
    CHECK_THROWS_WITH_AS(numgap::validate_view(per_tensor), doctest::Contains("per-tensor or per-channel"), numgap::error);
    numgap::tensor_view e8m0(bytes.data(), dtype::float8_e8m0fnu, {64});
    e8m0.with_quantization(numgap::quantization::blocks(-1, 32, scales));
    CHECK_THROWS_WITH_AS(numgap::validate_view(e8m0), doctest::Contains("can be quantized"), numgap::error);
    numgap::tensor_view wrong_count(bytes.data(), dtype::float4_e2m1fn, {128});
    wrong_count.with_quantization(numgap::quantization::blocks(-1, 32, std::span<const float>(scales.data(), 2)));
    CHECK_THROWS_WITH_AS(numgap::validate_view(wrong_count), doctest::Contains("it needs 4"), numgap::error);
    const std::int64_t shape[] = {16}, strides[] = {2};
    CHECK_THROWS_WITH_AS(numgap::validate_view(numgap::tensor_view(bytes.data(), dtype::float4_e2m1fn, shape, strides)),
                         doctest::Contains("stored contiguously"), numgap::error);

    scales[1] = std::nanf("");
    numgap::tensor_view nan_block(bytes.data(), dtype::float6_e3m2fn, {64});
    nan_block.with_quantization(numgap::quantization::blocks(-1, 32, scales));
    CHECK_NOTHROW(numgap::validate_view(nan_block));
    numgap::tensor_view nan_int8(bytes.data(), dtype::int8, {64});
    nan_int8.with_quantization(numgap::quantization::blocks(-1, 32, scales));
    CHECK_THROWS_WITH_AS(numgap::validate_view(nan_int8), doctest::Contains("finite and non-zero"), numgap::error);
}
}
