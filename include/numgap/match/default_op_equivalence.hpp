#pragma once
// numgap::default_op_equivalence: the op-compatibility predicate structural
// matching uses unless match_options::ops_equivalent replaces it.
// equivalent(reference_op, target_op) is true when
//   - either op is unknown (empty): structure and shapes must decide, or
//   - both belong to the same family (numgap::canonical_op: "aten::conv2d" ~
//     "QLinearConv" ~ "CONV_2D"), or
//   - the target op is a fused op one of whose parts is the reference op's
//     family ("conv" ~ "conv+bn+relu", "linear" ~ "quantized::linear_relu").
// Cost: O(length of the op strings) with small allocations; never throws
// except std::bad_alloc.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/match/canonical_op.hpp>

namespace numgap {

struct default_op_equivalence {
    bool operator()(std::string_view reference_op, std::string_view target_op) const {
        if (reference_op.empty() || target_op.empty()) return true;
        const std::string family = canonical_op(reference_op);
        const std::vector<std::string> target_families = op_families(target_op);
        return std::find(target_families.begin(), target_families.end(), family) !=
               target_families.end();
    }
};

} // namespace numgap
