#pragma once
// numgap::match_options: the pluggable pieces of the matching strategies.
// Every field has a working default (an empty std::function means "use the
// default"), so match_auto(reference, target) works as is.
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace numgap {

struct match_options {
    // Which reference node's output a debug-handle group compares.
    enum class handle_output {
        // The group's topologically last reference node: the output of a
        // fused chain is the output of its last op.
        topologically_last,
        // ExecuTorch Inspector (map_runtime_aot_intermediate_outputs): the
        // reference node carrying the handle the target output node lists
        // last; among several reference nodes with that handle, the
        // topologically last one.
        executorch_compatible,
    };

    // What match_by_name does with two candidate nodes of one graph whose
    // (normalised) names are equal.
    enum class duplicate_names {
        error, // throw numgap::error naming both nodes
        skip,  // leave every node with that name to later strategies
    };

    // Name -> key used by name matching (both graphs). Empty: identity.
    std::function<std::string(std::string_view)> normalize_name;
    // Reference node name -> target node name pairs that override every
    // other strategy. Several pairs sharing a node form one group.
    std::vector<std::pair<std::string, std::string>> explicit_mapping;
    // (reference op, target op) -> compatible? Empty: default_op_equivalence.
    std::function<bool(std::string_view, std::string_view)> ops_equivalent;
    // op -> may a backend insert/delete it freely? Empty: default_passthrough_op.
    std::function<bool(std::string_view)> is_passthrough;
    // (reference op, host target op) -> may the op be fused into the host?
    // Empty: default_fusion_rule.
    std::function<bool(std::string_view, std::string_view)> can_fuse;

    handle_output handle_reference_output = handle_output::topologically_last;
    duplicate_names on_duplicate_names = duplicate_names::error;

    // Structural pairs scoring below this are not reported.
    double min_structure_confidence = 0.5;
    // How many passthrough target nodes structural matching walks through
    // between two matched nodes.
    int max_passthrough_depth = 4;
};

} // namespace numgap
