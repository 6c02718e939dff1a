// Pins down graph.json parsing: the issue's example, every default, both
// quantization forms, and one test per rejected input checking that the
// message carries file:line:column, the node or tensor, and the reason.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <numgap/io/run_manifest.hpp>

#include "temp_directory.hpp"

using numgap::io::parse_run_manifest;
using numgap::io::run_manifest;
using numgap_test::contains;
using numgap_test::error_of;

namespace {
// The piecewise reader's nodes against the tree reader's.
void check_same_nodes(const run_manifest& piecewise, const run_manifest& tree) {
    REQUIRE(piecewise.nodes.size() == tree.nodes.size());
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
        CHECK(piecewise.nodes[i].name == tree.nodes[i].name);
        CHECK(piecewise.nodes[i].op == tree.nodes[i].op);
        CHECK(piecewise.nodes[i].inputs == tree.nodes[i].inputs);
        CHECK(piecewise.nodes[i].outputs == tree.nodes[i].outputs);
        CHECK(piecewise.nodes[i].debug_handles == tree.nodes[i].debug_handles);
    }
}

std::string manifest_error(const std::string& text) {
    return error_of([&] { (void)parse_run_manifest(text, "runs/ref/graph.json"); });
}
std::string tensor_error(const std::string& entry) {
    return manifest_error("{\"tensors\": {\"t\": " + entry + "}}");
}
numgap::error manifest_failure(const std::string& text) {
    const auto failure = numgap_test::caught_error([&] { (void)parse_run_manifest(text, "runs/ref/graph.json"); });
    REQUIRE(failure.has_value());
    return *failure;
}
numgap::error tensor_failure(const std::string& entry) {
    return manifest_failure("{\"tensors\": {\"t\": " + entry + "}}");
}
} // namespace

TEST_SUITE("io") {
TEST_CASE("run_manifest: parses the issue example") {
    const run_manifest m = parse_run_manifest(R"({
  "nodes": [
    {"name": "conv1", "op": "aten.convolution.default",
     "inputs": ["x"], "outputs": ["conv1"], "debug_handles": [4, 5]}
  ],
  "tensors": {
    "conv1": {"file": "out/conv1.raw", "dtype": "uint8", "shape": [1, 56, 56, 64],
              "axis_order": [0, 2, 3, 1], "scale": 0.0235, "zero_point": 128}
  }
})",
                                              "graph.json");
    CHECK(m.has_graph);
    REQUIRE(m.nodes.size() == 1);
    const auto& node = m.nodes[0];
    CHECK(node.name == "conv1");
    CHECK(node.op == "aten.convolution.default");
    CHECK(node.inputs == std::vector<std::string>{"x"});
    CHECK(node.outputs == std::vector<std::string>{"conv1"});
    CHECK(node.debug_handles == std::vector<std::int64_t>{4, 5});
    const auto* t = m.find_tensor("conv1");
    REQUIRE(t != nullptr);
    CHECK(t->file == "out/conv1.raw");
    CHECK(t->type == numgap::dtype::uint8);
    CHECK(*t->shape == std::vector<std::int64_t>{1, 56, 56, 64});
    CHECK(*t->axis_order == std::vector<int>{0, 2, 3, 1});
    REQUIRE(t->affine);
    CHECK(t->affine->axis == -1);
    CHECK(t->affine->scales == std::vector<float>{0.0235f});
    CHECK(t->affine->zero_points == std::vector<std::int32_t>{128});
}

