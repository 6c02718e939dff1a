// Pins block_source (numgap/kernels/source/block_source.hpp) and the packed /
// block-quantized walk around it, on every kernel this CPU can run: each
// dequantized value equals the scalar oracle scale * float(q - zero_point)
// bit for bit. A float32 reference holding exactly the oracle's values makes
// that checkable through the fused sums: any differing bit gives a non-zero
// max |r - t|. Lengths cover 0, 1, odd, each vector width -1/0/+1 and long
// runs; both nibble phases; blocks that straddle vectors, partial last blocks
// and block offsets; blocks along the last and an outer axis, on the
// in-register path and on the converting block path.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include "../walk_both_paths.hpp"

#include <numgap/kernels/dispatch/dispatch.hpp>
#include <numgap/kernels/plan/validate_pair.hpp>
#include <numgap/kernels/scalar_reference.hpp>
#include <numgap/kernels/source/aligned_block_source.hpp>
#include <numgap/kernels/table/accumulate_plan.hpp>
#include <numgap/metric/evaluate.hpp>
#include <numgap/metric/builtin_metrics.hpp>

namespace {

using numgap::dtype;
namespace kernels = numgap::kernels;

// The oracle's decode of element e (core/dtype.hpp, core/quantization.hpp).
std::int32_t code_at(dtype type, const std::vector<std::uint8_t>& bytes, std::size_t e) {
    switch (type) {
    case dtype::int4: {
        const int nibble = (bytes[e / 2] >> (4 * (e % 2))) & 0xf;
        return nibble >= 8 ? nibble - 16 : nibble;
    }
    case dtype::uint4: return (bytes[e / 2] >> (4 * (e % 2))) & 0xf;
    case dtype::int8: return std::int8_t(bytes[e]);
    default: return bytes[e];
    }
}
float dequantized(float scale, std::int32_t code, std::int32_t zero_point) { return scale * float(code - zero_point); }

kernels::pair_moments run_pair(const kernels::kernel_table& table, const std::vector<float>& reference,
                               const kernels::stored_run& target, std::size_t n) {
    kernels::pair_moments moments;
    table.run_f32(kernels::stored_run{reference.data(), dtype::float32}, target, n, {}, moments);
    return moments;
}

std::vector<std::uint8_t> pattern_bytes(std::size_t count, unsigned seed) {
    std::vector<std::uint8_t> bytes(count);
    for (std::size_t i = 0; i < count; ++i) bytes[i] = std::uint8_t(i < 256 ? i : (i * 2654435761u + seed) >> 13);
    return bytes;
}

// Block-scaled runs of one row of `row` int4 / uint4 / int8 / uint8 codes:
// every block size, with and without zero points, from every offset, on
// every kernel, each run's first `lengths` elements (none given: the whole
// rest of the row), against the oracle's values.
void check_block_scaled_row(std::size_t row, unsigned seed, std::initializer_list<std::uint32_t> block_sizes,
                            std::initializer_list<std::uint32_t> offsets, std::span<const std::size_t> lengths) {
    const std::vector<std::uint8_t> bytes = pattern_bytes(row, seed);
    for (const dtype type : {dtype::int4, dtype::uint4, dtype::int8, dtype::uint8}) {
        for (const std::uint32_t block : block_sizes) {
            const std::size_t blocks = (row + block - 1) / block;
            std::vector<float> scales(blocks);
            std::vector<std::int32_t> zero_points(blocks);
            for (std::size_t b = 0; b < blocks; ++b) {
                scales[b] = 0.01f * float(b % 17 + 1) + 1e-4f * float(b);
                zero_points[b] = std::int32_t(b % 5) - 2;
            }
            for (const bool with_zero_points : {true, false}) {
                for (const std::uint32_t offset : offsets) {
                    // Packed runs start at element `offset` of a row that starts at a byte.
                    const bool packed = type == dtype::int4 || type == dtype::uint4;
                    std::vector<float> reference(row - offset);
                    for (std::size_t i = 0; i < reference.size(); ++i) {
                        const std::size_t b = (offset + i) / block;
                        reference[i] = dequantized(scales[b], code_at(type, bytes, offset + i),
                                                   with_zero_points ? zero_points[b] : 0);
                    }
                    kernels::stored_run target{packed ? bytes.data() + offset / 2 : bytes.data() + offset, type};
                    target.nibble = std::uint8_t(packed ? offset % 2 : 0);
                    target.block_scales = scales.data();
                    target.block_zero_points = with_zero_points ? zero_points.data() : nullptr;
                    target.offset_in_row = offset;
                    target.block_size = block;
                    target.divider = kernels::make_block_divider(block);
                    const std::size_t whole[] = {reference.size()};
                    for (const auto& table : kernels::available_kernels()) {
                        for (const std::size_t n : lengths.empty() ? std::span<const std::size_t>(whole) : lengths) {
                            if (n > reference.size()) continue;
                            CAPTURE(std::string_view(table.arch_name));
                            CAPTURE(numgap::name_of(type));
                            CAPTURE(block);
                            CAPTURE(with_zero_points);
                            CAPTURE(offset);
                            CAPTURE(n);
                            numgap_test::check_exact(run_pair(table, reference, target, n), n);
                        }
                    }
                }
            }
        }
    }
}

} // namespace

