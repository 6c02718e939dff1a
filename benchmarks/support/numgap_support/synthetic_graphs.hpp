#pragma once
// Test and benchmark support (not a public header): generates reference graphs (a ResNet-
// like CNN whose skip and main paths carry the same shape, a transformer
// whose q/k/v projections share producer, op and shape, SqueezeNet Fire
// modules whose expand1x1/expand3x3 branches differ only by the concat input
// they feed, Inception blocks of four parallel branches of partly equal
// shapes) and derives a "backend" target graph from one with a known ground
// truth: renamed nodes and op spellings, no-op nodes inserted on edges
// (quantize/dequantize pairs, casts, transposes, reshapes), some no-op
// reference nodes deleted (dropout, identity), linear chains fused
// (conv+bn+relu, linear+gelu, add+relu), optionally layer norms decomposed
// into several nodes sharing the reference handle, optionally NHWC shapes,
// optionally renumbered in another random valid topological order (so that
// nothing can be learnt from the target's node order).
// Used by the property tests (tests/match/) and by benchmarks/match.cpp and
// benchmarks/match_calibration.cpp. It lives in benchmarks/support/, so that
// benchmarks do not include files from tests/; CMake gives tests and
// benchmarks (never users) the include path through numgap_support.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/graph/basic_graph.hpp>