TEST_CASE("run_manifest: defaults") {
    const run_manifest m = parse_run_manifest(
        R"({"version": 1, "metadata": {"producer": "x"}, "nodes": [{"name": "relu", "metadata": 7}],
            "tensors": {"b": {}, "a": {"dtype": "int8", "scale": 0.5}}})",
        "graph.json");
    CHECK(m.nodes[0].op.empty());
    CHECK(m.nodes[0].inputs.empty());
    CHECK(m.nodes[0].outputs == std::vector<std::string>{"relu"});
    CHECK(m.nodes[0].debug_handles.empty());
    REQUIRE(m.tensors.size() == 2);
    CHECK(m.tensors[0].key == "a"); // sorted by key for find_tensor
    CHECK(m.find_tensor("b")->file == "b.npy");
    CHECK_FALSE(m.find_tensor("b")->affine);
    CHECK_FALSE(m.find_tensor("b")->type.has_value());
    CHECK(m.find_tensor("a")->affine->zero_points == std::vector<std::int32_t>{0});
    CHECK(m.find_tensor("zzz") == nullptr);
    const run_manifest explicit_empty = parse_run_manifest(R"({"nodes": [{"name": "n", "outputs": []}]})", "g");
    CHECK(explicit_empty.nodes[0].outputs.empty());
    CHECK_FALSE(run_manifest{}.has_graph);
}

TEST_CASE("run_manifest: per channel quantization") {
    const run_manifest m = parse_run_manifest(
        R"({"tensors": {
            "w": {"dtype": "int8", "shape": [3, 2], "scale": [0.5, 0.25, 2], "zero_point": [1, -2, 3], "quant_axis": 0},
            "v": {"scale": [0.5, 0.25], "zero_point": 4, "quant_axis": 1},
            "u": {"scale": [0.5], "quant_axis": 0}}})",
        "graph.json");
    const auto* w = m.find_tensor("w");
    REQUIRE(w->affine);
    CHECK(w->affine->axis == 0);
    CHECK(w->affine->scales == std::vector<float>{0.5f, 0.25f, 2.0f});
    CHECK(w->affine->zero_points == std::vector<std::int32_t>{1, -2, 3});
    CHECK(m.find_tensor("v")->affine->zero_points == std::vector<std::int32_t>{4, 4});
    CHECK(m.find_tensor("v")->affine->axis == 1);
    CHECK(m.find_tensor("u")->affine->zero_points == std::vector<std::int32_t>{0});
}

TEST_CASE("run_manifest: rejects bad structure with location") {
    CHECK(manifest_error("[1]") == "runs/ref/graph.json:1:1: expected an object at the top level, found an array");
    CHECK(manifest_error("{\n \"node\": []}") ==
          "runs/ref/graph.json:2:10: unknown top-level key \"node\" (expected \"nodes\", \"tensors\", \"version\" or "
          "\"metadata\")");
    CHECK(contains(manifest_error("{\"version\": 2}"), "runs/ref/graph.json:1:13: \"version\" must be 1"));
    CHECK(contains(manifest_error("{\"nodes\": {}}"), "1:11: \"nodes\" must be an array, found an object"));
    CHECK(contains(manifest_error("{\"nodes\": [3]}"), "node 0 must be an object, found a number"));
    CHECK(contains(manifest_error("{\"nodes\": [{\"op\": \"add\"}]}"), "1:12: node 0 has no \"name\""));
    CHECK(contains(manifest_error("{\"nodes\": [{\"name\": \"\"}]}"), "node 0: \"name\" is empty"));
    CHECK(contains(manifest_error("{\"nodes\": [{\"name\": 5}]}"), "node 0: \"name\" must be a string, found a number"));
    CHECK(contains(manifest_error("{\"nodes\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}"),
                   "1:36: node 'a' appears twice"));
    CHECK(contains(manifest_error("{\"nodes\": [{\"name\": \"a\", \"op\": 1}]}"), "node 'a': \"op\" must be a string"));
    CHECK(contains(manifest_error("{\"nodes\": [{\"name\": \"a\", \"inputs\": \"x\"}]}"),
                   "node 'a': \"inputs\" must be an array of strings, found a string"));
    CHECK(contains(manifest_error("{\"nodes\": [{\"name\": \"a\", \"outputs\": [1]}]}"),
                   "node 'a': \"outputs\" must hold only strings, found a number"));
    CHECK(contains(manifest_error("{\"nodes\": [{\"name\": \"a\", \"debug_handles\": [1.5]}]}"),
                   "node 'a': \"debug_handles\" must hold integers, found a non-integer number"));
    CHECK(contains(manifest_error("{\"nodes\": [{\"name\": \"a\", \"debug_handle\": [1]}]}"),
                   "node 'a': unknown key \"debug_handle\""));
    CHECK(contains(manifest_error("{\"nodes\": [{\"name\": \"a\",\n \"x\": [}]}"), "runs/ref/graph.json:2:8: expected a JSON value"));
    // The same place for a program: file and line:column of the offending value.
    const numgap::error unknown = manifest_failure("{\n \"node\": []}");
    CHECK(unknown.kind() == numgap::error_kind::schema);
    CHECK(unknown.where().file == "runs/ref/graph.json");
    CHECK(unknown.where().line == 2);
    CHECK(unknown.where().column == 10);
    CHECK(manifest_failure("{\"nodes\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}").kind() == numgap::error_kind::schema);
}

