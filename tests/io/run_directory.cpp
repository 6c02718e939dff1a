// Pins down run directories: key discovery (nested .npy, .npz members, graph.json
// entries), raw files, layout and quantization from graph.json, zero-copy vs
// realigned vs inflated data, missing keys, every open/load error naming the
// run, key and file, and write_npy -> load round trips.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <numgap/core/float_mx.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/read_policy.hpp>
#include <numgap/io/directory_source.hpp>
#include <numgap/io/run_directory.hpp>
#include <numgap/io/truncation_guard.hpp>
#include <numgap/kernels/plan/validate_pair.hpp>

#include "temp_directory.hpp"
#include "zip_builder.hpp"

using numgap::dtype;
using numgap::io::loaded_tensor;
using numgap::io::run_directory;
using numgap_test::contains;
using numgap_test::error_of;

namespace {

template <class T>
T at(const numgap::tensor_view& view, std::int64_t element) {
    T value;
    std::memcpy(&value, static_cast<const std::byte*>(view.data()) + element * std::int64_t(sizeof(T)), sizeof(T));
    return value;
}

void write_floats(const std::filesystem::path& file, std::vector<float> values, std::vector<std::int64_t> shape) {
    std::filesystem::create_directories(file.parent_path());
    numgap::io::write_npy(file, values.data(), shape);
}

bool aligned(const numgap::tensor_view& view) {
    return reinterpret_cast<std::uintptr_t>(view.data()) % numgap::size_of(view.type()) == 0;
}

} // namespace

TEST_SUITE("io") {
TEST_CASE("run_directory: discovers nested npy files without graph json") {
    numgap_test::temp_directory run;
    write_floats(run / "x.npy", {1, 2, 3}, {3});
    write_floats(run / "block1/conv.npy", {4, 5}, {2});
    write_floats(run / "block1/deeper/relu.npy", {6}, {1});
    run.write("notes.txt", "not a tensor");
    const run_directory dir = run_directory::open(run.path());
    CHECK(dir.path() == run.path());
    CHECK(dir.keys() == std::vector<std::string>{"block1/conv", "block1/deeper/relu", "x"});
    CHECK_FALSE(dir.manifest().has_graph);
    CHECK(dir.manifest().tensors.size() == 3);
    CHECK(dir.manifest().find_tensor("block1/conv")->file == "block1/conv.npy");
    CHECK(dir.contains("x"));
    CHECK_FALSE(dir.contains("notes"));
    std::uint64_t sizes = 0;
    for (const char* f : {"x.npy", "block1/conv.npy", "block1/deeper/relu.npy"})
        sizes += std::filesystem::file_size(run / f);
    CHECK(dir.total_bytes() == sizes);
    const loaded_tensor conv = dir.load("block1/conv");
    CHECK(conv.key() == "block1/conv");
    CHECK(conv.file() == "block1/conv.npy");
    CHECK(conv.view().name() == "block1/conv");
    CHECK(at<float>(conv.view(), 1) == 5.0f);
    CHECK_FALSE(conv.view().is_quantized());
    CHECK_FALSE(conv.view().has_axis_order());
}

TEST_CASE("run_directory: loaded tensor survives moves") {
    numgap_test::temp_directory run;
    write_floats(run / "k.npy", {7, 8}, {2});
    const run_directory dir = run_directory::open(run.path());
    std::vector<loaded_tensor> kept;
    for (int i = 0; i < 20; ++i) kept.push_back(dir.load("k")); // reallocation moves them
    loaded_tensor moved = std::move(kept.front());
    CHECK(moved.view().name() == "k");
    CHECK(at<float>(moved.view(), 1) == 8.0f);
    CHECK(kept.back().view().name() == "k");
}

TEST_CASE("run_directory: small files are read into memory, larger ones mapped, with the same values") {
    // Up to directory_source::small_file_limit one pread copies the file:
    // cheaper than a mapping for a million tiny tensors. Changing the file
    // afterwards cannot change the loaded values.
    numgap_test::temp_directory run;
    const std::size_t small_elements = 16, large_elements = 4096; // 192 bytes and 16 KiB with the header
    static_assert(4096 * 4 > numgap::io::directory_source::small_file_limit);
    std::vector<float> small(small_elements), large(large_elements);
    for (std::size_t i = 0; i < large.size(); ++i) large[i] = float(i) * 0.5f - 3.0f;
    for (std::size_t i = 0; i < small.size(); ++i) small[i] = large[i];
    write_floats(run / "small.npy", small, {std::int64_t(small.size())});
    write_floats(run / "large.npy", large, {std::int64_t(large.size())});
    const run_directory dir = run_directory::open(run.path());
    const loaded_tensor small_tensor = dir.load("small");
    const loaded_tensor large_tensor = dir.load("large");
    CHECK(aligned(small_tensor.view()));
    for (std::size_t i = 0; i < small.size(); ++i) CHECK(at<float>(small_tensor.view(), std::int64_t(i)) == small[i]);
    for (std::size_t i = 0; i < large.size(); i += 511) CHECK(at<float>(large_tensor.view(), std::int64_t(i)) == large[i]);
    // Cut to nothing in place after the load: a mapping would now read zeros
    // (the guard turns the fault into that) and check_intact would throw.
    REQUIRE(numgap::io::install_truncation_guard());
    REQUIRE(::truncate((run / "small.npy").c_str(), 0) == 0);
    CHECK(at<float>(small_tensor.view(), 3) == small[3]);
    CHECK_NOTHROW(small_tensor.check_intact());
    CHECK_THROWS_AS((void)dir.load("small"), numgap::error); // the file itself is now empty
}

TEST_CASE("run_directory: graph json raw files layout and quantization") {
    numgap_test::temp_directory run;
    // NHWC uint8 storage of an NCHW tensor, per-tensor quantized.
    std::string raw;
    for (int i = 0; i < 2 * 3 * 4; ++i) raw += char(i);
    run.write("out/conv1.raw", raw);
    // Per-channel int8 weights as .npy, channels on stored dimension 0.
    const std::array<std::int8_t, 6> weights{1, 2, 3, 4, 5, 6};
    numgap::io::write_npy(run / "w.npy", numgap::tensor_view(weights.data(), {3, 2}));
    run.write("graph.json", R"({
  "nodes": [{"name": "conv1", "inputs": ["x", "w"]}],
  "tensors": {
    "conv1": {"file": "out/conv1.raw", "dtype": "uint8", "shape": [1, 2, 3, 4],
              "axis_order": [0, 2, 3, 1], "scale": 0.0235, "zero_point": 128},
    "w": {"scale": [0.5, 0.25, 0.125], "zero_point": [0, 1, -1], "quant_axis": 0}
  }
})");
    const run_directory dir = run_directory::open(run.path());
    CHECK(dir.manifest().has_graph);
    CHECK(dir.manifest().nodes.size() == 1);
    CHECK(dir.keys() == std::vector<std::string>{"conv1", "w"});
    CHECK_FALSE(dir.contains("x")); // listed by a node, no file: missing, not an error

    const loaded_tensor conv = dir.load("conv1");
    const numgap::tensor_view& view = conv.view();
    CHECK(view.type() == dtype::uint8);
    CHECK(view.rank() == 4);
    CHECK(view.shape(3) == 4);
    CHECK(at<std::uint8_t>(view, 23) == 23);
    REQUIRE(view.has_axis_order());
    CHECK(std::vector<std::int8_t>(view.axis_order().begin(), view.axis_order().end()) ==
          std::vector<std::int8_t>{0, 2, 3, 1});
    REQUIRE(view.is_quantized());
    CHECK_FALSE(view.quant().per_channel());
    CHECK(view.quant().scale == 0.0235f);
    CHECK(view.quant().zero_point == 128);

    const loaded_tensor w = dir.load("w");
    REQUIRE(w.view().quant().per_channel());
    CHECK(w.view().quant().axis == 0);
    CHECK(std::vector<float>(w.view().quant().scales.begin(), w.view().quant().scales.end()) ==
          std::vector<float>{0.5f, 0.25f, 0.125f});
    CHECK(w.view().quant().zero_points[2] == -1);
    CHECK(at<std::int8_t>(w.view(), 5) == 6);

    const std::string missing = error_of([&] { (void)dir.load("x"); });
    CHECK(contains(missing, run.path().string()));
    CHECK(contains(missing, "has no tensor 'x'"));
    CHECK(contains(missing, "no \"tensors\" entry in graph.json"));

    // Once the graph is built, the node list may go; the tensors stay loadable as before.
    run_directory released = run_directory::open(run.path());
    released.release_nodes();
    CHECK(released.manifest().nodes.empty());
    CHECK(released.manifest().has_graph);
    CHECK(released.keys() == std::vector<std::string>{"conv1", "w"});
    CHECK(at<std::uint8_t>(released.load("conv1").view(), 23) == 23);
    CHECK(released.load("w").view().quant().per_channel());
}

