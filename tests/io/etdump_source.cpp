// Pins down ETDump runs through run_directory and compare_runs
// (io/etdump_source.hpp): detection by content whatever the name, the debug
// buffer from read_policy, #run=N in the path, event order as the graph's
// order, delegate debug ids as debug handles; end to end, an ETDump target
// against a .npy reference by name and a safetensors target against an
// ETDump reference, checking first divergence and metric values.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <numgap/compare/compare_runs.hpp>
#include <numgap/compare/run_graph.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/open_run_source.hpp>
#include <numgap/io/run_directory.hpp>
#include <numgap/metric/max_abs.hpp>
#include <numgap/metric/metric_set.hpp>

#include "etdump_builder.hpp"
#include "safetensors_builder.hpp"
#include "temp_directory.hpp"

using numgap::io::run_directory;
using numgap_test::contains;
using numgap_test::error_of;
namespace et = numgap_test::etdump;

namespace {

double metric_of(const numgap::comparison_report& report, const std::string& reference_node, const std::string& name) {
    for (const auto& group : report.groups)
        if (group.reference_nodes == std::vector<std::string>{reference_node})
            if (const auto* metric = group.find_metric(name)) return metric->value;
    FAIL("no " << name << " for " << reference_node);
    return -1.0;
}

numgap::group_report group_of(const numgap::comparison_report& report, const std::string& reference_node) {
    for (const auto& group : report.groups)
        if (group.reference_nodes == std::vector<std::string>{reference_node}) return group;
    FAIL("no row for " << reference_node);
    return {};
}

numgap::metric_set with_max_abs() {
    numgap::metric_set metrics = numgap::metric_set::defaults();
    metrics.add(numgap::max_abs{});
    return metrics;
}

numgap::io::read_policy with_buffer(const std::filesystem::path& buffer) {
    numgap::io::read_policy policy;
    policy.debug_buffer = buffer;
    return policy;
}

} // namespace

