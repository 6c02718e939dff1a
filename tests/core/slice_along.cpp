// Pins core/slice_along.hpp and core/segmented_view.hpp at the view level:
// a slice is the same memory (pointer moved by offset x stride, strides kept),
// along the reference dimension an axis_order maps; per-channel scales along
// the sliced dimension narrow with it; the tiling rules of segmented_extent.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include <numgap/core/segmented_view.hpp>
#include <numgap/core/slice_along.hpp>

#include "caught_error.hpp"

TEST_SUITE("core") {
TEST_CASE("slice_along: a view into the same memory, along the reference dimension, scales narrowed") {
    std::vector<float> values(2 * 3 * 4);
    const numgap::tensor_view whole(values.data(), {2, 3, 4});
    const numgap::tensor_view middle = numgap::slice_along(whole, 1, 1, 2);
    CHECK(middle.data() == values.data() + 4);
    CHECK(middle.shape(1) == 2);
    CHECK(middle.stride(0) == 12);
    CHECK(middle.stride(1) == 4);

    // Stored [2, 4, 3] as reference [2, 3, 4] (axis_order [0, 2, 1]): reference
    // dimension 1 is stored dimension 2, whose stride is 1.
    numgap::tensor_view transposed(values.data(), {2, 4, 3});
    transposed.with_axis_order({0, 2, 1});
    const numgap::tensor_view sliced = numgap::slice_along(transposed, 1, 2, 1);
    CHECK(sliced.data() == values.data() + 2);
    CHECK(sliced.shape(2) == 1);
    CHECK(sliced.logical_shape()[1] == 1);
    CHECK(sliced.has_axis_order());

    std::vector<std::uint8_t> codes(2 * 3);
    const std::vector<float> scales{1.0f, 2.0f, 3.0f};
    const std::vector<std::int32_t> zero_points{7, 8, 9};
    numgap::tensor_view quantized(codes.data(), {2, 3});
    quantized.with_quantization(numgap::quantization::along(1, scales, zero_points));
    const numgap::quantization narrowed = numgap::slice_along(quantized, 1, 1, 2).quant();
    REQUIRE(narrowed.scales.size() == 2);
    CHECK(narrowed.scales[0] == 2.0f);
    CHECK(narrowed.zero_points[1] == 9);
    // Along the other dimension the channels stay whole.
    CHECK(numgap::slice_along(quantized, 0, 1, 1).quant().scales.size() == 3);

    const auto outside = numgap_test::caught_error([&] { (void)numgap::slice_along(whole, 1, 2, 2); });
    REQUIRE(outside);
    CHECK(outside->kind() == numgap::error_kind::usage);
}

TEST_CASE("segmented_extent: the tiled shape, and the first broken rule named through the label") {
    std::vector<float> values(12);
    const numgap::tensor_view two(values.data(), {3, 2}), one(values.data(), {3, 1});
    const std::vector<numgap::tensor_segment> segments{{two, 0}, {one, 2}, {two, 3}};
    const auto shape = numgap::segmented_extent({segments, 1});
    CHECK(shape[0] == 3);
    CHECK(shape[1] == 5);
    const std::vector<numgap::tensor_segment> gap{{two, 0}, {one, 3}};
    const auto failure = numgap_test::caught_error([&] {
        (void)numgap::segmented_extent({gap, 1}, [](std::size_t i) { return "shard " + std::to_string(i); });
    });
    REQUIRE(failure);
    CHECK(failure->kind() == numgap::error_kind::shape);
    CHECK(std::string(failure->what()) == "shard 1 starts at offset 3 but the shards before it end at 2 (a gap)");
}
}
