// Pins down the default op-compatibility predicate: same family, fused parts
// and unknown ops are compatible; different families are not.
#include <doctest/doctest.h>

#include <numgap/match/default_op_equivalence.hpp>

TEST_SUITE("match") {
TEST_CASE("default_op_equivalence: table") {
    const numgap::default_op_equivalence equivalent;
    CHECK(equivalent("aten::conv2d", "QLinearConv"));
    CHECK(equivalent("aten::linear", "FULLY_CONNECTED"));
    CHECK(equivalent("aten::relu", "Conv+BatchNormalization+Relu"));
    CHECK(equivalent("aten::conv2d", ""));
    CHECK(equivalent("", "Relu"));
    CHECK_FALSE(equivalent("aten::conv2d", "MatMul"));
    CHECK_FALSE(equivalent("aten::relu", "Sigmoid"));
    CHECK_FALSE(equivalent("aten::layer_norm", "ReduceMean"));
}
} // TEST_SUITE("match")