TEST_CASE("run_directory: find_tensor answers as the manifest's binary search does, also after a move") {
    numgap_test::temp_directory run;
    std::string tensors;
    for (int i = 0; i < 300; ++i) {
        const std::string key = "t" + std::to_string(i * 7 % 300); // files written out of key order
        write_floats(run / ("dump/" + key + ".npy"), {float(i)}, {1});
        tensors += std::string(i == 0 ? "" : ", ") + "\"" + key + "\": {\"file\": \"dump/" + key + ".npy\"}";
    }
    run.write("graph.json", "{\"tensors\": {" + tensors + "}}");
    run_directory opened = run_directory::open(run.path());
    const run_directory moved = std::move(opened);
    REQUIRE(moved.manifest().tensors.size() == 300);
    for (const numgap::io::tensor_spec& spec : moved.manifest().tensors) {
        CAPTURE(spec.key);
        CHECK(moved.find_tensor(spec.key) == moved.manifest().find_tensor(spec.key));
        CHECK(moved.find_tensor(spec.key) == &spec);
        CHECK(moved.contains(spec.key));
    }
    for (const char* absent : {"", "t", "t300", "t-1", "t00", "dump/t1.npy"}) {
        CAPTURE(absent);
        CHECK(moved.find_tensor(absent) == nullptr);
        CHECK(!moved.contains(absent));
    }
}

TEST_CASE("run_directory: entries rekey files and conflicts are errors") {
    numgap_test::temp_directory run;
    write_floats(run / "dump/t0001.npy", {1}, {1});
    run.write("graph.json", R"({"tensors": {"relu": {"file": "dump/t0001.npy"}}})");
    const run_directory dir = run_directory::open(run.path());
    CHECK(dir.keys() == std::vector<std::string>{"relu"});
    CHECK(at<float>(dir.load("relu").view(), 0) == 1.0f);

    write_floats(run / "relu.npy", {2}, {1});
    const std::string conflict = error_of([&] { (void)run_directory::open(run.path()); });
    CHECK(contains(conflict, "graph.json"));
    CHECK(contains(conflict, "tensor 'relu' is mapped to file 'dump/t0001.npy', but 'relu.npy' also exists"));
}

