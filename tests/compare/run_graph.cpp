// Pins down run_graph: edges come from tensor keys (consumer lists a
// producer's output), graph inputs become "input" nodes, nodes without outputs
// keep none, and without graph.json every key is an edgeless node; every shape
// graph.json or the .npy headers know reaches output_shape, so structural
// matching pairs branches of different widths by shape.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "../core/as_vector.hpp"
#include <numgap/compare/run_graph.hpp>
#include <numgap/graph/topological_order.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/run_directory.hpp>
#include <numgap/io/run_manifest.hpp>
#include <numgap/match/match_by_structure.hpp>

#include "../io/temp_directory.hpp"

TEST_SUITE("compare") {
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
    CHECK(numgap_test::as_vector(graph.output_keys(x)) == std::vector<std::string>{"x"});
    CHECK(numgap_test::as_vector(graph.producers(conv1)) == std::vector<std::size_t>{x});
    CHECK(numgap_test::as_vector(graph.debug_handles(conv1)) == std::vector<std::int64_t>{4, 5});
    CHECK(numgap_test::as_vector(graph.output_keys(conv1)) == std::vector<std::string>{"conv1_out"});
    CHECK(numgap_test::as_vector(graph.producers(relu)) == std::vector<std::size_t>{conv1});
    CHECK(numgap_test::as_vector(graph.output_keys(relu)) ==
          std::vector<std::string>{"relu"}); // outputs default to [name]
    CHECK(numgap_test::as_vector(graph.producers(add)) == std::vector<std::size_t>{relu, x});
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
    CHECK(numgap_test::as_vector(graph.output_keys(graph.find("input:b").value())) == std::vector<std::string>{"b"});
}

TEST_CASE("run_graph: a node with an empty outputs list has no output keys") {
    const auto manifest = numgap::io::parse_run_manifest(
        R"({"nodes": [{"name": "print", "op": "debug_print", "outputs": []}]})", "graph.json");
    const numgap::basic_graph graph = numgap::run_graph(manifest, std::vector<std::string>{});
    REQUIRE(graph.num_nodes() == 1);
    CHECK(graph.output_keys(0).empty());
}

TEST_CASE("run_graph: a manifest built by hand with repeated names and keys builds as it always did") {
    // graph.json's reader refuses both; a manifest made in code (or by a
    // source that does not check) is taken as it is: every node is added,
    // an input reads the first producer of its key, and a graph input takes
    // a name no node has, later nodes included.
    numgap::io::run_manifest manifest;
    manifest.has_graph = true;
    manifest.nodes.push_back({"a", "op", {"x"}, {"t"}, {}});
    manifest.nodes.push_back({"a", "op", {}, {"t"}, {}}); // name and key again
    manifest.nodes.push_back({"b", "op", {"t", "y"}, {"b"}, {}});
    manifest.nodes.push_back({"y", "op", {}, {"y2"}, {}}); // "y" is a later node's name
    manifest.nodes.push_back({"input:y", "op", {}, {"y3"}, {}});
    const numgap::basic_graph graph = numgap::run_graph(manifest, std::vector<std::string>{});
    std::vector<std::string> names;
    for (std::size_t i = 0; i < graph.num_nodes(); ++i) names.emplace_back(graph.node_name(i));
    CHECK(names == std::vector<std::string>{"x", "a", "a", "input:y#2", "b", "y", "input:y"});
    CHECK(numgap_test::as_vector(graph.producers(4)) == std::vector<std::size_t>{1, 3}); // t from the first "a"
    CHECK(graph.first_producer_of("t") == std::optional<std::size_t>(1));
    CHECK(numgap_test::as_vector(graph.output_keys(3)) == std::vector<std::string>{"y"});
}

