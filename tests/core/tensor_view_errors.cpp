// tensor_view's construction errors: their messages and the kind a program
// acts on (limit for numgap's rank bound, shape for impossible shapes).
#include <doctest/doctest.h>

#include <cstdint>
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