TEST_CASE("run_manifest: rejects inconsistent graphs") {
    CHECK(contains(manifest_error(R"({"nodes": [{"name": "a"}, {"name": "b", "outputs": ["a"]}]})"),
                   "node 'b': tensor 'a' is already an output of node 'a'"));
    CHECK(contains(manifest_error(R"({"nodes": [{"name": "a", "inputs": ["b"]}, {"name": "b"}]})"),
                   "node 'a' reads tensor 'b', which node 'b' produces later in the list"));
    CHECK(contains(manifest_error(R"({"nodes": [{"name": "a", "inputs": ["a"]}]})"),
                   "node 'a' reads tensor 'a', which node 'a' produces itself"));
    const numgap::error later = manifest_failure(R"({"nodes": [{"name": "a", "inputs": ["b"]}, {"name": "b"}]})");
    CHECK(later.kind() == numgap::error_kind::graph);
    CHECK(later.where().item == "a");
    CHECK(later.where().line == 1);
    CHECK(manifest_failure(R"({"nodes": [{"name": "a"}, {"name": "b", "outputs": ["a"]}]})").kind() ==
          numgap::error_kind::graph);
    // Graph inputs have no producer and are fine.
    CHECK(manifest_error(R"({"nodes": [{"name": "a", "inputs": ["x"]}, {"name": "b", "inputs": ["a", "x"]}]})") ==
          "<no numgap::error>");
}