TEST_CASE("run_directory: open errors name the run and the cause") {
    numgap_test::temp_directory run;
    CHECK(contains(error_of([&] { (void)run_directory::open(run / "nope"); }), "nope' does not exist"));
    run.write("file.txt", "x");
    CHECK(contains(error_of([&] { (void)run_directory::open(run / "file.txt"); }),
                   "file.txt' is neither a directory nor an .npz file"));

    numgap_test::temp_directory bad_json;
    bad_json.write("graph.json", "{\n  \"nodes\": [\n    {\"name\": \"a\"}\n    {\"name\": \"b\"}\n  ]\n}");
    const std::string syntax = error_of([&] { (void)run_directory::open(bad_json.path()); });
    CHECK(contains(syntax, (bad_json / "graph.json").string() + ":4:5: expected ',' or ']' after array element"));

    numgap_test::temp_directory missing_file;
    missing_file.write("graph.json", R"({"tensors": {"conv1": {"file": "out/conv1.raw", "dtype": "uint8", "shape": [4]}}})");
    const std::string absent = error_of([&] { (void)run_directory::open(missing_file.path()); });
    CHECK(contains(absent, "graph.json: tensor 'conv1': file 'out/conv1.raw' does not exist in run"));
    // An entry without "file" whose default conv1.npy is absent is a tensor that
    // was not dumped, not a broken run (this used to be an open() error).
    missing_file.write("graph.json", R"({"tensors": {"conv1": {}}})");
    CHECK_FALSE(run_directory::open(missing_file.path()).contains("conv1"));
    std::filesystem::create_directories(missing_file / "dir.npy");
    missing_file.write("graph.json", R"({"tensors": {"d": {"file": "dir.npy"}}})");
    CHECK(contains(error_of([&] { (void)run_directory::open(missing_file.path()); }),
                   "tensor 'd': file 'dir.npy' is not a regular file in run"));
}

TEST_CASE("run_directory: entry with default file that was not dumped is missing not an error") {
    // graph.json gives only layout/quantization for "a" and "b"; only a.npy was
    // dumped. open() must succeed: b is simply not contained (the compare layer
    // reports it missing), while an explicit "file" that is absent still fails.
    numgap_test::temp_directory run;
    write_floats(run / "a.npy", {1, 2, 3, 4, 5, 6}, {2, 3});
    write_floats(run / "c.npy", {7, 8}, {2});
    run.write("graph.json", R"({"nodes": [{"name": "a"}, {"name": "b", "inputs": ["a"]}],
      "tensors": {"a": {"axis_order": [1, 0]}, "b": {"scale": 0.5, "zero_point": 0},
                  "n/deep": {"axis_order": [0]}}})");
    const run_directory opened = run_directory::open(run.path());
    CHECK(opened.contains("a"));
    CHECK_FALSE(opened.contains("b"));
    CHECK_FALSE(opened.contains("n/deep"));
    CHECK(opened.contains("c"));
    CHECK(opened.keys() == std::vector<std::string>{"a", "c"});
    const loaded_tensor a = opened.load("a");
    CHECK(a.view().has_axis_order()); // the entry's layout still applies
    CHECK(contains(error_of([&] { (void)opened.load("b"); }), "has no tensor 'b'"));

    run.write("graph.json", R"({"tensors": {"b": {"file": "dumps/b.npy", "scale": 0.5, "zero_point": 0}}})");
    CHECK(contains(error_of([&] { (void)run_directory::open(run.path()); }),
                   "tensor 'b': file 'dumps/b.npy' does not exist in run"));
}

TEST_CASE("run_directory: load errors name run key file and reason") {
    numgap_test::temp_directory run;
    run.write("short.raw", std::string(10, '\0'));
    run.write("noheader.bin", std::string(8, '\0'));
    write_floats(run / "f.npy", {1, 2, 3, 4, 5, 6}, {2, 3});
    const std::array<std::int8_t, 6> q{1, 2, 3, 4, 5, 6};
    numgap::io::write_npy(run / "q.npy", numgap::tensor_view(q.data(), {2, 3}));
    // A truncated .npy: the header promises 6 floats, 20 bytes of data remain.
    std::vector<std::byte> truncated = numgap_test::read_bytes(run / "f.npy");
    truncated.resize(truncated.size() - 4);
    run.write("cut.npy", truncated);
    run.write("graph.json", R"({"tensors": {
      "short": {"file": "short.raw", "dtype": "float32", "shape": [3]},
      "noheader": {"file": "noheader.bin", "dtype": "int8"},
      "shape_mismatch": {"file": "f.npy", "shape": [3, 2]},
      "dtype_mismatch": {"file": "f.npy", "dtype": "int32"},
      "float_scaled": {"file": "f.npy", "scale": 0.5},
      "order_rank": {"file": "f.npy", "axis_order": [2, 1, 0]},
      "channels": {"file": "q.npy", "scale": [1, 2], "quant_axis": 1},
      "axis_rank": {"file": "q.npy", "scale": [1, 2], "quant_axis": 4}
    }})");
    const run_directory dir = run_directory::open(run.path());
    const auto load_error = [&](const std::string& key) { return error_of([&] { (void)dir.load(key); }); };

    const std::string size = load_error("short");
    CHECK(contains(size, "tensor 'short'"));
    CHECK(contains(size, "short.raw' has 10 bytes but shape (3,) of float32 needs 12"));
    CHECK(contains(load_error("noheader"), "noheader.bin' has no .npy header, so graph.json must give its \"dtype\" and \"shape\""));
    CHECK(contains(load_error("shape_mismatch"), "graph.json gives shape (3, 2) but '"));
    CHECK(contains(load_error("shape_mismatch"), "f.npy' stores shape (2, 3)"));
    CHECK(contains(load_error("dtype_mismatch"), "declares dtype int32 but the file stores float32"));
    CHECK(contains(load_error("float_scaled"), "stores float32, not an integer type"));
    CHECK(contains(load_error("order_rank"), "axis_order of 3 entries but"));
    CHECK(contains(load_error("channels"), "2 per-channel scales but dimension 1 of"));
    CHECK(contains(load_error("channels"), "has 3 channels"));
    CHECK(contains(load_error("axis_rank"), "quant_axis 4 but"));
    const std::string cut = load_error("cut");
    CHECK(contains(cut, "run '" + run.path().string() + "', tensor 'cut'"));
    CHECK(contains(cut, "cut.npy': truncated .npy file"));
    CHECK(contains(cut, "needs 24 bytes of data but the file has 20"));
}

