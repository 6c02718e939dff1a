// Pins down op canonicalisation: the alias table is sorted and unique (binary
// search relies on it), framework spellings collapse to one family, fused
// names split into their parts in order.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <numgap/match/canonical_op.hpp>

TEST_CASE("canonical_op_alias_table_is_sorted_and_unique") {
    const auto& table = numgap::detail::op_alias_table;
    for (std::size_t i = 1; i < table.size(); ++i) {
        INFO("entry " << i << ": " << table[i].alias);
        CHECK(table[i - 1].alias < table[i].alias);
    }
    for (const auto& entry : table) CHECK_FALSE(entry.alias.empty());
}

TEST_CASE("canonical_op_framework_spellings") {
    for (const char* conv : {"aten::conv2d", "aten.convolution.default", "Conv", "CONV_2D", "QLinearConv",
                             "quantized::conv2d", "DEPTHWISE_CONV_2D", "torch.ops.aten.conv2d.default"}) {
        INFO(conv);
        CHECK(numgap::canonical_op(conv) == "conv");
    }
    for (const char* matmul : {"aten::linear", "Gemm", "FULLY_CONNECTED", "MatMul", "aten.addmm.default", "QLinearMatMul"}) {
        INFO(matmul);
        CHECK(numgap::canonical_op(matmul) == "matmul");
    }
    CHECK(numgap::canonical_op("aten::add.Tensor") == "add");
    CHECK(numgap::canonical_op("aten::batch_norm") == "batchnorm");
    CHECK(numgap::canonical_op("FusedBatchNormV3") == "batchnorm");
    CHECK(numgap::canonical_op("LayerNormalization") == "layernorm");
    CHECK(numgap::canonical_op("") == "");
    // Unknown ops are their own family (cleaned spelling), not an error.
    CHECK(numgap::canonical_op("My_Custom-Op") == "mycustomop");
}

TEST_CASE("canonical_op_families_of_fused_names") {
    CHECK(numgap::op_families("Conv+BatchNormalization+Relu") ==
          std::vector<std::string>{"conv+batchnormalization+relu", "conv", "batchnorm", "relu"});
    CHECK(numgap::op_families("conv_bn_relu") == std::vector<std::string>{"convbnrelu", "conv", "batchnorm", "relu"});
    // Two tokens that spell one op are one part, not a fused name.
    CHECK(numgap::op_families("aten::batch_norm") == std::vector<std::string>{"batchnorm"});
    CHECK(numgap::op_families("quantized::linear_relu") == std::vector<std::string>{"linearrelu", "matmul", "relu"});
    CHECK(numgap::op_families("Add+Add") == std::vector<std::string>{"add+add", "add", "add"});
    CHECK(numgap::op_families("").empty());
}
