#pragma once
// numgap::default_passthrough_op: which ops a backend may insert or delete
// without changing what the graph computes (up to layout, dtype, broadcast or
// quantization): the families quantize, dequantize, cast, transpose, reshape
// and identity of numgap::canonical_op, which cover
//   - quantization: QuantizeLinear, DequantizeLinear, QUANTIZE, DEQUANTIZE,
//     aten quantize_/dequantize_per_tensor/_per_channel, requantize;
//   - dtype: Cast, CAST, aten to, _to_copy, type_as;
//   - layout: Transpose, TRANSPOSE, aten permute, permute_copy, transpose,
//     transpose_copy, t, t_copy, numpy_T;
//   - views and shapes: Reshape, Flatten, Squeeze, Unsqueeze, Expand,
//     EXPAND_DIMS, aten view, view_as, view_copy, _reshape_alias,
//     _unsafe_view, reshape, flatten, unflatten, squeeze(_copy),
//     unsqueeze(_copy), expand, expand_as, expand_copy;
//   - copies and no-ops: Identity, aten clone, contiguous, copy, detach,
//     detach_copy, alias, alias_copy, lift_fresh, lift_fresh_copy, dropout.
// Structural matching walks through such target nodes to find a reference
// node's counterpart, and lets a reference node of this kind vanish from
// the target. Replace it with match_options::is_passthrough.
// O(length of op); never throws except std::bad_alloc.
#include <string>
#include <string_view>

#include <numgap/match/canonical_op.hpp>

namespace numgap {

struct default_passthrough_op {
    bool operator()(std::string_view op) const {
        const std::string family = canonical_op(op);
        return family == "quantize" || family == "dequantize" || family == "cast" ||
               family == "transpose" || family == "reshape" || family == "identity";
    }
};

} // namespace numgap