TEST_CASE("run_directory: reads npz runs zero copy realigned and inflated") {
    const run_directory stored = run_directory::open(numgap_test::fixture("npz/stored.npz"));
    CHECK(stored.keys() == std::vector<std::string>{"a", "block/b", "c"});
    CHECK_FALSE(stored.manifest().has_graph);
    CHECK(stored.manifest().find_tensor("block/b")->file == "block/b.npy");
    const loaded_tensor a = stored.load("a");
    CHECK(aligned(a.view())); // the fixture's float data sits at an odd archive offset
    CHECK(a.view().shape(1) == 4);
    for (int i = 0; i < 12; ++i) CHECK(at<float>(a.view(), i) == float(i) * 0.5f - 2.0f);
    const loaded_tensor b = stored.load("block/b");
    CHECK(b.view().type() == dtype::int8);
    CHECK(at<std::int8_t>(b.view(), 0) == -4);
    const loaded_tensor c = stored.load("c");
    CHECK(c.view().rank() == 0);
    CHECK(at<float>(c.view(), 0) == 3.5f);
    CHECK(contains(error_of([&] { (void)stored.load("zz"); }), "has no tensor 'zz' (no member 'zz.npy')"));

    const run_directory compressed = run_directory::open(numgap_test::fixture("npz/compressed.npz"));
    CHECK(compressed.keys() == std::vector<std::string>{"big", "c", "small"});
    const loaded_tensor big = compressed.load("big");
    const std::vector<std::uint8_t> expected = numgap_test::lcg_bytes(65536);
    REQUIRE(big.view().size() == 65536);
    CHECK(std::memcmp(big.view().data(), expected.data(), expected.size()) == 0);
    CHECK(compressed.total_bytes() > 65536);
}

TEST_CASE("run_directory: write npy load round trip for every dtype") {
    numgap_test::temp_directory run;
    std::vector<std::byte> float4_data;
    const auto data_of_float4 = [&] { return float4_data.data(); };
    for (const dtype type : numgap::all_dtypes) {
        std::vector<std::byte> data(numgap::storage_bytes(type, 4 * 5));
        for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::byte(type == dtype::boolean ? i % 2 : i * 13 + 5);
        numgap::io::write_npy(run / (std::string(numgap::name_of(type)) + ".npy"),
                              numgap::tensor_view(data.data(), type, {4, 5}));
        if (type == dtype::float4_e2m1fn) float4_data = data;
    }
    // Written bfloat16 is '<V2' and the float8 types '|V1', readable once
    // declared (by canonical name or alias).
    run.write("graph.json", R"({"tensors": {"bfloat16": {"dtype": "bfloat16"},
        "float8_e4m3fn": {"dtype": "float8_e4m3fn"}, "float8_e5m2": {"dtype": "e5m2"},
        "float8_e8m0fnu": {"dtype": "F8_E8M0"}, "float6_e2m3fn": {"dtype": "float6_e2m3fn"},
        "float6_e3m2fn": {"dtype": "e3m2"}, "float4_e2m1fn": {"dtype": "float4_e2m1fn"}}})");
    const run_directory dir = run_directory::open(run.path());
    CHECK(dir.keys().size() == std::size(numgap::all_dtypes));
    for (const dtype type : numgap::all_dtypes) {
        CAPTURE(numgap::name_of(type));
        const loaded_tensor t = dir.load(std::string(numgap::name_of(type)));
        if (type == dtype::float4_e2m1fn) {
            // Written one code a byte as ml_dtypes does ('|V1'), packed again at load.
            CHECK(t.view().type() == type);
            CHECK(std::memcmp(t.view().data(), data_of_float4(), 10) == 0);
            continue;
        }
        if (numgap::is_packed(type)) {
            // NumPy has no packed type: written one element per byte (low nibble first, int4 sign-extended).
            CHECK(t.view().type() == (type == dtype::int4 ? dtype::int8 : dtype::uint8));
            for (std::int64_t e = 0; e < 20; ++e) {
                const int nibble = (((e / 2) * 13 + 5) >> (4 * (e % 2))) & 0xf;
                CHECK(int(at<std::int8_t>(t.view(), e)) == (type == dtype::int4 && nibble >= 8 ? nibble - 16 : nibble));
            }
            continue;
        }
        CHECK(t.view().type() == type);
        CHECK(t.view().shape(0) == 4);
        CHECK(t.view().shape(1) == 5);
        CHECK(aligned(t.view()));
        const auto* bytes = static_cast<const unsigned char*>(t.view().data());
        for (std::size_t i = 0; i < numgap::storage_bytes(type, 4 * 5); ++i)
            CHECK(bytes[i] == (type == dtype::boolean ? i % 2 : (i * 13 + 5) & 0xff));
    }
}

