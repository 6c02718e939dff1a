// Pins down which ops count as insertable/deletable no-ops by default.
#include <doctest/doctest.h>

#include <numgap/match/default_passthrough_op.hpp>

TEST_SUITE("match") {
TEST_CASE("default_passthrough_op: table") {
    const numgap::default_passthrough_op passthrough;
    for (const char* op :
         {// quantization
          "QuantizeLinear", "DequantizeLinear", "QUANTIZE", "DEQUANTIZE", "aten::quantize_per_tensor",
          "aten::dequantize_per_tensor", "quantized_decomposed::dequantize_per_channel", "aten::quantize_per_channel",
          // dtype
          "Cast", "CAST", "aten::to", "aten::_to_copy", "aten._to_copy.default", "aten::type_as",
          // layout
          "Transpose", "TRANSPOSE", "aten::permute", "aten::permute_copy", "aten::transpose.int",
          "aten::transpose_copy.int", "aten::t", "aten::t_copy", "aten.numpy_T.default",
          // views and shapes
          "Reshape", "RESHAPE", "Flatten", "Squeeze", "SQUEEZE", "Unsqueeze", "Expand", "EXPAND_DIMS", "aten::view",
          "aten::view_as", "aten::view_copy", "aten::_reshape_alias", "aten::_unsafe_view", "aten::reshape",
          "aten::flatten.using_ints", "aten::unflatten.int", "aten::squeeze.dim", "aten::squeeze_copy.dim",
          "aten::unsqueeze", "aten::unsqueeze_copy", "aten::expand", "aten::expand_as", "aten::expand_copy",
          "aten.view.default", "aten._unsafe_view.default",
          // copies and no-ops
          "Identity", "aten::clone", "aten::contiguous", "aten::copy", "aten::detach", "aten::detach_copy",
          "aten::alias", "aten::alias_copy", "aten::lift_fresh", "aten::lift_fresh_copy", "aten::dropout"}) {
        INFO(op);
        CHECK(passthrough(op));
    }
    for (const char* op : {"Conv", "Relu", "Add", "", "Softmax", "aten::addmm", "aten::cat", "aten::index_select",
                           "aten::as_strided", "aten::slice.Tensor"}) {
        INFO(op);
        CHECK_FALSE(passthrough(op));
    }
}
} // TEST_SUITE("match")
