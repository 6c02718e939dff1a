// Pins every bad-input case of the issue (numgap/kernels/plan/validate_pair.hpp): each
// throws numgap::error naming the tensor and the reason, through evaluate().
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/kernels/plan/copy_as_float.hpp>
#include <numgap/kernels/plan/validate_pair.hpp>
#include <numgap/metric.hpp>

#include "../../core/caught_error.hpp"

namespace {

const std::vector<float> data(24, 1.0f);

numgap::tensor_view named(numgap::tensor_view view, std::string_view name) {
    view.with_name(name);
    return view;
}

void expect_error(const numgap::tensor_view& r, const numgap::tensor_view& t, const std::string& first,
                  const std::string& second) {
    CHECK_THROWS_WITH_AS(numgap::validate_pair(r, t), doctest::Contains(first.c_str()), numgap::error);
    CHECK_THROWS_WITH_AS(numgap::validate_pair(r, t), doctest::Contains(second.c_str()), numgap::error);
    CHECK_THROWS_AS(numgap::evaluate(r, t, numgap::metric_set::defaults()), numgap::error);
}

} // namespace

TEST_SUITE("kernels") {
TEST_CASE("mismatched shapes after axis_order name both tensors and both shapes") {
    const auto r = named(numgap::tensor_view(data.data(), {2, 3, 4}), "conv1");
    expect_error(r, named(numgap::tensor_view(data.data(), {2, 4, 3}), "conv1_npu"), "'conv1'", "[2, 4, 3]");
    expect_error(r, named(numgap::tensor_view(data.data(), {2, 3, 3}), "conv1_npu"), "24 vs 18 elements", "'conv1_npu'");
    expect_error(r, named(numgap::tensor_view(data.data(), {6, 4}), "x"), "[2, 3, 4]", "[6, 4]");
    auto permuted = named(numgap::tensor_view(data.data(), {2, 3, 4}), "nhwc");
    permuted.with_axis_order({0, 2, 1}); // stored [2,3,4] is reference [2,4,3]
    expect_error(r, permuted, "axis_order [0, 2, 1]", "'nhwc'");
}

TEST_CASE("shapes are compared in reference order, with an axis_order on either side or both") {
    const numgap::tensor_view r(data.data(), {2, 3, 4});
    auto nhwc = numgap::tensor_view(data.data(), {2, 4, 3});
    nhwc.with_axis_order({0, 2, 1}); // reference [2, 3, 4]
    CHECK_NOTHROW(numgap::validate_pair(r, nhwc));
    CHECK_NOTHROW(numgap::validate_pair(nhwc, r)); // the reference's order is [2, 3, 4] too
    CHECK_NOTHROW(numgap::validate_pair(nhwc, nhwc));
    auto other = numgap::tensor_view(data.data(), {4, 3, 2});
    other.with_axis_order({2, 1, 0}); // [2, 3, 4]
    CHECK_NOTHROW(numgap::validate_pair(nhwc, other));
    // The same stored shape, read in another order: [2, 3, 4] against [3, 2, 4].
    auto swapped = numgap::tensor_view(data.data(), {2, 3, 4});
    swapped.with_axis_order({1, 0, 2});
    expect_error(r, swapped, "[3, 2, 4]", "axis_order [1, 0, 2]");
    // Ranks differ; the sizes agree.
    expect_error(r, numgap::tensor_view(data.data(), {2, 3, 4, 1}), "[2, 3, 4]", "[2, 3, 4, 1]");
}

TEST_CASE("an axis_order that is not a permutation is rejected") {
    const auto r = numgap::tensor_view(data.data(), {2, 3, 4});
    auto duplicate = named(numgap::tensor_view(data.data(), {2, 3, 4}), "t");
    duplicate.with_axis_order({0, 1, 1});
    expect_error(r, duplicate, "not a permutation", "'t'");
    auto out_of_range = named(numgap::tensor_view(data.data(), {2, 3, 4}), "t");
    out_of_range.with_axis_order({0, 1, 5});
    expect_error(r, out_of_range, "not a permutation of 0..2", "target tensor 't'");
    auto negative = numgap::tensor_view(data.data(), {2, 3, 4});
    negative.with_axis_order({-1, 0, 1});
    expect_error(r, negative, "not a permutation", "[-1, 0, 1]");
}

TEST_CASE("zero or non-finite scales are rejected, per tensor and per channel") {
    const std::vector<std::uint8_t> q(24, 3);
    const auto r = numgap::tensor_view(data.data(), {2, 3, 4});
    for (const float bad : {0.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
        auto t = named(numgap::tensor_view(q.data(), {2, 3, 4}), "q");
        t.with_quantization(numgap::quantization::per_tensor(bad, 0));
        expect_error(r, t, "'q'", "finite and non-zero");
    }
    const float scales[] = {0.1f, 0.0f, 0.2f};
    auto t = named(numgap::tensor_view(q.data(), {2, 3, 4}), "q");
    t.with_quantization(numgap::quantization::along(1, scales));
    expect_error(r, t, "scale[1]", "finite and non-zero");
}

TEST_CASE("per-channel parameter counts must match the axis length; the axis must exist") {
    const std::vector<std::int8_t> q(24, 3);
    const auto r = numgap::tensor_view(data.data(), {2, 3, 4});
    const float four_scales[] = {0.1f, 0.1f, 0.1f, 0.1f};
    auto t = named(numgap::tensor_view(q.data(), {2, 3, 4}), "w");
    t.with_quantization(numgap::quantization::along(1, four_scales));
    expect_error(r, t, "4 scales, but that axis has 3 elements", "'w'");
    const float three_scales[] = {0.1f, 0.1f, 0.1f};
    const std::int32_t two_zero_points[] = {0, 1};
    auto z = named(numgap::tensor_view(q.data(), {2, 3, 4}), "w");
    z.with_quantization(numgap::quantization::along(1, three_scales, two_zero_points));
    expect_error(r, z, "2 zero points", "'w'");
    auto axis = named(numgap::tensor_view(q.data(), {2, 3, 4}), "w");
    axis.with_quantization(numgap::quantization::along(3, three_scales));
    expect_error(r, axis, "axis 3, out of range for rank 3", "'w'");
}

TEST_CASE("block quantization: counts, axis, zero-point range and layout are checked; packed views are contiguous") {
    const std::vector<std::uint8_t> codes(12, 0x21);
    const auto r = named(numgap::tensor_view(data.data(), {4, 6}), "w");
    auto blocked = [&](int axis, std::int64_t block, std::span<const float> scales, std::span<const std::int32_t> zero = {}) {
        numgap::tensor_view t(codes.data(), numgap::dtype::int4, {4, 6});
        t.with_quantization(numgap::quantization::blocks(axis, block, scales, zero));
        return named(t, "w_int4");
    };
    const std::vector<float> eight(8, 0.5f), twelve(12, 0.5f), four(4, 0.5f);
    // 4 rows x ceil(6 / 4) = 8 along the last axis; ceil(4 / 3) x 6 = 12 along the first.
    CHECK_NOTHROW(numgap::validate_pair(r, blocked(-1, 4, eight)));
    CHECK_NOTHROW(numgap::validate_pair(r, blocked(0, 3, twelve)));
    CHECK_NOTHROW(numgap::validate_pair(r, blocked(1, std::int64_t(1) << 62, four))); // one block per row
    expect_error(r, blocked(-1, 4, twelve), "'w_int4'", "12 scales; it needs 8, one per block");
    expect_error(r, blocked(2, 4, eight), "'w_int4'", "along axis 2, out of range for rank 2");
    const std::vector<std::int32_t> three_zero_points(3, 0), far_zero_points(8, 1 << 25);
    expect_error(r, blocked(-1, 4, eight, three_zero_points), "3 zero points", "none or 8");
    expect_error(r, blocked(-1, 4, eight, far_zero_points), "zero point[0] 33554432", "beyond +-2^24");
    std::vector<float> with_zero_scale = eight;
    with_zero_scale[5] = 0.0f;
    expect_error(r, blocked(-1, 4, with_zero_scale), "'w_int4'", "block scale[5]");
    expect_error(r, blocked(-1, -4, eight), "'w_int4'", "block size -4");
    numgap::tensor_view stray(codes.data(), numgap::dtype::int4, {4, 6});
    stray.with_quantization(numgap::quantization{1.0f, 0, {}, three_zero_points, -1});
    expect_error(r, named(stray, "w_int4"), "3 zero points without scales", "need scales");
    auto permuted = blocked(-1, 4, eight);
    permuted.with_axis_order({1, 0});
    expect_error(named(numgap::tensor_view(data.data(), {6, 4}), "w"), permuted, "'w_int4'", "with an axis_order");
    // Packed data: two elements per byte, so only contiguous views.
    const std::vector<std::int64_t> shape{4, 3}, transposed{1, 4};
    expect_error(named(numgap::tensor_view(data.data(), {4, 3}), "w"),
                 named(numgap::tensor_view(codes.data(), numgap::dtype::uint4, shape, transposed), "w_uint4"),
                 "'w_uint4'", "packed 4-bit tensors must be stored contiguously");
}

TEST_CASE("quantization on a float tensor is rejected") {
    auto t = named(numgap::tensor_view(data.data(), {2, 3, 4}), "f");
    t.with_quantization(numgap::quantization::per_tensor(0.5f, 0));
    expect_error(numgap::tensor_view(data.data(), {2, 3, 4}), t, "dtype float32", "only integer dtypes");
}

TEST_CASE("empty tensors and null data are rejected, naming the tensor") {
    const auto empty_r = named(numgap::tensor_view(data.data(), {0, 3}), "empty_ref");
    expect_error(empty_r, numgap::tensor_view(data.data(), {0, 3}), "reference tensor 'empty_ref' is empty", "[0, 3]");
    const auto null_t = named(numgap::tensor_view(static_cast<const float*>(nullptr), {2}), "ghost");
    expect_error(numgap::tensor_view(data.data(), {2}), null_t, "'ghost'", "null");
}

TEST_CASE("unsupported dtype combinations and unknown dtype codes are rejected") {
    const bool mask[24] = {};
    expect_error(named(numgap::tensor_view(data.data(), {24}), "logits"), named(numgap::tensor_view(mask, {24}), "mask"),
                 "'logits' (float32)", "'mask' (bool)");
    const auto unknown = numgap::tensor_view(data.data(), static_cast<numgap::dtype>(99), {24});
    expect_error(numgap::tensor_view(data.data(), {24}), unknown, "unknown dtype", "99");
    // Every code that names no dtype, below and beyond the 64 the known-dtype
    // bit set covers.
    for (int code = 0; code < 256; ++code) {
        const auto type = static_cast<numgap::dtype>(code);
        if (std::find(std::begin(numgap::all_dtypes), std::end(numgap::all_dtypes), type) !=
            std::end(numgap::all_dtypes))
            continue;
        CAPTURE(code);
        const std::string expected = "unknown dtype code " + std::to_string(code);
        CHECK_THROWS_WITH_AS(numgap::validate_view(numgap::tensor_view(data.data(), type, {24})),
                             doctest::Contains(expected.c_str()), numgap::error);
    }
}

TEST_CASE("copy_as_float validates the view and the buffer size") {
    std::vector<float> out(23);
    CHECK_THROWS_WITH_AS(numgap::copy_as_float(named(numgap::tensor_view(data.data(), {24}), "x"), out),
                         doctest::Contains("24 elements"), numgap::error);
    const std::vector<std::uint8_t> q = {0, 10, 20, 255};
    auto view = numgap::tensor_view(q.data(), {2, 2});
    view.with_quantization(numgap::quantization::per_tensor(0.5f, 10));
    std::vector<float> values(4);
    numgap::copy_as_float(view, values);
    CHECK(values == std::vector<float>{-5.0f, 0.0f, 5.0f, 122.5f});
}

TEST_CASE("data not aligned for its dtype is refused, naming the tensor and the dtype") {
    // A hand-made .npy header can put float64 data at an odd offset; typed
    // loads from it would be undefined behaviour.
    std::vector<double> storage(5, 1.0);
    const auto* misaligned = reinterpret_cast<const std::byte*>(storage.data()) + 1;
    const numgap::tensor_view odd = named(numgap::tensor_view(misaligned, numgap::dtype::float64, {3}), "odd");
    const numgap::tensor_view fine = named(numgap::tensor_view(storage.data(), numgap::dtype::float64, {3}), "fine");
    expect_error(fine, odd, "odd", "not aligned for float64");
    // One-byte dtypes are aligned everywhere.
    const numgap::tensor_view bytes(misaligned, numgap::dtype::uint8, {3});
    CHECK_NOTHROW(numgap::validate_view(bytes));
    // Every storage unit, every offset below it.
    const auto* base = reinterpret_cast<const std::byte*>(storage.data());
    for (const numgap::dtype type : {numgap::dtype::float16, numgap::dtype::float32, numgap::dtype::float64}) {
        const std::size_t unit = numgap::size_of(type);
        for (std::size_t offset = 0; offset < 8; ++offset) {
            CAPTURE(unit);
            CAPTURE(offset);
            const numgap::tensor_view view(base + offset, type, {2});
            if (offset % unit == 0) CHECK_NOTHROW(numgap::validate_view(view));
            else CHECK_THROWS_WITH_AS(numgap::validate_view(view), doctest::Contains("not aligned"), numgap::error);
        }
    }
}

TEST_CASE("validation errors carry a kind and the tensor's name") {
    using numgap::error_kind;
    const auto kind_of = [](auto&& action) {
        const auto failure = numgap_test::caught_error(action);
        REQUIRE(failure.has_value());
        return *failure;
    };
    const auto r = named(numgap::tensor_view(data.data(), {2, 3, 4}), "conv1");
    const auto shape_failure =
        kind_of([&] { numgap::validate_pair(r, named(numgap::tensor_view(data.data(), {6, 4}), "conv1_npu")); });
    CHECK(shape_failure.kind() == error_kind::shape);
    CHECK(shape_failure.where().item == "conv1");

    const auto empty_failure = kind_of([&] { numgap::validate_view(named(numgap::tensor_view(data.data(), {0}), "e")); });
    CHECK(empty_failure.kind() == error_kind::shape);
    CHECK(empty_failure.where().item == "e");

    auto scaled = named(numgap::tensor_view(data.data(), {24}), "f");
    scaled.with_quantization(numgap::quantization::per_tensor(0.5f));
    const auto dtype_failure = kind_of([&] { numgap::validate_view(scaled); });
    CHECK(dtype_failure.kind() == error_kind::dtype);
    CHECK(dtype_failure.where().item == "f");

    float out[3];
    const auto copy_failure = kind_of([&] { numgap::copy_as_float(r, std::span<float>(out, 3)); });
    CHECK(copy_failure.kind() == error_kind::usage);
}
} // TEST_SUITE("kernels")