TEST_SUITE("io") {

TEST_CASE("etdump runs: detected by content, buffer from the policy, #run=N, graph in event order") {
    numgap_test::temp_directory directory;
    et::debug_buffer buffer;
    const auto first = buffer.add(std::vector<float>{1.0f, 2.0f});
    const auto second = buffer.add(std::vector<float>{3.0f});
    const auto dump = et::file(
        {et::run_data("warmup", {et::debug_event({.name = "x"}, et::tensor_value(et::tensor(et::float32, {2}, first)))}),
         et::run_data("measured", {et::debug_event({.name = "z"}, et::tensor_value(et::tensor(et::float32, {1}, second))),
                                   et::debug_event({.delegate_int = 9},
                                                   et::tensor_value(et::tensor(et::float32, {2}, first)))})});
    // Named neither .etdp nor anything else telling: the content decides.
    const auto dump_path = directory.write("dump.data", dump);
    const auto buffer_path = directory.write("debug.bin", buffer.bytes());
    CHECK(numgap::io::detect_run_source(dump_path) == numgap::io::run_source_kind::etdump);
    CHECK(numgap::io::is_etdump_run(directory / "dump.data#run=1"));
    CHECK_FALSE(numgap::io::is_etdump_run(buffer_path));
    CHECK(contains(error_of([&] { (void)numgap::io::detect_run_source(buffer_path); }), "or ETDump manifest)"));
    CHECK(contains(error_of([&] { (void)run_directory::open(dump_path.string() + "#onnxrt", with_buffer(buffer_path)); }),
                   "the selector must be #run=N"));

    CHECK(contains(error_of([&] { (void)run_directory::open(dump_path, with_buffer(buffer_path)); }),
                   "holds 2 runs; choose one by appending #run=N"));
    const run_directory run = run_directory::open(directory / "dump.data#run=1", with_buffer(buffer_path));
    CHECK(run.keys() == std::vector<std::string>{"delegate_9", "z"});
    REQUIRE(run.notes().size() == 1);
    CHECK(contains(run.notes()[0], "read run #run=1 'measured' of 2, 2 tensors from 2 debug events"));
    CHECK(run.load("z").view().type() == numgap::dtype::float32);
    CHECK(run.load("z").view().name() == "z");
    CHECK(*run.stored_shape("delegate_9") == std::vector<std::int64_t>{2});
    CHECK(contains(error_of([&] { (void)run.load("x"); }), "no debug event of the ETDump's run"));

    // The graph: event order, not key order; the integer delegate id is a debug handle.
    const numgap::basic_graph graph = numgap::run_graph(run);
    REQUIRE(graph.num_nodes() == 2);
    CHECK(graph.node_name(0) == "z");
    CHECK(graph.node_name(1) == "delegate_9");
    CHECK(std::vector<std::int64_t>(graph.debug_handles(1).begin(), graph.debug_handles(1).end()) ==
          std::vector<std::int64_t>{9});

    // Without the debug buffer, the run is refused and the message says which flag gives it.
    CHECK(contains(error_of([&] { (void)run_directory::open(directory / "dump.data#run=1"); }), "--debug-buffer FILE"));
    CHECK(contains(error_of([&] { (void)run_directory::open(dump_path.string() + "#run=1", with_buffer(directory / "nope.bin")); }),
                   "cannot open debug buffer"));
}

TEST_CASE("etdump runs: an overlay graph.json next to the ETDump adds quantization and keeps the event graph") {
    numgap_test::temp_directory directory;
    et::debug_buffer buffer;
    const auto raw = buffer.add(std::vector<std::uint8_t>{128, 130, 126});
    const auto dump = et::file({et::run_data(
        "r", {et::debug_event({.name = "q_out"}, et::tensor_value(et::tensor(et::uint8, {3}, raw))),
              et::debug_event({.name = "later"}, et::tensor_value(et::tensor(et::uint8, {3}, raw)))})});
    directory.write("graph.json", R"({"tensors": {"q_out": {"scale": 0.5, "zero_point": 128}}})");
    const run_directory run =
        run_directory::open(directory.write("qnn.etdp", dump), with_buffer(directory.write("debug.bin", buffer.bytes())));
    const numgap::io::loaded_tensor q_out = run.load("q_out");
    REQUIRE(q_out.view().is_quantized());
    CHECK(q_out.view().quant().scale == 0.5f);
    CHECK(q_out.view().quant().zero_point == 128);
    const numgap::basic_graph graph = numgap::run_graph(run);
    REQUIRE(graph.num_nodes() == 2);
    CHECK(graph.node_name(0) == "q_out");
    CHECK(graph.node_name(1) == "later");

    directory.write("graph.json", R"({"tensors": {"q_out": {"dtype": "int8"}}})");
    const run_directory wrong =
        run_directory::open(directory / "qnn.etdp", with_buffer(directory / "debug.bin"));
    CHECK(contains(error_of([&] { (void)wrong.load("q_out"); }), "the overlay gives dtype int8 but ETDump"));
}

TEST_CASE("etdump runs: an ETDump target against a .npy reference, by name") {
    numgap_test::temp_directory reference_dir, target_dir;
    const std::vector<float> x = {1.0f, -2.0f, 0.5f, 4.0f}, conv = {0.25f, 1.0f, -3.0f, 2.0f}, relu = {0.25f, 1.0f, 0.0f, 2.0f};
    for (const auto& [key, values] : {std::pair{"x", x}, std::pair{"conv", conv}, std::pair{"relu", relu}})
        numgap::io::write_npy(reference_dir / (std::string(key) + ".npy"), values.data(), std::vector<std::int64_t>{2, 2});
    reference_dir.write("graph.json", R"({"nodes": [{"name": "x"}, {"name": "conv", "inputs": ["x"]},
                                                   {"name": "relu", "inputs": ["conv"]}]})");
    // The target's conv is off by 0.5 in one element (and relu follows): conv is the first divergence.
    et::debug_buffer buffer;
    const auto x_at = buffer.add(x);
    const auto conv_at = buffer.add(std::vector<float>{0.25f, 1.0f, -3.0f, 2.5f});
    const auto relu_at = buffer.add(std::vector<float>{0.25f, 1.0f, 0.0f, 2.5f});
    const auto dump = et::file({et::run_data(
        "forward", {et::debug_event({.name = "x", .instruction = 0}, et::tensor_value(et::tensor(et::float32, {2, 2}, x_at))),
                    et::debug_event({.name = "conv", .instruction = 1},
                                    et::tensor_value(et::tensor(et::float32, {2, 2}, conv_at))),
                    et::debug_event({.name = "relu", .instruction = 2},
                                    et::tensor_value(et::tensor(et::float32, {2, 2}, relu_at), true))})});
    const run_directory reference = run_directory::open(reference_dir.path());
    const run_directory target =
        run_directory::open(target_dir.write("run.etdp", dump), with_buffer(target_dir.write("debug.bin", buffer.bytes())));
    const auto report = numgap::compare_runs(numgap::run_graph(reference), numgap::run_graph(target), reference, target,
                                             with_max_abs());
    REQUIRE(report.groups.size() == 3);
    CHECK(group_of(report, "x").strategy == "name");
    CHECK(metric_of(report, "x", "max_abs") == 0.0);
    CHECK(metric_of(report, "conv", "max_abs") == 0.5);
    CHECK(metric_of(report, "relu", "max_abs") == 0.5);
    CHECK(metric_of(report, "conv", "mse") == doctest::Approx(0.0625));
    CHECK(report.summary.failed == 2);
    CHECK(report.summary.first_divergence == "conv");
}

