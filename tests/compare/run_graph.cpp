// Pins down run_graph: edges come from tensor keys (consumer lists a
// producer's output), graph inputs become "input" nodes, nodes without outputs
// keep none, and without graph.json every key is an edgeless node.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <numgap/compare/run_graph.hpp>
#include <numgap/graph/topological_order.hpp>
#include <numgap/io/run_manifest.hpp>

TEST_CASE("run_graph: edges follow tensor keys and an unproduced input becomes an input node") {
    const auto manifest = numgap::io::parse_run_manifest(R"({"nodes": [
        {"name": "conv1", "op": "conv", "inputs": ["x"], "outputs": ["conv1_out"], "debug_handles": [4, 5]},
        {"name": "relu", "op": "relu", "inputs": ["conv1_out"]},
        {"name": "add", "op": "add", "inputs": ["relu", "x"]}]})",
                                                         "graph.json");
    const numgap::basic_graph graph = numgap::run_graph(manifest, std::vector<std::string>{});
    REQUIRE(graph.num_nodes() == 4);
    const std::size_t x = graph.find("x").value();
    const std::size_t conv1 = graph.find("conv1").value();
    const std::size_t relu = graph.find("relu").value();
    const std::size_t add = graph.find("add").value();
    CHECK(graph.op_type(x) == "input");
    CHECK(graph.output_keys(x) == std::vector<std::string>{"x"});
    CHECK(graph.producers(conv1) == std::vector<std::size_t>{x});
    CHECK(graph.debug_handles(conv1) == std::vector<std::int64_t>{4, 5});
    CHECK(graph.output_keys(conv1) == std::vector<std::string>{"conv1_out"});
    CHECK(graph.producers(relu) == std::vector<std::size_t>{conv1});
    CHECK(graph.output_keys(relu) == std::vector<std::string>{"relu"}); // outputs default to [name]
    CHECK(graph.producers(add) == std::vector<std::size_t>{relu, x});
    const auto order = numgap::topological_order(graph);
    CHECK(order == std::vector<std::size_t>{0, 1, 2, 3}); // built in topological order
}

TEST_CASE("run_graph: an input key equal to a node's name gets a distinct input node name") {
    const auto manifest = numgap::io::parse_run_manifest(
        R"({"nodes": [{"name": "a", "inputs": ["b"], "outputs": ["a_out"]},
                      {"name": "b", "inputs": ["a_out"], "outputs": ["b_out"]}]})",
        "graph.json");
    const numgap::basic_graph graph = numgap::run_graph(manifest, std::vector<std::string>{});
    REQUIRE(graph.num_nodes() == 3);
    CHECK(graph.find("input:b").has_value());
    CHECK(graph.output_keys(graph.find("input:b").value()) == std::vector<std::string>{"b"});
}

TEST_CASE("run_graph: a node with an empty outputs list has no output keys") {
    const auto manifest = numgap::io::parse_run_manifest(
        R"({"nodes": [{"name": "print", "op": "debug_print", "outputs": []}]})", "graph.json");
    const numgap::basic_graph graph = numgap::run_graph(manifest, std::vector<std::string>{});
    REQUIRE(graph.num_nodes() == 1);
    CHECK(graph.output_keys(0).empty());
}

TEST_CASE("run_graph: without graph.json every tensor key is its own edgeless node") {
    numgap::io::run_manifest manifest; // has_graph == false
    const std::vector<std::string> keys = {"block1/conv", "block1/relu", "logits"};
    const numgap::basic_graph graph = numgap::run_graph(manifest, keys);
    REQUIRE(graph.num_nodes() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(graph.node_name(i) == keys[i]);
        CHECK(graph.producers(i).empty());
        CHECK(graph.output_keys(i) == std::vector<std::string>{keys[i]});
        CHECK(graph.op_type(i).empty());
    }
}

TEST_CASE("run_graph: generated input names stay unique when 'input:<key>' is itself a node name") {
    // "x" is a node and "input:x" too; key "x" is produced by nobody, so its
    // graph input needs a third name. Key "input:x#2" then clashes with that.
    const auto manifest = numgap::io::parse_run_manifest(
        R"({"nodes": [{"name": "x", "outputs": ["y"]},
                      {"name": "input:x", "inputs": ["x"], "outputs": ["z"]},
                      {"name": "w", "inputs": ["x", "input:x#2"], "outputs": ["w"]}]})",
        "graph.json");
    const numgap::basic_graph graph = numgap::run_graph(manifest, std::vector<std::string>{});
    REQUIRE(graph.num_nodes() == 5);
    std::vector<std::string> names;
    for (std::size_t n = 0; n < graph.num_nodes(); ++n) names.push_back(graph.node_name(n));
    CHECK(names == std::vector<std::string>{"x", "input:x#2", "input:x", "input:input:x#2", "w"});
    CHECK(graph.output_keys(graph.find("input:x#2").value()) == std::vector<std::string>{"x"});
    CHECK(graph.output_keys(graph.find("input:input:x#2").value()) == std::vector<std::string>{"input:x#2"});
    CHECK(graph.op_type(graph.find("input:x").value()) != "input"); // the user's node keeps its name
}
