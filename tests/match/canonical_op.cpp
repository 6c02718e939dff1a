// Pins down op canonicalisation: the alias table is sorted and unique (binary
// search relies on it), framework spellings collapse to one family, fused
// names split into their parts in order.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include <numgap/match/canonical_op.hpp>

TEST_SUITE("match") {
TEST_CASE("canonical_op: alias table is sorted and unique") {
    const auto& table = numgap::detail::op_alias_table;
    for (std::size_t i = 1; i < table.size(); ++i) {
        INFO("entry " << i << ": " << table[i].alias);
        CHECK(table[i - 1].alias < table[i].alias);
    }
    for (const auto& entry : table) CHECK_FALSE(entry.alias.empty());
}

TEST_CASE("canonical_op: framework spellings") {
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

TEST_CASE("canonical_op: families of fused names") {
    CHECK(numgap::op_families("Conv+BatchNormalization+Relu") ==
          std::vector<std::string>{"conv+batchnormalization+relu", "conv", "batchnorm", "relu"});
    CHECK(numgap::op_families("conv_bn_relu") == std::vector<std::string>{"convbnrelu", "conv", "batchnorm", "relu"});
    // Two tokens that spell one op are one part, not a fused name.
    CHECK(numgap::op_families("aten::batch_norm") == std::vector<std::string>{"batchnorm"});
    CHECK(numgap::op_families("quantized::linear_relu") == std::vector<std::string>{"linearrelu", "matmul", "relu"});
    CHECK(numgap::op_families("Add+Add") == std::vector<std::string>{"add+add", "add", "add"});
    CHECK(numgap::op_families("").empty());
}

TEST_CASE("canonical_op: torch fx module ops take the families of their aten spellings") {
    // examples/torch_capture.py --level module writes module calls as
    // "module:<class>"; the aten level of the same model spells the ops differently.
    const std::vector<std::pair<const char*, const char*>> pairs{
        {"module:Conv2d", "aten.convolution.default"},
        {"module:Conv1d", "aten.conv1d.default"},
        {"module:BatchNorm2d", "aten._native_batch_norm_legit_no_training.default"},
        {"module:BatchNorm1d", "aten._native_batch_norm_legit.default"},
        {"module:BatchNorm2d", "aten.native_batch_norm.default"},
        {"module:ReLU", "aten.relu.default"},
        {"module:ReLU6", "aten.hardtanh.default"},
        {"module:Linear", "aten.linear.default"},
        {"module:Linear", "aten.addmm.default"},
        {"module:MaxPool2d", "aten.max_pool2d.default"},
        {"module:AdaptiveAvgPool2d", "aten.adaptive_avg_pool2d.default"},
        {"module:AvgPool2d", "aten.avg_pool2d.default"},
        {"module:Hardswish", "aten.hardswish.default"},
        {"module:Hardsigmoid", "aten.hardsigmoid.default"},
        {"module:LayerNorm", "aten.layer_norm.default"},
        {"module:GELU", "aten.gelu.default"},
        {"module:SiLU", "aten.silu.default"},
        {"module:Sigmoid", "aten.sigmoid.default"},
        {"module:Softmax", "aten._softmax.default"},
        {"module:Embedding", "aten.embedding.default"},
        {"module:Flatten", "aten.flatten.using_ints"},
        {"module:Dropout", "aten.dropout.default"},
        {"module:Identity", "aten.clone.default"},
    };
    // Not a structured binding: INFO captures the names in a lambda, which clang 14 refuses for bindings.
    for (const auto& names : pairs) {
        const auto& module_op = names.first;
        const auto& aten_op = names.second;
        INFO(module_op << " vs " << aten_op);
        CHECK(numgap::canonical_op(module_op) == numgap::canonical_op(aten_op));
        CHECK(numgap::detail::is_known_family(numgap::canonical_op(module_op)));
        // One op, not a fused name: no parts.
        CHECK(numgap::op_families(module_op).size() == 1);
        CHECK(numgap::op_families(aten_op).size() == 1);
    }
    CHECK(numgap::canonical_op("module:Conv2d") == "conv");
    CHECK(numgap::canonical_op("module:BatchNorm2d") == "batchnorm");
    CHECK(numgap::canonical_op("aten._native_batch_norm_legit_no_training.default") == "batchnorm");
    CHECK(numgap::canonical_op("aten._native_batch_norm_legit.default") == "batchnorm");
    CHECK(numgap::canonical_op("module:MaxPool2d") == "maxpool");
    CHECK(numgap::canonical_op("module:AdaptiveAvgPool2d") == "avgpool");
    CHECK(numgap::canonical_op("module:Linear") == "matmul");
    // Dropout, Identity and Flatten are what a backend deletes or inserts.
    CHECK(numgap::canonical_op("module:Dropout") == "identity");
    CHECK(numgap::canonical_op("module:Dropout2d") == "identity");
    CHECK(numgap::canonical_op("module:Identity") == "identity");
    CHECK(numgap::canonical_op("module:Flatten") == "reshape");
    // A name that merely contains "module" keeps its meaning.
    CHECK(numgap::canonical_op("my_module_op") == "mymoduleop");
}

TEST_CASE("canonical_op: a known op of several words is no fused name") {
    // Before: "adaptive_avg_pool2d" split into {"adaptive", "avgpool"} and
    // counted as a fusion whose first part is no op.
    CHECK(numgap::op_families("aten.adaptive_avg_pool2d.default") == std::vector<std::string>{"avgpool"});
    CHECK(numgap::op_families("aten.native_batch_norm.default") == std::vector<std::string>{"batchnorm"});
    CHECK(numgap::op_families("aten._native_batch_norm_legit_no_training.default") ==
          std::vector<std::string>{"batchnorm"});
    // A fusion of known ops whose joined spelling is also an alias stays one.
    CHECK(numgap::op_families("conv_relu") == std::vector<std::string>{"conv", "conv", "relu"});
}
} // TEST_SUITE("match")