TEST_CASE("run_directory: packed int4 raw files and graph json block quantization from tensors and files of the run") {
    numgap_test::temp_directory run;
    // 2 x 5 int4 (odd row and count: 10 nibbles in 5 bytes) and 3 x 3 uint4 (9 nibbles in 5 bytes).
    run.write("w.raw", std::string("\x21\x43\x65\x87\xa9", 5));
    run.write("u.raw", std::string("\x10\x32\x54\x76\x08", 5));
    const std::array<float, 4> scales{0.5f, 0.25f, 2.0f, 4.0f};
    numgap::io::write_npy(run / "w_scales.npy", numgap::tensor_view(scales.data(), {2, 2}));
    const std::array<std::int32_t, 4> zero_points{0, 1, -1, 2};
    std::filesystem::create_directories(run / "params");
    numgap::io::write_npy(run / "params" / "w_zero.npy", numgap::tensor_view(zero_points.data(), {4}));
    const std::array<float, 3> column_scales{1.0f, 2.0f, 3.0f};
    numgap::io::write_npy(run / "u_scales.npy", numgap::tensor_view(column_scales.data(), {1, 3}));
    run.write("graph.json", R"({"tensors": {
    "w": {"file": "w.raw", "dtype": "i4", "shape": [2, 5],
          "block": {"size": 3, "axis": -1, "scales": "w_scales", "zero_points": "params/w_zero.npy"}},
    "u": {"file": "u.raw", "dtype": "uint4", "shape": [3, 3], "block": {"size": 32, "axis": 0, "scales": "u_scales.npy"}},
    "w_scales": {}
  }})");
    const run_directory dir = run_directory::open(run.path());
    const loaded_tensor w = dir.load("w");
    CHECK(w.view().type() == dtype::int4);
    REQUIRE(w.view().quant().per_block());
    CHECK(w.view().quant().block_size == 3);
    CHECK(w.view().quant().axis == -1);
    CHECK(std::vector<float>(w.view().quant().scales.begin(), w.view().quant().scales.end()) ==
          std::vector<float>{0.5f, 0.25f, 2.0f, 4.0f});
    CHECK(std::vector<std::int32_t>(w.view().quant().zero_points.begin(), w.view().quant().zero_points.end()) ==
          std::vector<std::int32_t>{0, 1, -1, 2});
    const loaded_tensor u = dir.load("u");
    CHECK(u.view().quant().block_size == 32); // larger than the axis: one block per column
    CHECK(u.view().quant().zero_points.empty());
    CHECK(u.view().size() == 9);

    // Hostile or mistaken entries, each refused with the tensor and the reason.
    auto load_error = [&](const std::string& tensors, const std::string& key) {
        run.write("graph.json", "{\"tensors\": {" + tensors + "}}");
        return error_of([&] { (void)run_directory::open(run.path()).load(key); });
    };
    const std::string raw_w = R"("w": {"file": "w.raw", "dtype": "int4", "shape": [2, 5], )";
    CHECK(contains(load_error(raw_w + R"("block": {"size": 2, "scales": "w_scales"}})", "w"),
                   "holds 4 values but blocks of 2 along axis -1 need 6"));
    CHECK(contains(load_error(raw_w + R"("block": {"size": 3, "scales": "nowhere.npy"}})", "w"), "nowhere.npy"));
    CHECK(contains(load_error(raw_w + R"("block": {"size": 3, "scales": "../w_scales.npy"}})", "w"), "../w_scales.npy"));
    CHECK(contains(load_error(raw_w + R"("block": {"size": 0, "scales": "w_scales"}})", "w"), "block size"));
    CHECK(contains(load_error(raw_w + R"("block": {"size": 3}})", "w"), "has no \"scales\""));
    CHECK(contains(load_error(raw_w + R"("block": {"size": 3, "scales": "w_scales", "scale": 1}})", "w"),
                   "unknown key \"scale\" in \"block\""));
    CHECK(contains(load_error(raw_w + R"("scale": 0.5, "block": {"size": 3, "scales": "w_scales"}})", "w"),
                   "per tensor, per channel or per block"));
    CHECK(contains(load_error(raw_w + R"("block": {"size": 3, "axis": 2, "scales": "w_scales"}})", "w"),
                   "not a dimension of shape of rank 2"));
    CHECK(contains(load_error(raw_w + R"("block": {"size": 3, "scales": "w"}})", "w"), "quantized itself"));
    CHECK(contains(load_error(R"("w": {"file": "w.raw", "dtype": "int4", "shape": [3, 5]})", "w"),
                   "has 5 bytes but shape (3, 5) of int4 needs 8"));
    CHECK(contains(load_error(R"("w": {"file": "w.raw", "dtype": "float32", "shape": [5], "block": {"size": 3, "scales": "w_scales"}})",
                              "w"),
                   "neither an integer type nor an MX element format"));
    // Block scales stored as float8 (e8m0: MX's power-of-two scales) are decoded, not read as 0.
    const std::array<numgap::float8_e8m0fnu, 4> e8m0_scales{{{126}, {127}, {128}, {130}}}; // 0.5, 1, 2, 8
    numgap::io::write_npy(run / "e8m0_scales.npy", numgap::tensor_view(e8m0_scales.data(), numgap::dtype::float8_e8m0fnu, {2, 2}));
    run.write("graph.json", "{\"tensors\": {" + raw_w + R"("block": {"size": 3, "scales": "e8m0_scales"}},
        "e8m0_scales": {"dtype": "float8_e8m0fnu"}}})");
    const loaded_tensor e8m0_scaled = run_directory::open(run.path()).load("w");
    CHECK(std::vector<float>(e8m0_scaled.view().quant().scales.begin(), e8m0_scaled.view().quant().scales.end()) ==
          std::vector<float>{0.5f, 1.0f, 2.0f, 8.0f});
    // ml_dtypes saves int4 one element per byte ('|V1'): refused, not paired wrongly as packed.
    const std::array<numgap::float8_e5m2, 4> one_per_byte{{{1}, {2}, {3}, {4}}};
    numgap::io::write_npy(run / "one_per_byte.npy", numgap::tensor_view(one_per_byte.data(), numgap::dtype::float8_e5m2, {4}));
    CHECK(contains(load_error(R"("one_per_byte": {"dtype": "int4"})", "one_per_byte"),
                   "holds one element per byte, but graph.json declares the packed dtype int4"));
    // A block size far beyond any axis is one block per row, not an overflow.
    CHECK(contains(load_error(raw_w + R"("block": {"size": 9223372036854775807, "scales": "w_scales"}})", "w"),
                   "holds 4 values but blocks of 9223372036854775807 along axis -1 need 2"));
}

