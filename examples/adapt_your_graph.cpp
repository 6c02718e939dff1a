// Adapting your own graph type to numgap without copying it: a handful of
// free functions found by argument-dependent lookup, then any matcher works
// on it directly. Here the user's "model" is a vector of layers holding the
// indices of their inputs, as many runtimes store it.
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/graph.hpp>
#include <numgap/match.hpp>

namespace my_runtime {

struct layer {
    std::string name;
    std::string kind;
    std::vector<std::size_t> inputs;
    std::vector<std::int64_t> provenance; // compiler debug handles
};

struct model {
    std::vector<layer> layers;
};

// The four required and optional pieces numgap asks for. They return views
// of the model's own data: nothing is copied.
inline std::size_t num_nodes(const model& m) { return m.layers.size(); }
inline std::span<const std::size_t> producers(const model& m, std::size_t i) { return m.layers[i].inputs; }
inline std::string_view node_name(const model& m, std::size_t i) { return m.layers[i].name; }
inline std::string_view op_type(const model& m, std::size_t i) { return m.layers[i].kind; }
inline std::span<const std::int64_t> debug_handles(const model& m, std::size_t i) { return m.layers[i].provenance; }

} // namespace my_runtime

static_assert(numgap::graph<my_runtime::model>);
static_assert(numgap::graph_with_op_types<my_runtime::model>);
static_assert(numgap::graph_with_debug_handles<my_runtime::model>);

int main() {
    // The reference (float model) and the target (a compiled NPU model that
    // fused conv+bn+relu and renamed everything).
    const my_runtime::model reference{{
        {"input", "input", {}, {0}},
        {"conv1", "aten::conv2d", {0}, {1}},
        {"bn1", "aten::batch_norm", {1}, {2}},
        {"relu1", "aten::relu", {2}, {3}},
        {"pool", "aten::max_pool2d", {3}, {4}},
        {"fc", "aten::linear", {4}, {}},
    }};
    const my_runtime::model target{{
        {"in0", "input", {}, {0}},
        {"npu_op_1", "CONV_2D", {0}, {1, 2, 3}},
        {"npu_op_2", "QuantizeLinear", {1}, {}},
        {"npu_op_3", "MAX_POOL_2D", {2}, {4}},
        {"npu_op_4", "FULLY_CONNECTED", {3}, {}},
    }};

    const numgap::match_result result = numgap::match_auto(reference, target);
    for (const numgap::match_group& group : result.groups) {
        std::printf("%-10s %-12s conf %.2f  ref:", std::string(numgap::to_string(group.kind)).c_str(),
                    group.strategy.c_str(), group.confidence);
        for (auto node : group.reference_nodes) std::printf(" %s", reference.layers[node].name.c_str());
        std::printf("  ->  target:");
        for (auto node : group.target_nodes) std::printf(" %s", target.layers[node].name.c_str());
        std::printf("   (compare %s vs %s)\n", group.reference_tensor.c_str(), group.target_tensor.c_str());
    }
    for (auto node : result.unmatched_target)
        std::printf("unmatched target node: %s\n", target.layers[node].name.c_str());
    return result.groups.size() == 4 ? 0 : 1;
}