TEST_CASE("run_graph: without graph.json every tensor key is its own edgeless node") {
    numgap::io::run_manifest manifest; // has_graph == false
    const std::vector<std::string> keys = {"block1/conv", "block1/relu", "logits"};
    const numgap::basic_graph graph = numgap::run_graph(manifest, keys);
    REQUIRE(graph.num_nodes() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(graph.node_name(i) == keys[i]);
        CHECK(graph.producers(i).empty());
        CHECK(numgap_test::as_vector(graph.output_keys(i)) == std::vector<std::string>{keys[i]});
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
    for (std::size_t n = 0; n < graph.num_nodes(); ++n) names.emplace_back(graph.node_name(n));
    CHECK(names == std::vector<std::string>{"x", "input:x#2", "input:x", "input:input:x#2", "w"});
    CHECK(numgap_test::as_vector(graph.output_keys(graph.find("input:x#2").value())) == std::vector<std::string>{"x"});
    CHECK(numgap_test::as_vector(graph.output_keys(graph.find("input:input:x#2").value())) ==
          std::vector<std::string>{"input:x#2"});
    CHECK(graph.op_type(graph.find("input:x").value()) != "input"); // the user's node keeps its name
}

TEST_CASE("run_graph: graph.json shapes reach output_shape in reference dimension order") {
    const auto manifest = numgap::io::parse_run_manifest(
        R"({"nodes": [{"name": "conv", "op": "conv", "inputs": ["x"]}, {"name": "relu", "inputs": ["conv"]}],
            "tensors": {"conv": {"file": "conv.raw", "dtype": "int8", "shape": [1, 5, 7, 3],
                                 "axis_order": [0, 2, 3, 1]},
                        "x": {"shape": [1, 3, 5, 7]}}})",
        "graph.json");
    const numgap::basic_graph graph = numgap::run_graph(manifest, std::vector<std::string>{});
    CHECK(graph.output_shape(graph.find("conv").value(), 0) == numgap::shape_type{1, 3, 5, 7});
    CHECK(graph.output_shape(graph.find("x").value(), 0) == numgap::shape_type{1, 3, 5, 7});
    CHECK_FALSE(graph.output_shape(graph.find("relu").value(), 0).has_value());
}

namespace {
// A run directory x -> narrow (8 wide), x -> wide (16 wide); the target
// renames both and lists the wide branch first. Nothing but the shapes tells
// the two convolutions apart.
void write_two_width_run(const numgap_test::temp_directory& run, bool target, bool shapes_in_graph_json) {
    const std::string narrow = target ? "t_branch_b" : "narrow", wide = target ? "t_branch_a" : "wide";
    std::string nodes = target ? R"({"name": ")" + wide + R"(", "op": "conv", "inputs": ["x"]},
                                   {"name": ")" + narrow + R"(", "op": "conv", "inputs": ["x"]})"
                               : R"({"name": ")" + narrow + R"(", "op": "conv", "inputs": ["x"]},
                                   {"name": ")" + wide + R"(", "op": "conv", "inputs": ["x"]})";
    std::string tensors;
    if (shapes_in_graph_json)
        tensors = R"(, "tensors": {")" + narrow + R"(": {"shape": [1, 8]}, ")" + wide + R"(": {"shape": [1, 16]}})";
    run.write("graph.json", R"({"nodes": [)" + nodes + "]" + tensors + "}");
    const std::vector<float> values(16, 1.0f);
    numgap::io::write_npy(run / "x.npy", values.data(), std::vector<std::int64_t>{1, 4});
    numgap::io::write_npy(run / (narrow + ".npy"), values.data(), std::vector<std::int64_t>{1, 8});
    numgap::io::write_npy(run / (wide + ".npy"), values.data(), std::vector<std::int64_t>{1, 16});
}

void check_paired_by_width(const numgap::basic_graph& reference, const numgap::basic_graph& target) {
    const numgap::match_result result = numgap::match_by_structure(reference, target);
    const std::size_t narrow = reference.find("narrow").value(), wide = reference.find("wide").value();
    int checked = 0;
    for (const numgap::match_group& group : result.groups) {
        if (group.reference_output_node == narrow) {
            CHECK(target.node_name(group.target_output_node) == "t_branch_b");
            ++checked;
        }
        if (group.reference_output_node == wide) {
            CHECK(target.node_name(group.target_output_node) == "t_branch_a");
            ++checked;
        }
    }
    CHECK(checked == 2);
}
} // namespace