TEST_SUITE("kernels") {
TEST_CASE("every int4 / uint4 nibble dequantizes exactly, per tensor, at both nibble phases, every length and arch") {
    // Bytes 0..255 first: every pair of codes, so every nibble value in both positions.
    const std::vector<std::uint8_t> bytes = pattern_bytes(520, 7);
    for (const dtype type : {dtype::int4, dtype::uint4}) {
        // Phase 0 takes aligned_block_source (the run's scale is its one
        // block; with or without a zero point), phase 1 block_source.
        for (const std::size_t phase : {0u, 1u}) {
            for (const std::int32_t zero_point : {3, 0}) {
                std::vector<float> reference(1000);
                for (std::size_t i = 0; i < reference.size(); ++i)
                    reference[i] = dequantized(0.37f, code_at(type, bytes, phase + i), zero_point);
                for (const auto& table : kernels::available_kernels()) {
                    for (const std::size_t n : numgap_test::block_walk_lengths) {
                        CAPTURE(std::string_view(table.arch_name));
                        CAPTURE(numgap::name_of(type));
                        CAPTURE(phase);
                        CAPTURE(zero_point);
                        CAPTURE(n);
                        kernels::stored_run target{bytes.data(), type, 0.37f, zero_point};
                        target.nibble = std::uint8_t(phase);
                        numgap_test::check_exact(run_pair(table, reference, target, n), n);
                    }
                }
            }
        }
    }
}

TEST_CASE("block-scaled runs use each element's block, straddling vectors and partial blocks, every arch") {
    // One row of 1000 elements (not a multiple of any block below: a partial
    // last block), runs starting at several offsets within it. Power-of-two
    // blocks of at least the width at offsets that are multiples of it take
    // aligned_block_source, with and without zero points; the rest (blocks
    // of 48, 5, 1, offsets 2, 3, 500) block_source.
    check_block_scaled_row(1000, 11, {32, 64, 16, 128, 48, 5, 1, 1000}, {0, 2, 3, 8, 16, 32, 48, 500},
                           numgap_test::block_walk_lengths);
}

TEST_CASE("block-scaled rows of several chunks: every element's block, every arch") {
    // 5000 elements, each run read to the row's end: the fused kernel's chunks
    // (flush_interval) advance the source, so aligned and unaligned runs
    // cross chunk boundaries mid-row.
    check_block_scaled_row(5000, 5, {32, 128, 48}, {0, 16, 33}, {});
}

TEST_CASE("aligned_block_layout takes exactly the runs whose vectors each lie in one block at a byte") {
    using kernels::detail::aligned_block_layout;
    // One entry per block of the longest row below (offset 256 + 1000 elements, blocks of 1).
    const std::vector<float> scales(2048, 1.0f);
    const std::vector<std::int32_t> zero_points(2048, 0);
    for (const std::size_t width : {1u, 4u, 8u, 16u}) {
        for (std::uint32_t block = 1; block <= 256; ++block) {
            for (const std::uint32_t offset : {0u, 1u, 4u, 8u, 16u, 32u, 40u, 64u, 96u, 256u}) {
                for (const std::size_t nibble : {0u, 1u}) {
                    for (const std::size_t n : {1u, 15u, 16u, 100u, 1000u}) {
                        CAPTURE(width);
                        CAPTURE(block);
                        CAPTURE(offset);
                        CAPTURE(nibble);
                        CAPTURE(n);
                        const auto fields =
                            aligned_block_layout(scales.data(), zero_points.data(), offset, nibble, block, n, width);
                        const bool one_block = offset / block == (offset + n - 1) / block;
                        const bool power_of_two = (block & (block - 1)) == 0;
                        const bool aligned = power_of_two && block >= width && offset % width == 0;
                        REQUIRE(fields.has_value() == (nibble == 0 && (one_block || aligned)));
                        if (!fields) continue;
                        // Every element of the run maps to its own block's scale and
                        // zero point, and no vector straddles two blocks.
                        bool maps_to_own_block = true, no_vector_straddles = true;
                        for (std::size_t i = 0; i < n; ++i) {
                            const std::uint32_t mapped = (fields->first_position + std::uint32_t(i)) >> fields->shift;
                            maps_to_own_block = maps_to_own_block &&
                                                fields->block_scales + mapped == scales.data() + (offset + i) / block &&
                                                fields->block_zero_points + mapped == zero_points.data() + (offset + i) / block;
                        }
                        for (std::size_t i = 0; i + width <= n; i += width)
                            no_vector_straddles = no_vector_straddles && (fields->first_position + i) >> fields->shift ==
                                                                             (fields->first_position + i + width - 1) >> fields->shift;
                        CHECK(maps_to_own_block);
                        CHECK(no_vector_straddles);
                    }
                }
            }
        }
    }
    // Without scales, with no elements, or past 32-bit positions: block_source's.
    CHECK_FALSE(aligned_block_layout(nullptr, nullptr, 0, 0, 32, 100, 16));
    CHECK_FALSE(aligned_block_layout(scales.data(), nullptr, 0, 0, 32, 0, 16));
    CHECK_FALSE(aligned_block_layout(scales.data(), nullptr, 0, 0, 1u << 31, std::size_t(1) << 31, 16));
    CHECK(aligned_block_layout(scales.data(), nullptr, 0, 0, 1u << 31, (std::size_t(1) << 31) - 1, 16));
}

TEST_CASE("block_divider divides exactly for every block size up to 4096 and positions up to 2^31") {
    for (std::uint32_t block = 1; block <= 4096; ++block) {
        const auto divider = kernels::make_block_divider(block);
        for (const std::uint32_t a : {0u, 1u, block - 1, block, block + 1, 3 * block - 1, 123456789u, 2147483647u})
            if (kernels::divide(a, divider) != a / block) FAIL_CHECK("block " << block << ", position " << a);
    }
    for (const std::uint32_t block : {4097u, 65535u, 1000003u, 2147483647u}) {
        const auto divider = kernels::make_block_divider(block);
        for (const std::uint32_t a : {0u, block - 1, block, 2147483647u}) CHECK(kernels::divide(a, divider) == a / block);
    }
}

TEST_CASE("packed and block-quantized views walk exactly through both plan paths, every layout and arch") {
    // [rows, columns] with blocks along the last axis (in registers) or the
    // first (element by element); odd element counts; the converting path
    // forced too by a table without run_f32.
    struct layout {
        std::int64_t rows, columns;
        int axis;
        std::int64_t block;
    };
    const layout layouts[] = {{3, 1001, -1, 32}, {5, 300, 1, 64}, {33, 257, 0, 32}, {7, 9, -1, 4}, {2, 777, -1, 1 << 20}};
    for (const dtype type : {dtype::int4, dtype::uint4, dtype::int8, dtype::uint8}) {
        for (const layout& shape : layouts) {
            const std::int64_t count = shape.rows * shape.columns;
            const bool packed = numgap::is_packed(type);
            const std::vector<std::uint8_t> bytes = pattern_bytes(std::size_t(packed ? (count + 1) / 2 : count), 3);
            const int axis = numgap::resolved_axis(shape.axis, 2);
            const std::int64_t length = axis == 0 ? shape.rows : shape.columns;
            const std::int64_t per_row = (length + shape.block - 1) / shape.block;
            const std::int64_t parameters = axis == 0 ? per_row * shape.columns : shape.rows * per_row;
            std::vector<float> scales(static_cast<std::size_t>(parameters));
            std::vector<std::int32_t> zero_points(static_cast<std::size_t>(parameters));
            for (std::size_t b = 0; b < scales.size(); ++b) {
                scales[b] = 0.5f / float(b % 13 + 1);
                zero_points[b] = std::int32_t(b % 3);
            }
            std::vector<float> reference(static_cast<std::size_t>(count));
            for (std::int64_t r = 0; r < shape.rows; ++r)
                for (std::int64_t c = 0; c < shape.columns; ++c) {
                    const std::int64_t e = r * shape.columns + c;
                    const std::int64_t b = axis == 0 ? (r / shape.block) * shape.columns + c : r * per_row + c / shape.block;
                    reference[std::size_t(e)] = dequantized(scales[std::size_t(b)], code_at(type, bytes, std::size_t(e)),
                                                            zero_points[std::size_t(b)]);
                }
            numgap::tensor_view target(bytes.data(), type, {shape.rows, shape.columns});
            target.with_quantization(numgap::quantization::blocks(shape.axis, shape.block, scales, zero_points));
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

TEST_CASE("every metric on float32 against int4 / int8 block-quantized targets agrees with the long-double oracle") {
    const std::int64_t rows = 16, columns = 512;
    std::vector<float> reference(static_cast<std::size_t>(rows * columns));
    for (std::size_t i = 0; i < reference.size(); ++i) reference[i] = float(int(i * 7919 % 201) - 100) / 25.0f;
    for (const dtype type : {dtype::int4, dtype::int8}) {
        for (const int axis : {-1, 0}) {
            const std::int64_t block = 32;
            const std::int64_t blocks = axis == 0 ? (rows + block - 1) / block * columns : rows * (columns / block);
            const std::int64_t top = type == dtype::int4 ? 7 : 127;
            // Symmetric quantization of the reference, one scale per block.
            std::vector<float> scales(std::size_t(blocks), 0.0f);
            auto block_of = [&](std::int64_t r, std::int64_t c) {
                return std::size_t(axis == 0 ? (r / block) * columns + c : r * (columns / block) + c / block);
            };
            for (std::int64_t r = 0; r < rows; ++r)
                for (std::int64_t c = 0; c < columns; ++c) {
                    float& scale = scales[block_of(r, c)];
                    scale = std::max(scale, std::abs(reference[std::size_t(r * columns + c)]) / float(top));
                }
            for (float& scale : scales)
                if (scale == 0.0f) scale = 1.0f;
            std::vector<std::uint8_t> bytes(static_cast<std::size_t>(type == dtype::int4 ? rows * columns / 2 : rows * columns));
            std::vector<float> dequantized_target(reference.size());
            for (std::int64_t r = 0; r < rows; ++r)
                for (std::int64_t c = 0; c < columns; ++c) {
                    const std::size_t e = std::size_t(r * columns + c);
                    const float scale = scales[block_of(r, c)];
                    const auto q = std::int32_t(std::lround(std::clamp(reference[e] / scale, -float(top) - 1, float(top))));
                    if (type == dtype::int4)
                        bytes[e / 2] = std::uint8_t(bytes[e / 2] | ((q & 0xf) << (4 * (e % 2))));
                    else
                        bytes[e] = std::uint8_t(q);
                    dequantized_target[e] = dequantized(scale, q, 0);
                }
            numgap::tensor_view target(bytes.data(), type, {rows, columns});
            target.with_quantization(numgap::quantization::blocks(axis, block, scales));
            const numgap::tensor_view reference_view(reference.data(), {rows, columns});
            const auto oracle = kernels::scalar_reference<float>(reference, dequantized_target);
            const auto results = numgap::evaluate(reference_view, target, numgap::cosine{}, numgap::mse{}, numgap::atol{},
                                                  numgap::max_abs{}, numgap::snr_db{}, numgap::norm_l2{});
            CAPTURE(numgap::name_of(type));
            CAPTURE(axis);
            auto relative = [](double value, long double expected) {
                return double(std::abs((value - expected) / expected));
            };
            CHECK(relative(1 - results[0].value, oracle.one_minus_cosine()) < 1e-6);
            CHECK(relative(results[1].value, oracle.mse()) < 1e-7);
            CHECK(relative(results[2].value, oracle.atol()) < 1e-7);
            CHECK(results[3].value == double(float(oracle.max_abs())));
            CHECK(relative(results[4].value, oracle.snr_db()) < 1e-7);
            CHECK(relative(results[5].value, oracle.norm_l2()) < 1e-7);
            CHECK(oracle.max_abs() > 0); // the quantization error is there to be measured
        }
    }
}
}