TEST_CASE("run_directory: MX tensors (MXFP4, MXFP6, MXFP8) from graph json with e8m0 scales, and what is refused") {
    numgap_test::temp_directory run;
    // 2 x 64 float4_e2m1fn, packed (raw) and one code a byte as ml_dtypes saves it ('|V1').
    std::string packed(64, '\0');
    std::vector<std::uint8_t> unpacked(128);
    for (std::size_t e = 0; e < 128; ++e) {
        unpacked[e] = std::uint8_t((e * 7 + 3) % 16);
        packed[e / 2] = char(std::uint8_t(packed[e / 2]) | (unpacked[e] << (4 * (e % 2))));
    }
    run.write("w.raw", packed);
    numgap::io::write_npy(run / "w_unpacked.npy", numgap::tensor_view(unpacked.data(), dtype::uint8, {2, 64}));
    // Rewrite the descr as ml_dtypes' '|V1' (same length as '|u1').
    const std::vector<std::byte> written = numgap_test::read_bytes(run / "w_unpacked.npy");
    std::string file(reinterpret_cast<const char*>(written.data()), written.size());
    file.replace(file.find("|u1"), 3, "|V1");
    run.write("w_unpacked.npy", file);
    const std::array<numgap::float8_e8m0fnu, 4> e8m0{{{126}, {127}, {130}, {0xff}}}; // 0.5, 1, 8, NaN
    numgap::io::write_npy(run / "w_scales.npy", numgap::tensor_view(e8m0.data(), dtype::float8_e8m0fnu, {2, 2}));
    std::vector<std::uint8_t> six(128, 0x25);
    numgap::io::write_npy(run / "x.npy", numgap::tensor_view(six.data(), dtype::float6_e3m2fn, {2, 64}));
    run.write("graph.json", R"({"tensors": {
    "w": {"file": "w.raw", "dtype": "float4_e2m1fn", "shape": [2, 64], "block": {"size": 32, "scales": "w_scales"}},
    "w_unpacked": {"dtype": "float4_e2m1fn", "block": {"size": 32, "scales": "w_scales"}},
    "x": {"dtype": "F6_E3M2", "block": {"size": 32, "scales": "w_scales"}},
    "w_scales": {"dtype": "float8_e8m0fnu"}
  }})");
    const run_directory dir = run_directory::open(run.path());
    const loaded_tensor w = dir.load("w"), w_unpacked = dir.load("w_unpacked"), x = dir.load("x");
    for (const loaded_tensor* t : {&w, &w_unpacked}) {
        CHECK(t->view().type() == dtype::float4_e2m1fn);
        CHECK(t->view().size() == 128);
        CHECK(std::memcmp(t->view().data(), packed.data(), 64) == 0);
        REQUIRE(t->view().quant().per_block());
        CHECK(t->view().quant().scales[2] == 8.0f);
        CHECK(std::isnan(t->view().quant().scales[3])); // e8m0 0xFF: a NaN block, accepted
        numgap::validate_view(t->view());
    }
    CHECK(x.view().type() == dtype::float6_e3m2fn);
    numgap::validate_view(x.view());

    auto load_error = [&](const std::string& tensors, const std::string& key) {
        run.write("graph.json", "{\"tensors\": {" + tensors + ", \"w_scales\": {\"dtype\": \"float8_e8m0fnu\"}}}");
        return error_of([&] { (void)run_directory::open(run.path()).load(key); });
    };
    CHECK(contains(load_error(R"("w": {"file": "w.raw", "dtype": "float4_e2m1fn", "shape": [2, 66]})", "w"),
                   "has 64 bytes but shape (2, 66) of float4_e2m1fn needs 66"));
    CHECK(contains(load_error(R"("w": {"file": "w.raw", "dtype": "float4_e2m1fn", "shape": [2, 64],
                                       "block": {"size": 32, "scales": "w_scales", "zero_points": "w_scales"}})", "w"),
                   "an MX element format takes scales only"));
    CHECK(contains(load_error(R"("w": {"file": "w.raw", "dtype": "float4_e2m1fn", "shape": [2, 64], "scale": 0.5})", "w"),
                   "not an integer type"));
    CHECK(contains(load_error(R"("w": {"file": "w.raw", "dtype": "float4_e2m1fn", "shape": [2, 64],
                                       "block": {"size": 16, "scales": "w_scales"}})", "w"),
                   "need 8"));
    // The one-code-a-byte file truncated: refused by its size, before any repacking.
    run.write("w_unpacked.npy", file.substr(0, file.size() - 1));
    CHECK(contains(load_error(R"("w_unpacked": {"dtype": "float4_e2m1fn"})", "w_unpacked"), "truncated .npy file"));
    // Declared int4 over the same '|V1' stays refused (ml_dtypes' int4 is one a byte too; store int8).
    run.write("w_unpacked.npy", file);
    CHECK(contains(load_error(R"("w_unpacked": {"dtype": "int4"})", "w_unpacked"), "declares the packed dtype int4"));
    // float6 bytes with bits 6-7 set are read, the bits ignored (core/float_mx.hpp).
    std::vector<std::uint8_t> high_bits(128, 0xe5);
    numgap::io::write_npy(run / "x.npy", numgap::tensor_view(high_bits.data(), dtype::float6_e3m2fn, {2, 64}));
    run.write("graph.json", R"({"tensors": {"x": {"dtype": "float6_e3m2fn"}}})");
    const loaded_tensor high = run_directory::open(run.path()).load("x");
    CHECK(numgap::to_float(numgap::float6_e3m2fn{static_cast<const std::uint8_t*>(high.view().data())[0]}) ==
          numgap::to_float(numgap::float6_e3m2fn{0x25}));
}

