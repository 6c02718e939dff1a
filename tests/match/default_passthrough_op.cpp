// Pins down which ops count as insertable/deletable no-ops by default.
#include <doctest/doctest.h>

#include <numgap/match/default_passthrough_op.hpp>

TEST_CASE("default_passthrough_op_table") {
    const numgap::default_passthrough_op passthrough;
    for (const char* op : {"QuantizeLinear", "DequantizeLinear", "aten::quantize_per_tensor", "Cast", "aten::to",
                           "Transpose", "aten::permute", "Reshape", "aten::view", "aten::flatten", "Squeeze",
                           "Identity", "aten::dropout", "aten::contiguous"}) {
        INFO(op);
        CHECK(passthrough(op));
    }
    for (const char* op : {"Conv", "Relu", "Add", "", "Softmax"}) {
        INFO(op);
        CHECK_FALSE(passthrough(op));
    }
}