TEST_CASE("run_manifest: rejects bad tensor entries naming the tensor") {
    CHECK(contains(manifest_error("{\"tensors\": []}"), "\"tensors\" must be an object keyed by tensor key"));
    CHECK(contains(manifest_error("{\"tensors\": {\"t\": 1}}"), "tensor 't' must be an object, found a number"));
    CHECK(contains(manifest_error("{\"tensors\": {\"\": {}}}"), "\"tensors\" has an empty key"));
    CHECK(contains(tensor_error(R"({"zero_pont": 3})"), "1:33: tensor 't': unknown key \"zero_pont\""));
    CHECK(contains(tensor_error(R"({"file": 3})"), "tensor 't': \"file\" must be a string"));
    CHECK(contains(tensor_error(R"({"file": ""})"), "tensor 't': \"file\" is empty"));
    CHECK(contains(tensor_error(R"({"dtype": "int64"})"), "tensor 't': unknown dtype \"int64\""));
    CHECK(contains(tensor_error(R"({"dtype": "float8"})"), "(expected one of float32, float64, "));
    CHECK(contains(tensor_error(R"({"dtype": "float8"})"), ", float8_e4m3fn, float8_e5m2, float8_e8m0fnu"));
    CHECK(parse_run_manifest(R"({"tensors": {"t": {"dtype": "f8e4m3"}}})", "g.json").find_tensor("t")->type ==
          numgap::dtype::float8_e4m3fn);
    CHECK(contains(tensor_error(R"({"shape": [2, -1]})"), "tensor 't': \"shape\" value -1 is outside"));
    CHECK(contains(tensor_error(R"({"shape": [1,1,1,1,1,1,1,1,1]})"), "tensor 't': \"shape\" has rank 9, above"));
    CHECK(contains(tensor_error(R"({"shape": "2x3"})"), "\"shape\" must be an array of integers, found a string"));
    CHECK(contains(tensor_error(R"({"axis_order": [0, 0, 1]})"), "tensor 't': \"axis_order\" must be a permutation of 0..2"));
    CHECK(contains(tensor_error(R"({"axis_order": [0, 3]})"), "must be a permutation of 0..1"));
    CHECK(contains(tensor_error(R"({"axis_order": [1, 0], "shape": [1, 2, 3]})"),
                   "\"axis_order\" has 2 entries but \"shape\" has rank 3"));
    const numgap::error dtype = tensor_failure(R"({"dtype": "int64"})");
    CHECK(dtype.kind() == numgap::error_kind::dtype);
    CHECK(dtype.where().item == "t");
    CHECK(dtype.where().column == 29);
    CHECK(tensor_failure(R"({"shape": [1,1,1,1,1,1,1,1,1]})").kind() == numgap::error_kind::limit);
    CHECK(tensor_failure(R"({"axis_order": [1, 0], "shape": [1, 2, 3]})").kind() == numgap::error_kind::shape);
    CHECK(tensor_failure(R"({"file": ""})").kind() == numgap::error_kind::schema);
}

TEST_CASE("run_manifest: rejects bad quantization naming the tensor") {
    CHECK(contains(tensor_error(R"({"scale": 0})"), "tensor 't': \"scale\" 0 must be finite and non-zero"));
    CHECK(contains(tensor_error(R"({"scale": 1e39})"), "must be finite and non-zero (as a float32)"));
    CHECK(contains(tensor_error(R"({"scale": "1"})"), "\"scale\" must be a number or an array of numbers, found a string"));
    CHECK(contains(tensor_error(R"({"scale": 1, "zero_point": 2147483648})"), "\"zero_point\" value 2147483648 is outside"));
    CHECK(contains(tensor_error(R"({"scale": 1, "zero_point": 1.5})"), "\"zero_point\" must hold integers"));
    CHECK(contains(tensor_error(R"({"zero_point": 3})"), "tensor 't': \"zero_point\" is given without \"scale\""));
    CHECK(contains(tensor_error(R"({"quant_axis": 0})"), "\"quant_axis\" is given without \"scale\""));
    CHECK(contains(tensor_error(R"({"scale": 1, "quant_axis": 0})"), "\"quant_axis\" needs per-channel \"scale\""));
    CHECK(contains(tensor_error(R"({"scale": 1, "zero_point": [1]})"), "\"zero_point\" is an array but \"scale\" is a single number"));
    CHECK(contains(tensor_error(R"({"scale": [1, 2]})"), "per-channel \"scale\" (an array) needs \"quant_axis\""));
    CHECK(contains(tensor_error(R"({"scale": [], "quant_axis": 0})"), "\"scale\" is an empty array"));
    CHECK(contains(tensor_error(R"({"scale": [1, 2], "zero_point": [0], "quant_axis": 0})"),
                   "\"zero_point\" has 1 entries but \"scale\" has 2"));
    CHECK(contains(tensor_error(R"({"scale": [1, 2], "quant_axis": 1, "shape": [2, 3]})"),
                   "tensor 't': \"scale\" has 2 entries but dimension 1 of \"shape\" has 3"));
    CHECK(contains(tensor_error(R"({"scale": [1, 2], "quant_axis": 2, "shape": [2, 3]})"),
                   "\"quant_axis\" 2 is not a dimension of shape of rank 2"));
    CHECK(contains(tensor_error(R"({"dtype": "float32", "scale": 0.5})"),
                   "tensor 't': \"scale\" is given but dtype float32 is not an integer type"));
    CHECK(tensor_failure(R"({"dtype": "float32", "scale": 0.5})").kind() == numgap::error_kind::dtype);
    CHECK(tensor_failure(R"({"scale": [1, 2], "quant_axis": 1, "shape": [2, 3]})").kind() == numgap::error_kind::shape);
    CHECK(tensor_failure(R"({"scale": 0})").kind() == numgap::error_kind::schema);
}