TEST_CASE("run_directory: load is safe from several threads") {
    const run_directory dir = run_directory::open(numgap_test::fixture("npz/compressed.npz"));
    const std::vector<std::uint8_t> expected = numgap_test::lcg_bytes(65536);
    std::array<int, 4> matches{};
    std::vector<std::thread> workers;
    for (std::size_t w = 0; w < matches.size(); ++w)
        workers.emplace_back([&, w] {
            for (int i = 0; i < 3; ++i) {
                const loaded_tensor big = dir.load("big");
                matches[w] += std::memcmp(big.view().data(), expected.data(), expected.size()) == 0;
            }
        });
    for (std::thread& worker : workers) worker.join();
    for (int count : matches) CHECK(count == 3);
}

// ---- Confinement: a run cannot make numgap read outside it (issue 8, defect 1).

namespace {

// base/run is the run; base/secret.npy and base/shared/ are outside it.
struct confinement_layout {
    numgap_test::temp_directory base;
    std::filesystem::path run = base / "run";
    confinement_layout() {
        write_floats(base / "secret.npy", {42}, {1});
        write_floats(base / "shared/s.npy", {7}, {1});
        write_floats(run / "a.npy", {1}, {1});
        std::filesystem::create_directories(run / "sub");
    }
    std::string open_error(const numgap::io::read_policy& policy = {}) const {
        return error_of([&] { (void)run_directory::open(run, policy); });
    }
};

} // namespace

TEST_CASE("run_directory: refuses graph json entries that leave the run") {
    confinement_layout layout;
    const std::string outside = (layout.base / "secret.npy").lexically_normal().string();
    for (const std::string& file : {std::string("../secret.npy"), std::string("sub/../../secret.npy"), outside,
                                    std::string("./../run/../secret.npy")}) {
        CAPTURE(file);
        numgap_test::temp_directory::write_to(layout.run / "graph.json",
                                              R"({"tensors": {"k": {"file": ")" + file + R"("}}})");
        const std::string message = layout.open_error();
        CHECK(contains(message, "graph.json: tensor 'k': file '" + file + "' is refused: it leads to '" + outside +
                                    "', outside the run directory"));
        CHECK(contains(message, "--allow-outside-run"));
        CHECK(contains(message, "in run '" + layout.run.string() + "'"));
    }
    // Dot-dot that stays inside is just a path.
    write_floats(layout.run / "d/b.npy", {2}, {1});
    numgap_test::temp_directory::write_to(layout.run / "graph.json", R"({"tensors": {"k": {"file": "d/../a.npy"}}})");
    CHECK(at<float>(run_directory::open(layout.run).load("k").view(), 0) == 1.0f);
}