namespace numgap_test {

inline constexpr std::size_t no_counterpart = static_cast<std::size_t>(-1);

enum class model_family { cnn, transformer, fire, inception };

struct derive_options {
    double insert_rate = 0.15;    // per edge
    double delete_rate = 0.8;     // per deletable (dropout/identity) node
    double fuse_rate = 0.6;       // per fusable chain
    double decompose_rate = 0.0;  // per layer_norm (handle tests only)
    double drop_any_rate = 0.0;   // per single-input op outside fused chains (folded away)
    double replace_rate = 0.0;    // per op outside fused chains: becomes an unrelated custom op
    bool rename = true;           // fresh names; otherwise "<name>_output_0"
    bool nhwc = false;            // 4-D target shapes stored as NHWC
    bool handles = true;          // reference node i carries handle i
    bool shuffle = false;         // target nodes renumbered in a random topological order
};

struct synthetic_pair {
    numgap::basic_graph reference;
    numgap::basic_graph target;
    // counterpart[r]: target nodes computing reference node r (empty: deleted).
    std::vector<std::vector<std::size_t>> counterpart;
};

namespace detail {

struct builder {
    numgap::basic_graph graph;
    std::mt19937_64& rng;
    std::size_t add(const std::string& op, std::vector<std::size_t> inputs, numgap::shape_type shape) {
        const std::size_t index = graph.num_nodes();
        const std::size_t node = graph.add_node("ref_" + std::to_string(index), op, std::move(inputs), {static_cast<std::int64_t>(index)});
        graph.set_output_shape(node, 0, std::move(shape));
        return node;
    }
    bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    // Reference graphs carry a few no-ops a backend may drop.
    std::size_t maybe_noop(std::size_t x) {
        if (!chance(0.15)) return x;
        return add(chance(0.5) ? "aten::dropout" : "aten::identity", {x}, *graph.output_shape(x, 0));
    }
};

inline void cnn(builder& b, std::size_t approx_nodes) {
    std::int64_t channels = 16, size = 64;
    std::size_t x = b.add("input", {}, {1, 3, size, size});
    auto conv_bn_relu = [&](std::size_t in, std::int64_t out_channels, bool relu) {
        numgap::shape_type shape{1, out_channels, size, size};
        std::size_t c = b.add("aten::conv2d", {in}, shape);
        std::size_t n = b.add("aten::batch_norm", {c}, shape);
        return relu ? b.maybe_noop(b.add("aten::relu", {n}, shape)) : n;
    };
    x = conv_bn_relu(x, channels, true);
    while (b.graph.num_nodes() + 12 < approx_nodes) {
        if (b.chance(0.15) && size > 4) {
            size /= 2;
            channels = std::min<std::int64_t>(channels * 2, 512);
            x = b.add("aten::max_pool2d", {x}, {1, (*b.graph.output_shape(x, 0))[1], size, size});
            x = conv_bn_relu(x, channels, true);
        }
        const std::size_t a = conv_bn_relu(x, channels, true);
        const std::size_t c = conv_bn_relu(a, channels, false);
        const std::size_t sum = b.add("aten::add.Tensor", {c, x}, {1, channels, size, size});
        x = b.maybe_noop(b.add("aten::relu", {sum}, {1, channels, size, size}));
    }
    const std::size_t flat = b.add("aten::reshape", {x}, {1, channels * size * size});
    b.add("aten::linear", {flat}, {1, 1000});
}

inline void transformer(builder& b, std::size_t approx_nodes) {
    const std::int64_t sequence = 128, width = 256;
    const numgap::shape_type hidden{1, sequence, width};
    std::size_t x = b.add("input", {}, hidden);
    x = b.add("aten::embedding", {x}, hidden);
    while (b.graph.num_nodes() + 22 < approx_nodes) {
        const std::size_t n1 = b.add("aten::layer_norm", {x}, hidden);
        const std::size_t q = b.add("aten::linear", {n1}, hidden);
        const std::size_t k = b.add("aten::linear", {n1}, hidden);
        const std::size_t v = b.add("aten::linear", {n1}, hidden);
        const std::size_t kt = b.add("aten::transpose.int", {k}, {1, width, sequence});
        const std::size_t s = b.add("aten::matmul", {q, kt}, {1, sequence, sequence});
        const std::size_t scaled = b.add("aten::mul.Tensor", {s}, {1, sequence, sequence});
        const std::size_t p = b.add("aten::softmax.int", {scaled}, {1, sequence, sequence});
        const std::size_t o = b.add("aten::matmul", {p, v}, hidden);
        const std::size_t proj = b.maybe_noop(b.add("aten::linear", {o}, hidden));
        const std::size_t r1 = b.add("aten::add.Tensor", {x, proj}, hidden);
        const std::size_t n2 = b.add("aten::layer_norm", {r1}, hidden);
        const std::size_t f1 = b.add("aten::linear", {n2}, {1, sequence, 4 * width});
        const std::size_t g = b.add("aten::gelu", {f1}, {1, sequence, 4 * width});
        const std::size_t f2 = b.maybe_noop(b.add("aten::linear", {g}, hidden));
        x = b.add("aten::add.Tensor", {r1, f2}, hidden);
    }
    const std::size_t n = b.add("aten::layer_norm", {x}, hidden);
    b.add("aten::linear", {n}, {1, sequence, 1000});
}

// SqueezeNet: squeeze 1x1 -> relu -> (expand 1x1 -> relu, expand 3x3 -> relu)
// -> concat. Both expand branches have the same op, producer and shape: only
// the concat's input position tells them apart.
inline void fire(builder& b, std::size_t approx_nodes) {
    std::int64_t channels = 64, size = 32;
    std::size_t x = b.add("input", {}, {1, 3, size, size});
    x = b.add("aten::relu", {b.add("aten::conv2d", {x}, {1, channels, size, size})}, {1, channels, size, size});
    while (b.graph.num_nodes() + 10 < approx_nodes) {
        if (b.chance(0.2) && size > 4) {
            size /= 2;
            x = b.add("aten::max_pool2d", {x}, {1, channels, size, size});
        }
        const std::int64_t squeeze_channels = channels / 4;
        const numgap::shape_type squeezed{1, squeeze_channels, size, size}, expanded{1, channels / 2, size, size};
        const std::size_t s = b.add("aten::relu", {b.add("aten::conv2d", {x}, squeezed)}, squeezed);
        const std::size_t e1 = b.add("aten::relu", {b.add("aten::conv2d", {s}, expanded)}, expanded);
        const std::size_t e3 = b.add("aten::relu", {b.add("aten::conv2d", {s}, expanded)}, expanded);
        x = b.maybe_noop(b.add("aten::cat", {e1, e3}, {1, channels, size, size}));
    }
    x = b.add("aten::dropout", {x}, {1, channels, size, size});
    b.add("aten::conv2d", {x}, {1, 1000, size, size});
}

// GoogLeNet: four parallel branches (1x1; 1x1 -> 3x3; 1x1 -> 5x5; pool ->
// 1x1) into one concat; the 1x1, 3x3-reduce and 5x5-reduce convolutions
// share producer and op, two branches share their output shape.
inline void inception(builder& b, std::size_t approx_nodes) {
    std::int64_t size = 28;
    const std::int64_t branch = 32;
    std::size_t x = b.add("input", {}, {1, 3, size, size});
    x = b.add("aten::relu", {b.add("aten::conv2d", {x}, {1, 4 * branch, size, size})}, {1, 4 * branch, size, size});
    auto conv_relu = [&](std::size_t in, std::int64_t channels) {
        const numgap::shape_type shape{1, channels, size, size};
        return b.add("aten::relu", {b.add("aten::conv2d", {in}, shape)}, shape);
    };
    while (b.graph.num_nodes() + 16 < approx_nodes) {
        const std::size_t b1 = conv_relu(x, branch);
        const std::size_t b2 = conv_relu(conv_relu(x, branch / 2), branch);
        const std::size_t b3 = conv_relu(conv_relu(x, branch / 2), branch / 2);
        const std::size_t b4 = conv_relu(b.add("aten::max_pool2d", {x}, {1, 4 * branch, size, size}), branch);
        x = b.add("aten::cat", {b1, b2, b3, b4}, {1, 3 * branch + branch / 2, size, size});
        x = conv_relu(x, 4 * branch);
    }
    b.add("aten::linear", {b.add("aten::reshape", {x}, {1, 4 * branch * size * size})}, {1, 1000});
}

inline std::string backend_op(std::string_view op, std::mt19937_64& rng) {
    auto pick = [&](std::initializer_list<const char*> options) {
        std::vector<const char*> list(options);
        return std::string(list[std::uniform_int_distribution<std::size_t>(0, list.size() - 1)(rng)]);
    };
    if (op == "aten::conv2d") return pick({"Conv", "QLinearConv", "CONV_2D"});
    if (op == "aten::batch_norm") return pick({"BatchNormalization", "FusedBatchNormV3"});
    if (op == "aten::relu") return pick({"Relu", "RELU"});
    if (op == "aten::add.Tensor") return pick({"Add", "ADD", "QLinearAdd"});
    if (op == "aten::max_pool2d") return pick({"MaxPool", "MAX_POOL_2D"});
    if (op == "aten::linear") return pick({"Gemm", "FULLY_CONNECTED", "MatMul"});
    if (op == "aten::layer_norm") return pick({"LayerNormalization"});
    if (op == "aten::transpose.int") return pick({"Transpose", "TRANSPOSE"});
    if (op == "aten::matmul") return pick({"MatMul", "BATCH_MATMUL"});
    if (op == "aten::mul.Tensor") return pick({"Mul", "MUL"});
    if (op == "aten::softmax.int") return pick({"Softmax", "SOFTMAX"});
    if (op == "aten::gelu") return pick({"Gelu", "GELU"});
    if (op == "aten::reshape") return pick({"Reshape", "RESHAPE"});
    if (op == "aten::embedding") return pick({"Embedding", "EMBEDDING_LOOKUP"});
    if (op == "aten::cat") return pick({"Concat", "CONCATENATION"});
    return std::string(op); // "input", no-ops
}

inline bool is_deletable(std::string_view op) { return op == "aten::dropout" || op == "aten::identity"; }

} // namespace detail

inline numgap::basic_graph make_reference(model_family family, std::size_t approx_nodes, std::mt19937_64& rng) {
    detail::builder b{{}, rng};
    b.graph.reserve(approx_nodes + 32);
    switch (family) {
    case model_family::cnn: detail::cnn(b, approx_nodes); break;
    case model_family::transformer: detail::transformer(b, approx_nodes); break;
    case model_family::fire: detail::fire(b, approx_nodes); break;
    case model_family::inception: detail::inception(b, approx_nodes); break;
    }
    return std::move(b.graph);
}

// Renumbers the target in a random valid topological order (Kahn's
// algorithm picking a random ready node), keeping the ground truth.
inline void shuffle_topologically(synthetic_pair& pair, std::mt19937_64& rng) {
    const numgap::basic_graph& old_target = pair.target;
    const std::size_t n = old_target.num_nodes();
    std::vector<std::size_t> missing_inputs(n, 0);
    std::vector<std::vector<std::size_t>> consumers(n);
    for (std::size_t node = 0; node < n; ++node) {
        missing_inputs[node] = old_target.node(node).producers.size();
        for (auto producer : old_target.node(node).producers) consumers[producer].push_back(node);
    }
    std::vector<std::size_t> ready, new_index(n, no_counterpart);
    for (std::size_t node = 0; node < n; ++node)
        if (missing_inputs[node] == 0) ready.push_back(node);
    numgap::basic_graph shuffled;
    shuffled.reserve(n);
    while (!ready.empty()) {
        const std::size_t pick = std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(rng);
        const std::size_t node = ready[pick];
        ready[pick] = ready.back();
        ready.pop_back();
        const auto& old_node = old_target.node(node);
        std::vector<std::size_t> inputs;
        for (auto producer : old_node.producers) inputs.push_back(new_index[producer]);
        new_index[node] = shuffled.add_node(std::string(old_node.name), old_target.op_type(node), inputs,
                                            {old_node.debug_handles.begin(), old_node.debug_handles.end()});
        if (const auto shape = old_target.output_shape(node, 0)) shuffled.set_output_shape(new_index[node], 0, *shape);
        for (auto consumer : consumers[node])
            if (--missing_inputs[consumer] == 0) ready.push_back(consumer);
    }
    for (auto& targets : pair.counterpart)
        for (auto& t : targets) t = new_index[t];
    pair.target = std::move(shuffled);
}

inline synthetic_pair derive_target(numgap::basic_graph reference, const derive_options& options, std::mt19937_64& rng) {
    synthetic_pair pair;
    const std::size_t n = reference.num_nodes();
    auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
    std::vector<std::vector<std::size_t>> consumers(n);
    for (std::size_t node = 0; node < n; ++node)
        for (auto producer : reference.node(node).producers) consumers[producer].push_back(node);
    auto sole_link = [&](std::size_t a, std::size_t b) {
        return consumers[a].size() == 1 && consumers[a][0] == b && reference.node(b).producers.size() == 1;
    };
    // Fusion chains: head -> members.
    std::vector<std::size_t> chain_head(n, no_counterpart);
    for (std::size_t node = 0; node < n; ++node) {
        const std::string_view op = reference.op_type(node);
        if (chain_head[node] != no_counterpart) continue;
        std::vector<std::size_t> chain{node};
        auto extend = [&](const char* next_op) {
            const std::size_t last = chain.back();
            if (consumers[last].size() == 1 && reference.op_type(consumers[last][0]) == next_op &&
                sole_link(last, consumers[last][0])) {
                chain.push_back(consumers[last][0]);
                return true;
            }
            return false;
        };
        if (op == "aten::conv2d") {
            if (extend("aten::batch_norm")) extend("aten::relu");
        } else if (op == "aten::linear") {
            extend("aten::gelu");
        } else if (op == "aten::add.Tensor") {
            extend("aten::relu");
        }
        if (chain.size() > 1 && chance(options.fuse_rate))
            for (auto member : chain) chain_head[member] = node;
    }
    std::vector<std::size_t> value(n, no_counterpart); // target node holding r's value
    pair.counterpart.resize(n);
    numgap::basic_graph& target = pair.target;
    target.reserve(n * 2);
    std::size_t fresh = 0;
    auto name_of = [&](std::size_t r) {
        return options.rename ? "t" + std::to_string(fresh++) + "_" + std::to_string(rng() % 1000)
                              : std::string(reference.node(r).name) + "_output_0";
    };
    auto shape_of = [&](const numgap::shape_type& shape) {
        if (!options.nhwc || shape.size() != 4) return shape;
        return numgap::shape_type{shape[0], shape[2], shape[3], shape[1]};
    };
    auto add_target = [&](std::string name, std::string op, std::vector<std::size_t> inputs,
                          std::vector<std::int64_t> handles, const numgap::shape_type& shape) {
        const std::size_t t = target.add_node(std::move(name), std::move(op), std::move(inputs),
                                              options.handles ? std::move(handles) : std::vector<std::int64_t>{});
        target.set_output_shape(t, 0, shape_of(shape));
        return t;
    };
    // Inserted no-ops copy their input's shape as stored (already permuted).
    auto add_inserted = [&](const char* op, std::size_t input, const numgap::shape_type& stored_shape) {
        const std::size_t t = target.add_node("inserted_" + std::to_string(fresh++), op, {input});
        target.set_output_shape(t, 0, stored_shape);
        return t;
    };
    auto input_edge = [&](std::size_t producer_value) {
        if (!chance(options.insert_rate)) return producer_value;
        const auto shape = *target.output_shape(producer_value, 0);
        switch (rng() % 4) {
        case 0: {
            const std::size_t q = add_inserted("QuantizeLinear", producer_value, shape);
            return add_inserted("DequantizeLinear", q, shape);
        }
        case 1: return add_inserted("Cast", producer_value, shape);
        case 2: return add_inserted("Transpose", producer_value, shape);
        default: return add_inserted("Reshape", producer_value, shape);
        }
    };
    for (std::size_t r = 0; r < n; ++r) {
        const auto& node = reference.node(r);
        const std::string_view node_op = reference.op_type(r);
        const auto shape = *reference.output_shape(r, 0);
        if (detail::is_deletable(node_op) && node.producers.size() == 1 && chance(options.delete_rate)) {
            value[r] = value[node.producers[0]];
            continue;
        }
        if (chain_head[r] == no_counterpart && node.producers.size() == 1 && node_op != "input" &&
            chance(options.drop_any_rate)) {
            value[r] = value[node.producers[0]];
            continue;
        }
        if (chain_head[r] != no_counterpart && chain_head[r] != r) continue; // emitted with its head
        std::vector<std::size_t> inputs;
        for (auto producer : node.producers) {
            NUMGAP_ASSERT(value[producer] != no_counterpart);
            inputs.push_back(input_edge(value[producer]));
        }
        if (chain_head[r] == r) {
            std::vector<std::size_t> chain{r};
            while (consumers[chain.back()].size() == 1 && chain_head[consumers[chain.back()][0]] == r)
                chain.push_back(consumers[chain.back()][0]);
            std::string op;
            std::vector<std::int64_t> handles;
            for (auto member : chain) {
                op += (op.empty() ? "" : "+") + detail::backend_op(reference.op_type(member), rng);
                handles.push_back(static_cast<std::int64_t>(member));
            }
            const std::size_t last = chain.back();
            const std::size_t t =
                add_target(options.rename ? name_of(last) : std::string(reference.node(last).name) + "_output_0", op,
                           inputs, handles, *reference.output_shape(last, 0));
            for (auto member : chain) {
                value[member] = t;
                pair.counterpart[member] = {t};
            }
            continue;
        }
        if (node_op == "aten::layer_norm" && chance(options.decompose_rate)) {
            std::vector<std::int64_t> handle{static_cast<std::int64_t>(r)};
            const std::size_t mean = add_target(name_of(r) + "_mean", "ReduceMean", inputs, handle, shape);
            const std::size_t centered = add_target(name_of(r) + "_sub", "Sub", {inputs[0], mean}, handle, shape);
            const std::size_t square = add_target(name_of(r) + "_pow", "Pow", {centered}, handle, shape);
            const std::size_t variance = add_target(name_of(r) + "_var", "ReduceMean", {square}, handle, shape);
            const std::size_t scale = add_target(name_of(r) + "_rsqrt", "Rsqrt", {variance}, handle, shape);
            const std::size_t out = add_target(name_of(r), "Mul", {centered, scale}, handle, shape);
            value[r] = out;
            pair.counterpart[r] = {mean, centered, square, variance, scale, out};
            continue;
        }
        if (chain_head[r] == no_counterpart && node_op != "input" && chance(options.replace_rate)) {
            // Computes "the same value" by an op nothing recognises: no counterpart.
            value[r] = add_target(name_of(r), "VendorCustomOp", inputs, {}, shape);
            continue;
        }
        const std::size_t t =
            add_target(name_of(r), detail::backend_op(node_op, rng), inputs, {static_cast<std::int64_t>(r)}, shape);
        value[r] = t;
        pair.counterpart[r] = {t};
    }
    pair.reference = std::move(reference);
    if (options.shuffle) shuffle_topologically(pair, rng);
    return pair;
}

} // namespace numgap_test
