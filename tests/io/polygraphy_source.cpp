// Pins down io/polygraphy_source.hpp through run_directory: a Polygraphy JSON
// detected by content (any name), runner and iteration selection with
// '#RUNNER@N' and the note that states the choice, errors listing what the
// file holds, shapes read from the encoded header alone, a truncated or
// oversized .npy inside refused naming the file, runner and output, and both
// runners of one file compared against each other end to end (first
// divergence and metric values).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <numgap/compare/compare_runs.hpp>
#include <numgap/graph/basic_graph.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/run_directory.hpp>
#include <numgap/metric/metric_set.hpp>

#include "end_to_end.hpp"
#include "polygraphy_builder.hpp"
#include "safetensors_builder.hpp"
#include "temp_directory.hpp"

using numgap::io::run_directory;
using numgap_test::contains;
using numgap_test::error_of;
using numgap_test::iteration_result;
using numgap_test::lazy_array;
using numgap_test::npy_of;

namespace {

float first(const numgap::io::loaded_tensor& tensor) { return *static_cast<const float*>(tensor.view().data()); }

} // namespace

TEST_SUITE("io") {
TEST_CASE("polygraphy runs: detected by content, runner and iteration chosen by '#', the choice stated") {
    numgap_test::temp_directory dir;
    const std::string text = numgap_test::run_results(
        {{"onnxrt-runner", {iteration_result({{"b", lazy_array(npy_of({1.0f}))}, {"a", lazy_array(npy_of({2.0f, 3.0f}))}}, "o"),
                            iteration_result({{"b", lazy_array(npy_of({5.0f}))}}, "o")}},
         {"trt-runner", {iteration_result({{"b", lazy_array(npy_of({7.0f}))}}, "t")}}});
    const std::string file = dir.write("outputs.dat", text).string();

    const run_directory first_runner = run_directory::open(file);
    CHECK(first_runner.keys() == std::vector<std::string>{"a", "b"});
    CHECK(first(first_runner.load("b")) == 1.0f);
    CHECK(first_runner.load("a").view().shape(0) == 2);
    CHECK(first_runner.stored_shape("a") == std::vector<std::int64_t>{2});
    REQUIRE(first_runner.notes().size() == 1);
    CHECK(contains(first_runner.notes()[0], "read runner 'onnxrt-runner', iteration 0"));
    CHECK(contains(first_runner.notes()[0], "'trt-runner' (1 iteration)"));
    CHECK(first_runner.manifest().nodes.empty());

    CHECK(first(run_directory::open(file + "#onnxrt-runner@1").load("b")) == 5.0f);
    CHECK(run_directory::open(file + "#onnxrt-runner@1").keys() == std::vector<std::string>{"b"});
    CHECK(first(run_directory::open(file + "#trt-runner").load("b")) == 7.0f);
    CHECK(first(run_directory::open(file + "#@1").load("b")) == 5.0f);

    const std::string unknown = error_of([&] { (void)run_directory::open(file + "#tensorrt"); });
    CHECK(contains(unknown, "has no runner 'tensorrt'"));
    CHECK(contains(unknown, "'onnxrt-runner' (2 iterations), 'trt-runner' (1 iteration)"));
    CHECK(contains(error_of([&] { (void)run_directory::open(file + "#trt-runner@1"); }), "has no iteration 1"));
    CHECK(contains(error_of([&] { (void)run_directory::open(file).load("c"); }), "no such output of runner 'onnxrt-runner'"));

    // A selector on anything else is refused; a JSON that is not Polygraphy's is no run.
    const std::string safetensors =
        dir.write("x.safetensors", numgap_test::safetensors_file({{"x", "F32", "[1]", numgap_test::bytes_of<float>({1.0f})}}))
            .string();
    CHECK(run_directory::open(safetensors).keys() == std::vector<std::string>{"x"});
    CHECK(contains(error_of([&] { (void)run_directory::open(safetensors + "#r"); }),
                   "is neither a Polygraphy JSON, an ETDump nor a QNN raw output folder"));
    CHECK(contains(error_of([&] { (void)run_directory::open(dir / "missing.json#r"); }), "does not exist"));
    const std::string other = dir.write("other.json", R"({"nodes": []})").string();
    CHECK(contains(error_of([&] { (void)run_directory::open(other); }),
                   "nor a safetensors file, *.index.json, Polygraphy JSON, ETDump or ETDump manifest"));
}

TEST_CASE("polygraphy runs: a truncated or oversized .npy inside is refused naming the file, runner and output") {
    numgap_test::temp_directory dir;
    const std::string whole = npy_of({1.0f, 2.0f, 3.0f, 4.0f});
    std::string huge = npy_of({1.0f});
    const std::size_t shape_at = huge.find("(1,)");
    huge.replace(shape_at, 4, "(4611686018427387904,)"); // 2^62 elements: header stays padded to 64 bytes
    const std::string file =
        dir.write("out.json", numgap_test::run_results(
                                  {{"r", {iteration_result({{"cut", lazy_array(whole.substr(0, whole.size() - 3))},
                                                            {"huge", lazy_array(huge)},
                                                            {"bad", R"({"array": "QUJD*A=="})"}},
                                                           "r")}}}))
            .string();
    const run_directory run = run_directory::open(file);
    const std::string cut = error_of([&] { (void)run.load("cut"); });
    CHECK(contains(cut, "runner 'r', output 'cut'"));
    CHECK(contains(cut, "truncated"));
    const std::string oversized = error_of([&] { (void)run.load("huge"); });
    CHECK(contains(oversized, "runner 'r', output 'huge'"));
    const std::string bad = error_of([&] { (void)run.load("bad"); });
    CHECK(contains(bad, file));
    CHECK(contains(bad, "invalid base64"));
    CHECK(run.stored_shape("bad") == std::nullopt);
}

TEST_CASE("polygraphy runs: both runners of one file compared against each other through compare_runs") {
    numgap_test::temp_directory dir;
    // The reference runner (onnxrt) and the target (trt): x equal, a off by one unit in the last
    // place in one element (2^-21 at 4.0, within every default threshold), b negated.
    const auto runner = [](float da, float sign) {
        return std::vector<std::string>{iteration_result({{"x", lazy_array(npy_of({1.0f, -2.0f, 1.5f}))},
                                                          {"a", lazy_array(npy_of({0.5f, 4.0f + da, -1.0f}))},
                                                          {"b", lazy_array(npy_of({sign * 1.0f, sign * 2.0f, sign * 3.0f}))}},
                                                         "r")};
    };
    const std::string file =
        dir.write("out.json", numgap_test::run_results({{"onnxrt-runner", runner(0.0f, 1.0f)}, {"trt-runner", runner(0x1p-21f, -1.0f)}}))
            .string();
    const numgap::metric_set metrics = numgap_test::defaults_and_max_abs();
    const numgap::basic_graph graph = numgap_test::chain_x_a_b();
    const run_directory reference = run_directory::open(file + "#onnxrt-runner");
    const run_directory target = run_directory::open(file + "#trt-runner");
    const auto report = numgap::compare_runs(graph, graph, reference, target, metrics);
    REQUIRE(report.groups.size() == 3);
    const auto max_abs = [&](const std::string& node) { return numgap_test::metric_value(report, node, "max_abs"); };
    CHECK(max_abs("x") == 0.0);
    CHECK(max_abs("a") == 0x1p-21);
    CHECK(max_abs("b") == 6.0);
    CHECK(report.summary.first_divergence == "b");
}
}
