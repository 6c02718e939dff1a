#pragma once
// numgap::default_passthrough_op: which ops a backend may insert or delete
// without changing what the graph computes (up to layout, dtype or
// quantization): quantize/dequantize, casts, layout permutes and transposes,
// reshapes (view, flatten, squeeze, unsqueeze, expand_dims), identity, copy,
// contiguous, dropout. Structural matching walks through such target nodes
// to find a reference node's counterpart, and lets a reference node of this
// kind vanish from the target. Replace it with match_options::is_passthrough.
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
