// tensor_view's construction errors: their messages and the kind a program
// acts on (limit for numgap's rank bound, shape for impossible shapes).
#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <numgap/core/tensor_view.hpp>

#include "caught_error.hpp"

TEST_SUITE("core") {
TEST_CASE("tensor_view: a rank above max_rank is a limit, a negative dimension a shape error") {
    const float data[1] = {};
    const std::vector<std::int64_t> too_many(numgap::max_rank + 1, 1);
    const auto rank =
        numgap_test::caught_error([&] { (void)numgap::tensor_view(data, numgap::dtype::float32, too_many); });
    REQUIRE(rank.has_value());
    CHECK(std::string(rank->what()).find("exceeds numgap's maximum rank") != std::string::npos);
    CHECK(rank->kind() == numgap::error_kind::limit);

    const std::vector<std::int64_t> negative = {2, -1};
    const auto dimension =
        numgap_test::caught_error([&] { (void)numgap::tensor_view(data, numgap::dtype::float32, negative); });
    REQUIRE(dimension.has_value());
    CHECK(std::string(dimension->what()) == "tensor has a negative dimension -1");
    CHECK(dimension->kind() == numgap::error_kind::shape);
}

TEST_CASE("tensor_view: more elements than int64 counts is a limit; zero dimensions make the size 0") {
    const float data[1] = {};
    const std::int64_t huge = std::int64_t(1) << 32;
    const std::vector<std::int64_t> overflowing = {huge, huge / 4, 2}; // 2^63 elements
    const auto overflow =
        numgap_test::caught_error([&] { (void)numgap::tensor_view(data, numgap::dtype::float32, overflowing); });
    REQUIRE(overflow.has_value());
    CHECK(std::string(overflow->what()) ==
          "tensor of shape (4294967296, 1073741824, 2): its non-zero dimensions multiply beyond 2^63 - 1");
    CHECK(overflow->kind() == numgap::error_kind::limit);
    // Just below the bound: counted, not refused.
    const std::vector<std::int64_t> largest = {huge, huge / 4 - 1, 2};
    CHECK(numgap::tensor_view(data, numgap::dtype::float32, largest).size() == huge * (huge / 4 - 1) * 2);
    // A zero dimension empties the tensor, but its other dimensions still
    // give strides, so their product is bounded too.
    CHECK(numgap::tensor_view(data, numgap::dtype::float32, {0, 3, 5}).size() == 0);
    CHECK(numgap::tensor_view(data, numgap::dtype::float32, {7, 0}).size() == 0);
    const std::vector<std::int64_t> empty_but_overflowing = {huge, 0, huge, 2};
    const auto empty = numgap_test::caught_error(
        [&] { (void)numgap::tensor_view(data, numgap::dtype::float32, empty_but_overflowing); });
    REQUIRE(empty.has_value());
    CHECK(std::string(empty->what()).find("non-zero dimensions multiply beyond") != std::string::npos);
    CHECK(empty->kind() == numgap::error_kind::limit);
    // size() is the product of the shape for every rank.
    const std::vector<std::int64_t> shape = {2, 3, 4, 5, 6};
    std::int64_t product = 1;
    for (std::size_t rank = 0; rank <= shape.size(); ++rank) {
        CHECK(numgap::tensor_view(data, numgap::dtype::float32, std::span<const std::int64_t>(shape.data(), rank))
                  .size() == product);
        if (rank < shape.size()) product *= shape[rank];
    }
}

TEST_CASE("tensor_view: an axis order of the wrong length is a shape error naming the tensor") {
    const float data[6] = {};
    const std::vector<std::int64_t> shape = {2, 3};
    numgap::tensor_view view(data, numgap::dtype::float32, shape);
    view.with_name("conv1");
    const std::vector<int> order = {0, 1, 2};
    const auto failure = numgap_test::caught_error([&] { view.with_axis_order(order); });
    REQUIRE(failure.has_value());
    CHECK(std::string(failure->what()) == "tensor 'conv1': axis_order has 3 entries but the tensor has rank 2");
    CHECK(failure->kind() == numgap::error_kind::shape);
    CHECK(failure->where().item == "conv1");
}
} // TEST_SUITE("core")