TEST_CASE("etdump runs: a safetensors target against an ETDump reference; event order decides first divergence") {
    numgap_test::temp_directory reference_dir, target_dir;
    // Events run "z_first" then "a_second": sorted keys would put a_second first.
    et::debug_buffer buffer;
    const auto z_at = buffer.add(std::vector<std::uint16_t>{0x3F80, 0x4000}); // bf16 1, 2
    const auto a_at = buffer.add(std::vector<float>{1.0f, 2.0f, 3.0f});
    const auto dump = et::file({et::run_data(
        "forward", {et::debug_event({.name = "z_first"}, et::tensor_value(et::tensor(et::bfloat16, {2}, z_at))),
                    et::debug_event({.name = "a_second"}, et::tensor_value(et::tensor(et::float32, {3}, a_at)))})});
    const run_directory reference =
        run_directory::open(reference_dir.write("ref.etdp", dump), with_buffer(reference_dir.write("ref.bin", buffer.bytes())));
    // Both differ in the target; z_first by 0.25, a_second by 2.
    target_dir.write("t.safetensors",
                     numgap_test::safetensors_file(
                         {{"a_second", "F32", "[3]", numgap_test::bytes_of<float>({1.0f, 2.0f, 5.0f})},
                          {"z_first", "F32", "[2]", numgap_test::bytes_of<float>({1.25f, 2.0f})}}));
    const run_directory target = run_directory::open(target_dir / "t.safetensors");
    const auto report = numgap::compare_runs(numgap::run_graph(reference), numgap::run_graph(target), reference, target,
                                             with_max_abs());
    REQUIRE(report.groups.size() == 2);
    CHECK(group_of(report, "z_first").dtype_reference == numgap::dtype::bfloat16);
    CHECK(metric_of(report, "z_first", "max_abs") == 0.25);
    CHECK(metric_of(report, "a_second", "max_abs") == 2.0);
    CHECK(report.summary.failed == 2);
    CHECK(report.summary.first_divergence == "z_first");
}

TEST_CASE("etdump runs: integer delegate debug ids match a reference graph's debug handles") {
    numgap_test::temp_directory reference_dir, target_dir;
    const std::vector<float> values = {1.0f, 2.0f};
    numgap::io::write_npy(reference_dir / "conv_out.npy", values.data(), std::vector<std::int64_t>{2});
    reference_dir.write("graph.json", R"({"nodes": [{"name": "conv", "outputs": ["conv_out"], "debug_handles": [17]}]})");
    et::debug_buffer buffer;
    const auto at = buffer.add(std::vector<float>{1.0f, 2.5f});
    const auto dump = et::file(
        {et::run_data("r", {et::debug_event({.delegate_int = 17}, et::tensor_value(et::tensor(et::float32, {2}, at)))})});
    const run_directory reference = run_directory::open(reference_dir.path());
    const run_directory target =
        run_directory::open(target_dir.write("t.etdp", dump), with_buffer(target_dir.write("t.bin", buffer.bytes())));
    const auto report = numgap::compare_runs(numgap::run_graph(reference), numgap::run_graph(target), reference, target,
                                             with_max_abs());
    REQUIRE(report.groups.size() == 1);
    CHECK(report.groups[0].strategy == "handle");
    CHECK(report.groups[0].target_nodes == std::vector<std::string>{"delegate_17"});
    CHECK(metric_of(report, "conv", "max_abs") == 0.5);
}

} // TEST_SUITE
