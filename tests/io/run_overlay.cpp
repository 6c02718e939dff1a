// Pins down io/run_overlay.hpp: a graph.json next to a container run (here a
// Polygraphy JSON) or given with it (a safetensors file) adds the graph and
// per-tensor dtype, quantization and axis order to the container's keys; an
// entry for a key the container lacks is a missing tensor; an entry naming a
// file, a contradicting dtype, and an overlay given for a directory are
// errors naming the overlay and key.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <numgap/core/dtype.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/run_directory.hpp>

#include "polygraphy_builder.hpp"
#include "safetensors_builder.hpp"
#include "temp_directory.hpp"

using numgap::io::run_directory;
using numgap_test::contains;
using numgap_test::error_of;

TEST_SUITE("io") {
TEST_CASE("run overlay: a graph.json next to a Polygraphy JSON gives its graph, quantization, bfloat16 and layout") {
    numgap_test::temp_directory dir;
    std::string q = numgap::io::detail::npy_preamble(numgap::dtype::uint8, std::vector<std::int64_t>{1, 2, 3});
    q += "\x01\x02\x03\x04\x05\x06";
    std::string bf16 = numgap::io::detail::npy_preamble(numgap::dtype::bfloat16, std::vector<std::int64_t>{2}); // '<V2'
    bf16 += std::string("\x80\x3f\x00\x40", 4); // 1.0, 2.0
    dir.write("out.json", numgap_test::run_results(
                              {{"qnn", {numgap_test::iteration_result({{"q", numgap_test::plain_array(q)},
                                                                       {"h", numgap_test::plain_array(bf16)}},
                                                                      "qnn")}}}));
    // Without the overlay the opaque '<V2' payload cannot be read.
    CHECK(contains(error_of([&] { (void)run_directory::open(dir / "out.json").load("h"); }), "bfloat16"));
    dir.write("graph.json", R"({"nodes": [{"name": "h", "inputs": ["x"]}, {"name": "q", "inputs": ["h"]},
                                          {"name": "never", "inputs": ["q"]}],
                                "tensors": {"q": {"dtype": "uint8", "scale": 0.5, "zero_point": 2, "axis_order": [0, 2, 1]},
                                            "h": {"dtype": "bfloat16"},
                                            "never": {"scale": 0.25, "zero_point": 0}}})");
    const run_directory run = run_directory::open(dir / "out.json");
    REQUIRE(run.manifest().nodes.size() == 3);
    CHECK(run.manifest().nodes[1].inputs == std::vector<std::string>{"h"});
    CHECK(run.keys() == std::vector<std::string>{"h", "q"}); // "never" was not dumped: missing
    CHECK_FALSE(run.contains("never"));
    const numgap::io::loaded_tensor quantized = run.load("q");
    CHECK(quantized.view().quant().scale == 0.5f);
    CHECK(quantized.view().quant().zero_point == 2);
    CHECK(quantized.view().has_axis_order());
    CHECK(run.stored_shape("q") == std::vector<std::int64_t>{1, 3, 2});
    CHECK(run.load("h").view().type() == numgap::dtype::bfloat16);
    REQUIRE(run.notes().size() == 2);
    CHECK(contains(run.notes()[1], "graph and tensor metadata from the overlay"));
}

TEST_CASE("run overlay: given explicitly for a safetensors file; files, wrong dtypes and directories refused") {
    numgap_test::temp_directory dir;
    dir.write("w/model.bin", numgap_test::safetensors_file({{"q", "U8", "[4]", numgap_test::bytes_of<std::uint8_t>({0, 1, 2, 3})}}));
    const auto overlay = dir.write("meta.json", R"({"tensors": {"q": {"scale": 2.0, "zero_point": 1}}})");
    const run_directory run = run_directory::open(dir / "w/model.bin", {}, overlay);
    CHECK(run.load("q").view().quant().scale == 2.0f);
    CHECK(run.manifest().has_graph);

    dir.write("bad_file.json", R"({"tensors": {"q": {"file": "q.raw", "dtype": "uint8", "shape": [4]}}})");
    const std::string named = error_of([&] { (void)run_directory::open(dir / "w/model.bin", {}, dir / "bad_file.json"); });
    CHECK(contains(named, "bad_file.json"));
    CHECK(contains(named, "tensor 'q' names file 'q.raw'"));
    dir.write("bad_dtype.json", R"({"tensors": {"q": {"dtype": "int8"}}})");
    CHECK(contains(error_of([&] { (void)run_directory::open(dir / "w/model.bin", {}, dir / "bad_dtype.json").load("q"); }),
                   "graph.json gives dtype int8"));
    dir.write("bad_schema.json", R"({"tensors": {"q": {"zero_pont": 1}}})");
    CHECK(contains(error_of([&] { (void)run_directory::open(dir / "w/model.bin", {}, dir / "bad_schema.json"); }),
                   "bad_schema.json:1:"));
    CHECK(contains(error_of([&] { (void)run_directory::open(dir / "w", {}, overlay); }), "is a directory"));
}

TEST_CASE("run overlay: block quantization of a container's key is carried, with the scales taken from another key") {
    numgap_test::temp_directory dir;
    // int8 codes 1..4 in one block of 4, scale 0.5 from the key "w_s".
    dir.write("m.safetensors",
              numgap_test::safetensors_file({{"w", "I8", "[1, 4]", numgap_test::bytes_of<std::int8_t>({1, 2, 3, 4})},
                                             {"w_s", "F32", "[1, 1]", numgap_test::bytes_of<float>({0.5f})}}));
    const auto overlay = dir.write("meta.json", R"({"tensors": {"w": {"block": {"size": 4, "scales": "w_s"}}}})");
    const auto w = run_directory::open(dir / "m.safetensors", {}, overlay).load("w");
    REQUIRE(w.view().quant().per_block());
    CHECK(w.view().quant().block_size == 4);
    CHECK(std::vector<float>(w.view().quant().scales.begin(), w.view().quant().scales.end()) == std::vector<float>{0.5f});
}
}
