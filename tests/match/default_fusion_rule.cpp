// Pins down the default fusion rule: epilogues fold into conv/matmul/
// elementwise hosts, anything folds into a host whose fused name lists it,
// nothing folds into an unrelated host.
#include <doctest/doctest.h>

#include <numgap/match/default_fusion_rule.hpp>

TEST_SUITE("match") {
TEST_CASE("default_fusion_rule: table") {
    const numgap::default_fusion_rule can_fuse;
    CHECK(can_fuse("aten::batch_norm", "CONV_2D"));
    CHECK(can_fuse("aten::relu", "Gemm"));
    CHECK(can_fuse("aten::gelu", "FULLY_CONNECTED"));
    CHECK(can_fuse("aten::softmax", "MatMul+Softmax"));
    CHECK_FALSE(can_fuse("aten::softmax", "MatMul"));
    CHECK_FALSE(can_fuse("aten::relu", "Softmax"));
    CHECK_FALSE(can_fuse("", "Conv"));
    CHECK_FALSE(can_fuse("aten::relu", ""));
}
} // TEST_SUITE("match")
