#pragma once
// numgap::default_fusion_rule: can_fuse(reference_op, host_target_op) says
// whether a reference op may have been folded into the target node that
// computes its (single) producer: the epilogues backends fuse into a
// convolution, matmul or elementwise op (batch norm, bias add, scale,
// activations), or any op the host's fused name lists ("conv+bn+relu"
// absorbs "batch_norm" and "relu"). Structural matching uses it to form
// fused groups; replace it with match_options::can_fuse.
// O(length of the op strings); never throws except std::bad_alloc.
#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/match/canonical_op.hpp>

namespace numgap {

struct default_fusion_rule {
    bool operator()(std::string_view reference_op, std::string_view host_target_op) const {
        if (reference_op.empty() || host_target_op.empty()) return false;
        const std::string family = canonical_op(reference_op);
        const std::vector<std::string> host_families = op_families(host_target_op);
        if (host_families.size() > 1 &&
            std::find(host_families.begin() + 1, host_families.end(), family) != host_families.end())
            return true;
        static constexpr std::array<std::string_view, 11> epilogues{
            "batchnorm", "relu", "clip", "sigmoid", "tanh", "gelu", "silu",
            "hardswish", "leakyrelu", "add", "mul"};
        static constexpr std::array<std::string_view, 4> hosts{"conv", "matmul", "add", "mul"};
        const bool is_epilogue = std::find(epilogues.begin(), epilogues.end(), family) != epilogues.end();
        const bool is_host = std::find(hosts.begin(), hosts.end(), host_families.front()) != hosts.end();
        return is_epilogue && is_host;
    }
};

} // namespace numgap