TEST_CASE("run_graph: .npy header shapes reach the matcher, so branches of different widths pair by shape") {
    const numgap_test::temp_directory reference_dir, target_dir;
    write_two_width_run(reference_dir, false, false);
    write_two_width_run(target_dir, true, false);
    const auto reference_run = numgap::io::run_directory::open(reference_dir.path());
    const auto target_run = numgap::io::run_directory::open(target_dir.path());
    const numgap::basic_graph reference = numgap::run_graph(reference_run);
    const numgap::basic_graph target = numgap::run_graph(target_run);
    CHECK(reference.output_shape(reference.find("wide").value(), 0) == numgap::shape_type{1, 16});
    CHECK(reference.output_shape(reference.find("x").value(), 0) == numgap::shape_type{1, 4});
    check_paired_by_width(reference, target);
    // Without headers nothing is read: the shapes stay unknown.
    const numgap::basic_graph unread = numgap::run_graph(reference_run, false);
    CHECK_FALSE(unread.output_shape(unread.find("wide").value(), 0).has_value());
}

TEST_CASE("run_graph: shapes declared in graph.json alone pair branches of different widths") {
    const numgap_test::temp_directory reference_dir, target_dir;
    write_two_width_run(reference_dir, false, true);
    write_two_width_run(target_dir, true, true);
    const auto reference_run = numgap::io::run_directory::open(reference_dir.path());
    const auto target_run = numgap::io::run_directory::open(target_dir.path());
    check_paired_by_width(numgap::run_graph(reference_run, false), numgap::run_graph(target_run, false));
}

TEST_CASE("run_graph: run_graph_shapes none, declared and stored; add_stored_shapes completes none exactly") {
    // graph.json declares the narrow branch's shape only; the wide one and x
    // are known from their .npy headers alone.
    const numgap_test::temp_directory dir;
    write_two_width_run(dir, false, false);
    dir.write("graph.json", R"({"nodes": [{"name": "narrow", "op": "conv", "inputs": ["x"]},
                                          {"name": "wide", "op": "conv", "inputs": ["x"]}],
                                "tensors": {"narrow": {"shape": [1, 8]}}})");
    const auto run = numgap::io::run_directory::open(dir.path());
    const auto shapes_of = [](const numgap::basic_graph& graph) {
        std::vector<std::optional<numgap::shape_type>> shapes;
        for (const char* name : {"x", "narrow", "wide"})
            shapes.push_back(graph.output_shape(graph.find(name).value(), 0));
        return shapes;
    };
    using shapes = std::vector<std::optional<numgap::shape_type>>;
    const numgap::basic_graph none = numgap::run_graph(run, numgap::run_graph_shapes::none);
    CHECK(shapes_of(none) == shapes{std::nullopt, std::nullopt, std::nullopt});
    CHECK(shapes_of(numgap::run_graph(run, numgap::run_graph_shapes::declared)) ==
          shapes{std::nullopt, numgap::shape_type{1, 8}, std::nullopt});
    CHECK(shapes_of(numgap::run_graph(run, false)) ==
          shapes_of(numgap::run_graph(run, numgap::run_graph_shapes::declared)));
    const shapes stored{numgap::shape_type{1, 4}, numgap::shape_type{1, 8}, numgap::shape_type{1, 16}};
    CHECK(shapes_of(numgap::run_graph(run, numgap::run_graph_shapes::stored)) == stored);
    CHECK(shapes_of(numgap::run_graph(run)) == stored);
    numgap::basic_graph completed = numgap::run_graph(run, numgap::run_graph_shapes::none);
    numgap::add_stored_shapes(completed, run);
    CHECK(shapes_of(completed) == stored);
}
} // TEST_SUITE("compare")