TEST_CASE("run_directory: refuses symbolic links that leave the run") {
    confinement_layout layout;
    std::filesystem::create_symlink("../secret.npy", layout.run / "leak.npy");
    // Found while listing: refused at open, naming the link.
    const std::string listed = layout.open_error();
    CHECK(contains(listed, "run '" + layout.run.string() + "': 'leak.npy' is refused: it leads to '"));
    std::filesystem::remove(layout.run / "leak.npy");
    // Absolute link targets and links to a directory outside, named by graph.json.
    std::filesystem::create_symlink(layout.base / "secret.npy", layout.run / "absolute.bin");
    std::filesystem::create_directory_symlink(layout.base / "shared", layout.run / "elsewhere");
    for (const char* file : {"absolute.bin", "elsewhere/s.npy"}) {
        CAPTURE(file);
        numgap_test::temp_directory::write_to(layout.run / "graph.json",
                                              std::string(R"({"tensors": {"k": {"file": ")") + file + R"("}}})");
        CHECK(contains(layout.open_error(), std::string("file '") + file + "' is refused: it leads to '"));
    }
    // A directory symlink is not entered while listing (elsewhere/s.npy is no key).
    std::filesystem::remove(layout.run / "graph.json");
    std::filesystem::remove(layout.run / "absolute.bin");
    CHECK(run_directory::open(layout.run).keys() == std::vector<std::string>{"a"});

    // Links that stay inside are followed, relative or through the run's own parent name.
    std::filesystem::create_symlink("a.npy", layout.run / "same.npy");
    std::filesystem::create_directory(layout.run / "d");
    std::filesystem::create_symlink("../../run/a.npy", layout.run / "d/up.npy");
    const run_directory inside = run_directory::open(layout.run);
    CHECK(inside.keys() == std::vector<std::string>{"a", "d/up", "same"});
    CHECK(at<float>(inside.load("same").view(), 0) == 1.0f);
    CHECK(at<float>(inside.load("d/up").view(), 0) == 1.0f);
}

TEST_CASE("run_directory: load opens beneath the run so a file swapped for a link is refused") {
    confinement_layout layout;
    const run_directory dir = run_directory::open(layout.run);
    CHECK(at<float>(dir.load("a").view(), 0) == 1.0f);
    // After open() checked it, a.npy becomes a link to a file outside: load must not follow it.
    std::filesystem::remove(layout.run / "a.npy");
    std::filesystem::create_symlink(layout.base / "secret.npy", layout.run / "a.npy");
    const std::string message = error_of([&] { (void)dir.load("a"); });
    CHECK(contains(message, "tensor 'a': file 'a.npy' is refused: it leads to '"));
    // The secret's value (42) appears nowhere; the temporary folder's random
    // name may hold those digits, so the paths are taken out first.
    std::string without_paths = message;
    const std::string base = layout.base.path().string();
    for (std::size_t at = without_paths.find(base); at != std::string::npos; at = without_paths.find(base))
        without_paths.erase(at, base.size());
    CHECK_FALSE(contains(without_paths, "42"));
}

TEST_CASE("run_directory: allowed roots let entries resolve into the named directories only") {
    confinement_layout layout;
    std::filesystem::create_symlink(layout.base / "shared/s.npy", layout.run / "linked.npy");
    numgap_test::temp_directory::write_to(
        layout.run / "graph.json",
        R"({"tensors": {"rel": {"file": "../shared/s.npy"}, "abs": {"file": ")" +
            (layout.base / "shared/s.npy").string() + R"("}}})");
    CHECK(contains(layout.open_error(), "outside the run directory"));
    numgap::io::read_policy policy;
    policy.allowed_roots = {layout.base / "shared"};
    const run_directory dir = run_directory::open(layout.run, policy);
    CHECK(dir.keys() == std::vector<std::string>{"a", "abs", "linked", "rel"});
    for (const char* key : {"rel", "abs", "linked"}) CHECK(at<float>(dir.load(key).view(), 0) == 7.0f);
    // An allowed directory typed through a symbolic link also admits its resolved path.
    std::filesystem::create_directory_symlink(layout.base / "shared", layout.base / "alias");
    numgap_test::temp_directory::write_to(layout.run / "graph.json",
                                          R"({"tensors": {"k": {"file": ")" +
                                              std::filesystem::canonical(layout.base / "shared/s.npy").string() +
                                              R"("}}})");
    numgap::io::read_policy through_alias_policy;
    through_alias_policy.allowed_roots = {layout.base / "alias"};
    const run_directory through_alias = run_directory::open(layout.run, through_alias_policy);
    CHECK(at<float>(through_alias.load("k").view(), 0) == 7.0f);
    CHECK(contains(layout.open_error(), "outside the run directory"));
    // The allowed directory is no licence for the rest of the file system.
    numgap_test::temp_directory::write_to(layout.run / "graph.json",
                                          R"({"tensors": {"k": {"file": "../shared/../secret.npy"}}})");
    CHECK(contains(layout.open_error(policy), "outside the run directory and every allowed directory"));
}

TEST_CASE("run_directory: does not hang on a fifo and names unlistable directories") {
    confinement_layout layout;
    REQUIRE(::mkfifo((layout.run / "pipe.npy").c_str(), 0600) == 0);
    CHECK(run_directory::open(layout.run).keys() == std::vector<std::string>{"a"}); // not a regular file
    numgap_test::temp_directory::write_to(layout.run / "graph.json", R"({"tensors": {"p": {"file": "pipe.npy"}}})");
    CHECK(contains(layout.open_error(), "tensor 'p': file 'pipe.npy' is not a regular file in run"));
    std::filesystem::remove(layout.run / "graph.json");

    // Any failure to list a subdirectory names it and says why (it used to print "Permission denied ()").
    write_floats(layout.run / "deep/er/x.npy", {1}, {1});
    rlimit saved{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
    int lowest_free = ::dup(0);
    ::close(lowest_free);
    rlimit tight = saved;
    tight.rlim_cur = rlim_t(lowest_free + 3); // the run, its listing, "deep": no room for "deep/er"
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &tight) == 0);
    const std::string message = layout.open_error();
    ::setrlimit(RLIMIT_NOFILE, &saved);
    CHECK(contains(message, "cannot list 'deep/er' in run '" + layout.run.string() + "': Too many open files"));
    if (::geteuid() != 0) {
        std::filesystem::permissions(layout.run / "deep", std::filesystem::perms::none);
        const std::string denied = layout.open_error();
        std::filesystem::permissions(layout.run / "deep", std::filesystem::perms::owner_all);
        CHECK(contains(denied, "cannot list 'deep' in run '" + layout.run.string() + "': Permission denied"));
    }
}

// ---- Compressed members are checked before they are inflated (defect 5).

TEST_CASE("run_directory: checks a compressed member header against its size before inflating") {
    // The header says 1000 floats, the archive says 256 MiB, and the stream is
    // corrupt right after the header: the header check must fire first.
    const std::array<std::int64_t, 1> shape{1000};
    const std::string preamble = numgap::io::detail::npy_preamble(dtype::float32, shape);
    std::vector<std::byte> stream = numgap_test::deflate_stored(numgap_test::to_bytes(preamble));
    stream[0] = std::byte(0);          // not final
    stream.push_back(std::byte(0x07)); // then a block of reserved type 3
    const std::uint32_t claimed = std::uint32_t(256) << 20;
    stream.resize(claimed / 1032 + 4096);
    numgap_test::zip_builder zip;
    zip.member({"t.npy", 8, 0, std::uint32_t(stream.size()), claimed}, stream);
    numgap_test::temp_directory scratch;
    const run_directory dir = run_directory::open(scratch.write("run.npz", zip.finish()));
    const std::string message = error_of([&] { (void)dir.load("t"); });
    CHECK(contains(message, "member 't.npy'"));
    CHECK(contains(message, "bytes after the 4000 bytes that shape (1000,) of float32 needs"));
    CHECK_FALSE(contains(message, "corrupt deflate data"));
}
} // TEST_SUITE("io")