TEST_CASE("run_manifest: numbers that underflow read as zero in metadata and fields") {
    // Free-form metadata may hold any JSON number; it used to fail the whole graph.json.
    const run_manifest manifest = parse_run_manifest(
        R"({"metadata": {"eps": 1e-400}, "nodes": [{"name": "a", "metadata": {"tiny": -2.5e-999}}]})",
        "runs/ref/graph.json");
    CHECK(manifest.nodes.size() == 1);
    // In a numeric field the value is zero, and the field's own rule decides.
    CHECK(contains(tensor_error(R"({"scale": 1e-400})"), "tensor 't': \"scale\" 0 must be finite and non-zero"));
    CHECK(contains(tensor_error(R"({"scale": 1e400})"), "runs/ref/graph.json:1:29: number 1e400 is out of the range"));
}

TEST_CASE("run_manifest: a large file read piecewise gives exactly what the tree reader gives") {
    // parse_run_manifest reads nodes and tensors one at a time (no tree of
    // the whole file); read(root) over the whole tree is the reference.
    std::string text = "{\"version\": 1, \"metadata\": {\"model\": [1, {\"x\": null}]},\n \"nodes\": [\n";
    for (int i = 0; i < 3000; ++i) {
        const std::string name = "block." + std::to_string(i / 3) + ".op" + std::to_string(i % 3);
        text += std::string(i ? ",\n" : "") + "  {\"name\": \"" + name + "\", \"op\": \"aten.add.Tensor\"";
        if (i) text += ", \"inputs\": [\"t" + std::to_string(i - 1) + "\", \"graph_input\"]";
        text += ", \"outputs\": [\"t" + std::to_string(i) + "\"], \"debug_handles\": [" + std::to_string(i) + ", " +
                std::to_string(-i) + "], \"metadata\": {\"i\": " + std::to_string(i) + "}}";
    }
    text += "],\n \"tensors\": {";
    for (int i = 2999; i >= 0; i -= 7)
        text += std::string(i != 2999 ? ", " : "") + "\"t" + std::to_string(i) +
                "\": {\"dtype\": \"uint8\", \"shape\": [2, 3], \"axis_order\": [1, 0], \"scale\": 0.5, \"zero_point\": 3}";
    text += "}}\n";
    const run_manifest piecewise = parse_run_manifest(text, "g.json");
    const run_manifest tree =
        numgap::io::detail::manifest_reader("g.json").read(numgap::io::parse_json(text, "g.json"));
    REQUIRE(piecewise.nodes.size() == 3000);
    check_same_nodes(piecewise, tree);
    REQUIRE(piecewise.tensors.size() == tree.tensors.size());
    CHECK(piecewise.tensors.size() == 429);
    for (std::size_t i = 0; i < tree.tensors.size(); ++i) {
        CHECK(piecewise.tensors[i].key == tree.tensors[i].key);
        CHECK(piecewise.tensors[i].shape == tree.tensors[i].shape);
        CHECK(piecewise.tensors[i].axis_order == tree.tensors[i].axis_order);
        CHECK(piecewise.tensors[i].affine == tree.tensors[i].affine);
        CHECK(piecewise.tensors[i].block.has_value() == tree.tensors[i].block.has_value());
    }
    CHECK(piecewise.has_graph);
}

