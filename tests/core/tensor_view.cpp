// tensor_view: construction from spans, pointers with shapes and strides,
// contiguity, axis_order and the logical shape/strides it implies,
// quantization and name, and the errors a malformed view raises.
#include <numgap/core/tensor_view.hpp>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include <doctest/doctest.h>

TEST_SUITE("core") {
TEST_CASE("a span is a contiguous 1-D view of its memory") {
    std::vector<float> values(7, 1.0f);
    const numgap::tensor_view view{std::span<const float>(values)};
    CHECK(view.data() == values.data());
    CHECK(view.type() == numgap::dtype::float32);
    CHECK(view.rank() == 1);
    CHECK(view.size() == 7);
    CHECK(view.stride(0) == 1);
    CHECK(view.is_contiguous());
    CHECK_FALSE(view.is_quantized());
    CHECK_FALSE(view.has_axis_order());
    CHECK(view.describe() == "tensor");
}

TEST_CASE("a pointer with a shape gets row-major strides; explicit strides are kept") {
    std::vector<std::int16_t> values(2 * 3 * 4);
    const numgap::tensor_view contiguous(values.data(), {2, 3, 4});
    CHECK(contiguous.type() == numgap::dtype::int16);
    CHECK(std::vector<std::int64_t>(contiguous.strides().begin(), contiguous.strides().end()) ==
          std::vector<std::int64_t>{12, 4, 1});
    CHECK(contiguous.size() == 24);
    CHECK(contiguous.is_contiguous());

    const std::int64_t shape[] = {3, 2}, strides[] = {1, 3}; // a transpose
    const numgap::tensor_view transposed(values.data(), std::span<const std::int64_t>(shape),
                                         std::span<const std::int64_t>(strides));
    CHECK(transposed.stride(0) == 1);
    CHECK(transposed.stride(1) == 3);
    CHECK_FALSE(transposed.is_contiguous());

    // A size-1 dimension's stride does not matter for contiguity.
    const std::int64_t unit_shape[] = {4, 1, 6}, unit_strides[] = {6, 99, 1};
    CHECK(numgap::tensor_view(values.data(), std::span<const std::int64_t>(unit_shape),
                              std::span<const std::int64_t>(unit_strides))
              .is_contiguous());
    // Rank 0: one element.
    const numgap::tensor_view scalar(values.data(), numgap::dtype::int16, std::span<const std::int64_t>{});
    CHECK(scalar.size() == 1);
    CHECK(scalar.is_contiguous());
}

TEST_CASE("axis_order maps stored dimensions onto the reference's order") {
    std::vector<float> nhwc(2 * 5 * 7 * 3);
    numgap::tensor_view view(nhwc.data(), {2, 5, 7, 3}); // stored N, H, W, C
    view.with_axis_order({0, 2, 3, 1});
    CHECK(view.has_axis_order());
    const auto logical = view.logical_shape();
    CHECK(std::vector<std::int64_t>(logical.begin(), logical.begin() + 4) == std::vector<std::int64_t>{2, 3, 5, 7});
    const auto logical_strides = view.logical_strides();
    CHECK(std::vector<std::int64_t>(logical_strides.begin(), logical_strides.begin() + 4) ==
          std::vector<std::int64_t>{105, 1, 21, 3});
    CHECK_THROWS_WITH_AS(view.with_axis_order({0, 1}), doctest::Contains("axis_order has 2 entries but the tensor has rank 4"),
                         numgap::error);
}

TEST_CASE("quantization and name are carried; describe() names the tensor") {
    std::vector<std::uint8_t> values(4);
    numgap::tensor_view view(values.data(), {4});
    numgap::quantization q;
    q.scale = 0.5f;
    q.zero_point = 3;
    view.with_quantization(q).with_name("conv1.out");
    CHECK(view.is_quantized());
    CHECK(view.quant().scale == 0.5);
    CHECK(view.quant().zero_point == 3);
    CHECK(view.name() == "conv1.out");
    CHECK(view.describe() == "tensor 'conv1.out'");
}

TEST_CASE("malformed views are refused with the reason") {
    float value = 0;
    const std::vector<std::int64_t> too_deep(std::size_t(numgap::max_rank) + 1, 1);
    CHECK_THROWS_WITH_AS(numgap::tensor_view(&value, numgap::dtype::float32, too_deep),
                         doctest::Contains("exceeds numgap's maximum rank"), numgap::error);
    const std::int64_t shape[] = {2, 2}, one_stride[] = {1};
    CHECK_THROWS_WITH_AS(numgap::tensor_view(&value, numgap::dtype::float32, std::span<const std::int64_t>(shape),
                                             std::span<const std::int64_t>(one_stride)),
                         doctest::Contains("2 dimensions but 1 strides"), numgap::error);
    CHECK_THROWS_WITH_AS(numgap::tensor_view(&value, {3, -1}), doctest::Contains("negative dimension -1"),
                         numgap::error);
}
}
