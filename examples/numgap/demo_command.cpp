// `numgap demo` (demo_command.hpp): the two runs and their graph.json, written
// through the library's .npy writer and its one JSON writer.
#include "demo_command.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/io/json/writer.hpp>
#include <numgap/io/npy/writer.hpp>
#include <numgap/report/terminal_text.hpp>

#include "compare_command.hpp"
#include "demo_model.hpp"

namespace numgap_cli {

namespace {
struct demo_node {
    std::string reference_name, target_name, op;
    std::vector<std::size_t> inputs; // indices of earlier demo nodes
    storage target_storage;
};

void write_bytes(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (!file)
        throw numgap::error(numgap::error_kind::io, "cannot write '" + path.string() + "'",
                            numgap::error_location::in_file(path.string()));
    const std::size_t written = std::fwrite(bytes.data(), 1, bytes.size(), file);
    const bool closed = std::fclose(file) == 0;
    if (written != bytes.size() || !closed)
        throw numgap::error(numgap::error_kind::io, "writing '" + path.string() + "' failed",
                            numgap::error_location::in_file(path.string()));
}

// The file key of a node: its name with '/' replaced, so each tensor is one
// file at the top of the run.
std::string key_of(std::string name) {
    std::replace(name.begin(), name.end(), '/', '_');
    return name;
}

// One stored target tensor: its file, and its "tensors" entry in graph.json
// (dtype, layout and quantization the reader needs to read the file back).
void write_target_tensor(numgap::io::json_writer& json, const std::filesystem::path& directory,
                         const std::string& key, const stored_tensor& s, const std::vector<std::int64_t>& shape) {
    const bool raw = s.kind == storage::int8_per_channel_nhwc_raw;
    const std::filesystem::path file = directory / "out" / (key + (raw ? ".raw" : ".npy"));
    std::filesystem::create_directories(file.parent_path());
    json.line_break().key(key).begin_object();
    json.key("file").string("out/" + file.filename().string());
    switch (s.kind) {
    case storage::float32:
        numgap::io::write_npy(file, numgap::tensor_view(s.bytes.data(), numgap::dtype::float32, shape));
        break;
    case storage::float16:
        numgap::io::write_npy(file, numgap::tensor_view(s.bytes.data(), numgap::dtype::float16, shape));
        break;
    case storage::uint8_per_tensor:
        numgap::io::write_npy(file, numgap::tensor_view(s.bytes.data(), numgap::dtype::uint8, shape));
        json.key("scale").number(s.scale);
        json.key("zero_point").integer(s.zero_point);
        break;
    case storage::int8_per_channel_nhwc_raw:
        write_bytes(file, s.bytes);
        json.key("dtype").string("int8");
        json.key("shape").begin_array().integer(shape[0]).integer(shape[2]).integer(shape[3]).integer(shape[1]).end_array();
        json.key("axis_order").begin_array().integer(0).integer(2).integer(3).integer(1).end_array();
        json.key("quant_axis").integer(3);
        json.key("scale").begin_array();
        for (float scale : s.channel_scales) json.number(scale);
        json.end_array();
        json.key("zero_point").integer(0);
        break;
    }
    json.end_object();
}

// A run directory: graph.json (nodes, and for the target the "tensors" that
// are not plain float .npy files) and one file per node output.
void write_demo_run(const std::filesystem::path& directory, const std::vector<demo_node>& nodes,
                    const std::vector<tensor>& values, const std::vector<stored_tensor>* stored) {
    std::filesystem::create_directories(directory);
    const bool target = stored != nullptr;
    const auto name_of = [&](const demo_node& node) -> const std::string& {
        return target ? node.target_name : node.reference_name;
    };
    std::string graph;
    numgap::io::json_writer json(graph);
    json.begin_object().key("version").integer(1).key("nodes").begin_array();
    for (std::size_t n = 0; n < nodes.size(); ++n) {
        const demo_node& node = nodes[n];
        json.line_break().begin_object();
        json.key("name").string(name_of(node));
        json.key("op").string(node.op);
        json.key("inputs").begin_array();
        for (std::size_t input : node.inputs) json.string(key_of(name_of(nodes[input])));
        json.end_array();
        json.key("outputs").begin_array().string(key_of(name_of(node))).end_array();
        json.key("debug_handles").begin_array().unsigned_integer(n + 1).end_array();
        json.end_object();
    }
    json.line_break().end_array();
    if (target) {
        json.line_break().key("tensors").begin_object();
        for (std::size_t n = 0; n < nodes.size(); ++n)
            write_target_tensor(json, directory, key_of(name_of(nodes[n])), (*stored)[n], values[n].shape);
        json.line_break().end_object();
    } else {
        for (std::size_t n = 0; n < nodes.size(); ++n)
            numgap::io::write_npy(directory / (key_of(name_of(nodes[n])) + ".npy"), values[n].values.data(),
                                  values[n].shape);
    }
    json.end_object();
    graph += '\n';
    write_bytes(directory / "graph.json", std::vector<std::uint8_t>(graph.begin(), graph.end()));
}

} // namespace

int run_demo(const std::filesystem::path& directory) {
    std::mt19937 generator(20240607);
    // x -> conv1 -> gn1 -> relu1 -> conv2 -> gn2 -> relu2 -> pool -> fc -> softmax
    const std::vector<demo_node> nodes = {
        {"x", "input_0", "input", {}, storage::float16},
        {"conv1", "/stem/conv1/Conv", "aten.convolution.default", {0}, storage::uint8_per_tensor},
        {"gn1", "/stem/gn1/GroupNorm", "aten.native_group_norm.default", {1}, storage::float16},
        {"relu1", "/stem/relu1/Relu", "aten.relu.default", {2}, storage::uint8_per_tensor},
        {"conv2", "/block/conv2/Conv", "aten.convolution.default", {3}, storage::int8_per_channel_nhwc_raw},
        {"gn2", "/block/gn2/GroupNorm", "aten.native_group_norm.default", {4}, storage::float16},
        {"relu2", "/block/relu2/Relu", "aten.relu.default", {5}, storage::uint8_per_tensor},
        {"pool", "/head/pool/GlobalAveragePool", "aten.mean.dim", {6}, storage::float16},
        {"fc", "/head/fc/Gemm", "aten.linear.default", {7}, storage::float16},
        {"softmax", "/head/softmax/Softmax", "aten._softmax.default", {8}, storage::uint8_per_tensor},
    };
    const std::int64_t size = 16, in_channels = 3, mid = 8, out = 16, classes = 10, groups = 4;
    tensor input{random_values(generator, std::size_t(in_channels * size * size), -1, 1), {1, in_channels, size, size}};
    const auto w1 = random_values(generator, std::size_t(mid * in_channels * 9), -0.4f, 0.4f);
    const auto b1 = random_values(generator, std::size_t(mid), -0.1f, 0.1f);
    const auto w2 = random_values(generator, std::size_t(out * mid * 9), -0.2f, 0.2f);
    // Strongly different biases per channel group give each group its own
    // mean, which is exactly what the broken normalisation gets wrong.
    std::vector<float> b2(static_cast<std::size_t>(out));
    for (std::size_t c = 0; c < b2.size(); ++c) b2[c] = -1.5f + float(c / 4) * 1.0f;
    const auto w3 = random_values(generator, std::size_t(classes * out), -0.5f, 0.5f);
    const auto b3 = random_values(generator, std::size_t(classes), -0.1f, 0.1f);

    auto forward = [&](const tensor& x, std::int64_t gn2_groups, const std::vector<storage>* stores,
                       std::vector<stored_tensor>* stored) {
        std::vector<tensor> values;
        auto keep = [&](tensor value) {
            if (stores) {
                stored->push_back(store(value, (*stores)[values.size()]));
                value = stored->back().dequantized; // the target consumes what it stored
            }
            values.push_back(value);
            return value;
        };
        tensor h = keep(x);
        h = keep(convolution3x3(h, w1, b1));
        h = keep(group_norm(h, groups, 1e-5f));
        h = keep(relu(h));
        h = keep(convolution3x3(h, w2, b2));
        h = keep(group_norm(h, gn2_groups, 1e-5f));
        h = keep(relu(h));
        h = keep(global_average_pool(h));
        h = keep(linear(h, w3, b3));
        keep(softmax(h));
        return values;
    };
    const std::vector<tensor> reference = forward(input, groups, nullptr, nullptr);
    std::vector<storage> stores;
    for (const demo_node& node : nodes) stores.push_back(node.target_storage);
    std::vector<stored_tensor> stored;
    const std::vector<tensor> target = forward(input, 1, &stores, &stored);

    const std::filesystem::path reference_dir = directory / "reference";
    const std::filesystem::path target_dir = directory / "target";
    write_demo_run(reference_dir, nodes, reference, nullptr);
    write_demo_run(target_dir, nodes, target, &stored);

    std::cout << "numgap demo: wrote a float32 reference run to " << numgap::terminal_text(reference_dir.string())
              << "\nand a quantized/fp16 target run to " << numgap::terminal_text(target_dir.string())
              << "\nwhose node /block/gn2/GroupNorm normalises over the whole tensor instead of "
                 "4 groups.\n\n$ numgap compare "
              << numgap::terminal_text(reference_dir.string()) << " "
              << numgap::terminal_text(target_dir.string()) << "\n\n";
    compare_arguments arguments;
    arguments.reference = reference_dir.string();
    arguments.target = target_dir.string();
    const int status = run_compare(arguments);
    std::cout << "\nThe report names gn2 as the first divergence and the only error origin: the\n"
                 "quantized convolutions before it pass, and everything after it fails only\n"
                 "because gn2 does.\n";
    return status;
}

} // namespace numgap_cli