TEST_CASE("run_manifest: each node, valid or not, reads the same streamed as from the tree") {
    // Nodes are read straight from the stream in the usual shape and handed
    // to the tree reader otherwise: for every variant the result, or the
    // error message, must be the tree reader's.
    const std::vector<std::string> nodes = {
        R"({"name": "a"})",
        R"({"name": "a", "op": "aten.add", "inputs": ["x", "y"], "outputs": ["t0", "t1"], "debug_handles": [-3, 7]})",
        R"({"op": "x", "name": "a", "metadata": {"deep": [[1, {"k": null}]]}, "outputs": []})",
        R"({"name": "a", "inputs": []})",
        R"({"name": "a", "debug_handles": []})",
        R"({})",
        R"({"name": ""})",
        R"({"name": 3})",
        R"({"name": "a", "op": 1})",
        R"({"name": "a", "inputs": "x"})",
        R"({"name": "a", "inputs": ["x", 2]})",
        R"({"name": "a", "outputs": [null]})",
        R"({"name": "a", "debug_handles": [1.5]})",
        R"({"name": "a", "debug_handles": [1e3]})",
        R"({"name": "a", "debug_handles": "1"})",
        R"({"name": "a", "debug_handles": [9223372036854775807, -9223372036854775808]})",
        R"({"name": "a", "extra": 1})",
        R"({"name": "a", "name": "b"})",
        R"({"name": "a", "op": "x", "op": "y"})",
        R"(["a"])",
        R"("a")",
        R"({"name": "a\u0000b"})",
        R"({"name": "caf\u00e9", "outputs": ["\ud83d\ude00"]})",
    };
    const auto read_both = [](const std::string& text) {
        std::string piecewise_error, tree_error;
        run_manifest piecewise, tree;
        try {
            piecewise = parse_run_manifest(text, "g.json");
        } catch (const numgap::error& failure) {
            piecewise_error = failure.what();
        }
        try {
            tree = numgap::io::detail::manifest_reader("g.json").read(numgap::io::parse_json(text, "g.json"));
        } catch (const numgap::error& failure) {
            tree_error = failure.what();
        }
        CHECK(piecewise_error == tree_error);
        check_same_nodes(piecewise, tree);
    };
    for (const std::string& node : nodes) {
        CAPTURE(node);
        read_both(R"({"nodes": [)" + node + "]}");
        // After a valid node, and with a later node of the same name.
        read_both(R"({"nodes": [{"name": "first", "outputs": ["f"]}, )" + node + "]}");
        read_both(R"({"nodes": [)" + node + R"(, {"name": "a"}]})");
    }
}

TEST_CASE("run_manifest: what the piecewise reader cannot locate is reported as the tree reader reports it") {
    // Duplicate "tensors" keys (found after sorting), graph rules (checked
    // once every node is read) and wrong container types all fall back to
    // the tree reader, so messages keep their line and column.
    CHECK(contains(manifest_error("{\"tensors\": {\"a\": {},\n \"a\": {}}}"),
                   "runs/ref/graph.json:2:2: duplicate key \"a\" in object"));
    CHECK(contains(manifest_error("{\"nodes\": [{\"name\": \"a\", \"inputs\": [\"b\"]},\n {\"name\": \"b\"}]}"),
                   "runs/ref/graph.json:1:12: node 'a' reads tensor 'b', which node 'b' produces later in the list"));
    CHECK(contains(manifest_error("{\"nodes\": {}}"), "runs/ref/graph.json:1:11: \"nodes\" must be an array"));
    CHECK(contains(manifest_error("{\"nodes\": [], \"version\": 2}"), "\"version\" must be 1"));
    CHECK(contains(manifest_error("[]"), "runs/ref/graph.json:1:1: expected an object at the top level"));
    CHECK(contains(manifest_error("{\"nodes\": [{\"name\": \"a\"}], \"extra\": 1}"), "unknown top-level key \"extra\""));
}
} // TEST_SUITE("io")
