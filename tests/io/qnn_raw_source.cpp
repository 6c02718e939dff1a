// Pins down io/qnn_raw_source.hpp (and the load_like hook through
// run_directory and compare_runs): a folder of headerless .raw files detected
// by content, Result_<N> selection and its note, keys with subfolders, dtype
// and shape inferred from the matched reference (NHWC float32 against an NCHW
// .npy reference) and stated in the group's message, the same through a QNN
// model JSON, uint8 with the JSON's quantization (and its dequantized float32
// form), and the errors: element-count mismatch, truncated and oversized files.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <numgap/compare/compare_runs.hpp>
#include <numgap/graph/basic_graph.hpp>
#include <numgap/io/open_run_source.hpp>
#include <numgap/io/run_directory.hpp>

#include "end_to_end.hpp"
#include "polygraphy_builder.hpp"
#include "temp_directory.hpp"

using numgap::io::run_directory;
using numgap_test::contains;
using numgap_test::error_of;
using numgap_test::npy_of;

namespace {

template <class T> std::string raw_of(const std::vector<T>& values) {
    std::string bytes(values.size() * sizeof(T), '\0');
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

// NCHW values (1, C, H, W) stored channels-last (1, H, W, C).
std::vector<float> nhwc_of(const std::vector<float>& nchw, int channels, int height, int width) {
    std::vector<float> out(nchw.size());
    for (int c = 0; c < channels; ++c)
        for (int h = 0; h < height; ++h)
            for (int w = 0; w < width; ++w) out[std::size_t((h * width + w) * channels + c)] = nchw[std::size_t((c * height + h) * width + w)];
    return out;
}

std::vector<float> ramp(float start, std::size_t count) {
    std::vector<float> values(count);
    for (std::size_t i = 0; i < count; ++i) values[i] = start + float(i) * 0.25f;
    return values;
}

// A reference run of x, a, b, each (1, 3, 2, 2) float32 .npy.
void write_reference(const numgap_test::temp_directory& dir) {
    for (const char* name : {"x", "a", "b"})
        dir.write(std::string("ref/") + name + ".npy", npy_of(ramp(float(name[0] - 'a'), 12), {1, 3, 2, 2}));
}

constexpr const char* net_json_float = R"({"graph": {"tensors": {
    "x": {"dims": [1, 2, 2, 3], "data_type": 562, "axis_format": "NHWC"},
    "a": {"dims": [1, 2, 2, 3], "data_type": "QNN_DATATYPE_FLOAT_32", "axis_format": "NHWC"},
    "b": {"dims": [1, 2, 2, 3], "data_type": 562, "axis_format": "NHWC"}}}})";

} // namespace

TEST_SUITE("io") {
TEST_CASE("qnn raw folders: detected by content, Result_N chosen by '#', keys are paths without .raw") {
    numgap_test::temp_directory dir;
    dir.write("qnn/Result_0/x.raw", raw_of(std::vector<float>{1.0f}));
    dir.write("qnn/Result_0/block/conv_out.raw", raw_of(std::vector<float>{2.0f}));
    dir.write("qnn/Result_1/x.raw", raw_of(std::vector<float>{3.0f}));
    dir.write("flat/y.raw", raw_of(std::vector<float>{4.0f}));
    dir.write("plain/y.npy", npy_of({4.0f}));
    dir.write("plain/z.raw", raw_of(std::vector<float>{4.0f}));
    using numgap::io::run_source_kind;
    CHECK(numgap::io::detect_run_source(dir / "qnn") == run_source_kind::qnn_raw);
    CHECK(numgap::io::detect_run_source(dir / "flat") == run_source_kind::qnn_raw);
    CHECK(numgap::io::detect_run_source(dir / "plain") == run_source_kind::directory);
    dir.write("described/z.raw", raw_of(std::vector<float>{4.0f}));
    dir.write("described/graph.json", R"({"version": 1, "nodes": []})");
    CHECK(numgap::io::detect_run_source(dir / "described") == run_source_kind::directory);

    const run_directory first = run_directory::open(dir / "qnn");
    CHECK(first.keys() == std::vector<std::string>{"block/conv_out", "x"});
    REQUIRE(first.notes().size() == 2);
    CHECK(contains(first.notes()[0], "read Result_0 of 2 Result_<N> folders"));
    CHECK(contains(first.notes()[1], "2 of 2 raw tensors have no dtype or shape"));
    CHECK(run_directory::open((dir / "qnn").string() + "#1").keys() == std::vector<std::string>{"x"});
    CHECK(run_directory::open((dir / "qnn").string() + "#Result_1").keys() == std::vector<std::string>{"x"});
    const std::string unknown = error_of([&] { (void)run_directory::open((dir / "qnn").string() + "#7"); });
    CHECK(contains(unknown, "no folder 'Result_7' (it has Result_0, Result_1)"));
    CHECK(contains(error_of([&] { (void)run_directory::open((dir / "flat").string() + "#0"); }), "no Result_<N> folders"));
    CHECK(run_directory::open(dir / "flat").keys() == std::vector<std::string>{"y"});
    const std::string undescribed = error_of([&] { (void)first.load("x"); });
    CHECK(contains(undescribed, "x.raw' has no dtype or shape"));
}

TEST_CASE("qnn raw folders: float32 NHWC files inferred from an NCHW .npy reference, the inference in the report") {
    numgap_test::temp_directory dir;
    write_reference(dir);
    dir.write("qnn/Result_0/x.raw", raw_of(nhwc_of(ramp(float('x' - 'a'), 12), 3, 2, 2)));
    dir.write("qnn/Result_0/a.raw", raw_of(nhwc_of(ramp(0.0f, 12), 3, 2, 2)));
    std::vector<float> b = ramp(1.0f, 12);
    b[5] += 2.0f; // nchw index 5: c 1, h 0, w 1
    dir.write("qnn/Result_0/b.raw", raw_of(nhwc_of(b, 3, 2, 2)));
    const run_directory reference = run_directory::open(dir / "ref");
    const run_directory target = run_directory::open(dir / "qnn");

    const numgap::io::loaded_tensor a_ref = reference.load("a");
    const numgap::io::loaded_tensor a = target.load_like("a", a_ref.view());
    CHECK(a.view().type() == numgap::dtype::float32);
    CHECK(a.view().shape(3) == 3); // stored channels-last
    CHECK(a.view().logical_shape()[1] == 3);
    CHECK(contains(a.note(), "dtype float32 and shape (1, 2, 2, 3) of raw file 'a.raw' inferred from reference tensor 'a'"));
    CHECK(contains(a.note(), "layout nhwc"));

    const numgap::basic_graph graph = numgap_test::chain_x_a_b();
    const auto report = numgap::compare_runs(graph, graph, reference, target, numgap_test::defaults_and_max_abs());
    REQUIRE(report.groups.size() == 3);
    CHECK(numgap_test::metric_value(report, "x", "max_abs") == 0.0);
    CHECK(numgap_test::metric_value(report, "a", "max_abs") == 0.0);
    CHECK(numgap_test::metric_value(report, "b", "max_abs") == 2.0);
    CHECK(report.summary.first_divergence == "b");
    for (const auto& group : report.groups) CHECK(contains(group.message, "inferred from reference tensor"));

    // The layout as the reference's own shape reads the same bytes unpermuted: a then differs.
    numgap::io::read_policy as_reference;
    as_reference.raw_tensor_layout = numgap::io::raw_layout::as_reference;
    const run_directory unpermuted = run_directory::open(dir / "qnn", as_reference);
    const auto plain = numgap::compare_runs(graph, graph, reference, unpermuted, numgap_test::defaults_and_max_abs());
    CHECK(numgap_test::metric_value(plain, "a", "max_abs") > 0.0);
}

TEST_CASE("qnn raw folders: dtype, shape and layout from the QNN model JSON") {
    numgap_test::temp_directory dir;
    write_reference(dir);
    dir.write("qnn/x.raw", raw_of(nhwc_of(ramp(float('x' - 'a'), 12), 3, 2, 2)));
    dir.write("qnn/a.raw", raw_of(nhwc_of(ramp(0.0f, 12), 3, 2, 2)));
    dir.write("qnn/b.raw", raw_of(nhwc_of(ramp(1.0f, 12), 3, 2, 2)));
    numgap::io::read_policy policy;
    policy.qnn_net_json = dir.write("model_net.json", net_json_float);
    const run_directory target = run_directory::open(dir / "qnn", policy);
    CHECK(target.stored_shape("a") == std::vector<std::int64_t>{1, 3, 2, 2}); // reference order
    const numgap::io::loaded_tensor a = target.load("a");
    CHECK(a.note().empty());
    CHECK(a.view().logical_shape()[1] == 3);
    const run_directory reference = run_directory::open(dir / "ref");
    const numgap::basic_graph graph = numgap_test::chain_x_a_b();
    const auto report = numgap::compare_runs(graph, graph, reference, target, numgap_test::defaults_and_max_abs());
    CHECK(numgap_test::metric_value(report, "a", "max_abs") == 0.0);
    CHECK(numgap_test::metric_value(report, "b", "max_abs") == 0.0);
    for (const auto& group : report.groups) CHECK(group.message.empty());
}

TEST_CASE("qnn raw folders: uint8 with the model JSON's scale and offset (zero point = -offset), or dequantized float") {
    numgap_test::temp_directory dir;
    // real = 0.5 * (q + offset), offset -128: q 128 -> 0, q 130 -> 1, q 126 -> -1.
    const std::vector<std::uint8_t> stored{128, 130, 126, 132};
    dir.write("ref/q.npy", npy_of({0.0f, 1.0f, -1.0f, 2.0f}, {1, 4}));
    dir.write("qnn/q.raw", raw_of(stored));
    dir.write("qnn/f.raw", raw_of(std::vector<float>{0.0f, 1.0f, -1.0f, 2.0f}));
    numgap::io::read_policy policy;
    policy.qnn_net_json = dir.write("net.json", R"({"graph": {"tensors": {
        "q": {"dims": [1, 4], "data_type": 1032, "axis_format": "NC",
              "quant_params": {"definition": 1, "encoding": 0, "scale_offset": {"scale": 0.5, "offset": -128}}},
        "f": {"dims": [1, 4], "data_type": 1032, "quant_params": {"scale_offset": {"scale": 0.5, "offset": -128}}}}}})");
    const run_directory target = run_directory::open(dir / "qnn", policy);
    const numgap::io::loaded_tensor q = target.load("q");
    CHECK(q.view().type() == numgap::dtype::uint8);
    REQUIRE(q.view().is_quantized());
    const run_directory reference = run_directory::open(dir / "ref");
    numgap::basic_graph graph;
    graph.add_node("q", "op", {});
    const auto report = numgap::compare_runs(graph, graph, reference, target, numgap_test::defaults_and_max_abs());
    CHECK(numgap_test::metric_value(report, "q", "max_abs") == 0.0);

    const numgap::io::loaded_tensor f = target.load("f");
    CHECK(f.view().type() == numgap::dtype::float32);
    CHECK(!f.view().is_quantized());
    CHECK(contains(f.note(), "holds float32 (qnn-net-run's dequantized output), not the model JSON's uint8"));
}

TEST_CASE("qnn raw folders: element-count mismatch, truncated and oversized files are errors naming the file") {
    numgap_test::temp_directory dir;
    write_reference(dir);
    dir.write("qnn/a.raw", raw_of(ramp(0.0f, 5)));
    dir.write("qnn/x.raw", raw_of(ramp(0.0f, 11)));  // truncated
    dir.write("qnn/b.raw", raw_of(ramp(0.0f, 13)));  // oversized
    const run_directory reference = run_directory::open(dir / "ref");
    const numgap::io::loaded_tensor a_ref = reference.load("a");
    const run_directory inferred = run_directory::open(dir / "qnn");
    const std::string mismatch = error_of([&] { (void)inferred.load_like("a", a_ref.view()); });
    CHECK(contains(mismatch, "a.raw' has 20 bytes (5 float32 elements)"));
    CHECK(contains(mismatch, "reference tensor 'a' it is matched with has shape (1, 3, 2, 2)"));
    numgap::io::read_policy as_uint16;
    as_uint16.raw_dtype = numgap::dtype::float16;
    const std::string half = error_of([&] { (void)run_directory::open(dir / "qnn", as_uint16).load_like("a", a_ref.view()); });
    CHECK(contains(half, "(10 float16 elements)"));

    numgap::io::read_policy policy;
    policy.qnn_net_json = dir.write("model_net.json", net_json_float);
    const run_directory described = run_directory::open(dir / "qnn", policy);
    CHECK(contains(error_of([&] { (void)described.load("x"); }), "x.raw' has 44 bytes but shape (1, 2, 2, 3) of float32 needs 48"));
    CHECK(contains(error_of([&] { (void)described.load("b"); }), "b.raw' has 52 bytes but shape (1, 2, 2, 3) of float32 needs 48"));
}

TEST_CASE("qnn raw folders: a per-axis uint8 NHWC output dequantized against a float reference") {
    numgap_test::temp_directory dir;
    // Reference (1, 3, 1, 2) NCHW; channel c has scale 0.5 * (c + 1) and offset -(10 * c).
    const std::vector<float> reference{1.0f, 2.0f, -3.0f, 4.0f, 7.5f, 0.0f};
    dir.write("ref/q.npy", npy_of(reference, {1, 3, 1, 2}));
    std::vector<std::uint8_t> stored(6); // NHWC (1, 1, 2, 3)
    for (int c = 0; c < 3; ++c)
        for (int w = 0; w < 2; ++w) {
            const float scale = 0.5f * float(c + 1);
            stored[std::size_t(w * 3 + c)] = std::uint8_t(reference[std::size_t(c * 2 + w)] / scale + float(10 * c));
        }
    dir.write("qnn/q.raw", raw_of(stored));
    numgap::io::read_policy policy;
    policy.qnn_net_json = dir.write("net.json", R"({"graph": {"tensors": {
        "q": {"dims": [1, 1, 2, 3], "data_type": 1032, "axis_format": "NHWC",
              "quant_params": {"definition": 1, "encoding": 1, "axis_scale_offset": {"axis": 3, "num_scale_offsets": 3,
                  "scale_offsets": [{"scale": 0.5, "offset": 0}, {"scale": 1.0, "offset": -10}, {"scale": 1.5, "offset": -20}]}}}}}})");
    const run_directory target = run_directory::open(dir / "qnn", policy);
    const numgap::io::loaded_tensor q = target.load("q");
    REQUIRE(q.view().is_quantized());
    CHECK(q.view().quant().per_channel());
    const run_directory reference_run = run_directory::open(dir / "ref");
    numgap::basic_graph graph;
    graph.add_node("q", "op", {});
    const auto report = numgap::compare_runs(graph, graph, reference_run, target, numgap_test::defaults_and_max_abs());
    CHECK(numgap_test::metric_value(report, "q", "max_abs") == 0.0);

    // The same bytes with the wrong axis's scales would differ: the test can fail.
    numgap::io::read_policy swapped;
    swapped.qnn_net_json = dir.write("swapped.json", R"({"graph": {"tensors": {
        "q": {"dims": [1, 1, 2, 3], "data_type": 1032, "axis_format": "NHWC",
              "quant_params": {"axis_scale_offset": {"axis": 3,
                  "scale_offsets": [{"scale": 1.5, "offset": -20}, {"scale": 1.0, "offset": -10}, {"scale": 0.5, "offset": 0}]}}}}}})");
    const auto wrong = numgap::compare_runs(graph, graph, reference_run, run_directory::open(dir / "qnn", swapped),
                                            numgap_test::defaults_and_max_abs());
    CHECK(numgap_test::metric_value(wrong, "q", "max_abs") > 1.0);
}

TEST_CASE("qnn raw folders: block encodings, unread data types and colliding names are refused per tensor") {
    numgap_test::temp_directory dir;
    dir.write("ref/lpbq.npy", npy_of({0.0f, 1.0f, 2.0f, 3.0f}, {4}));
    dir.write("qnn/lpbq.raw", raw_of(std::vector<std::uint8_t>{0, 1, 2, 3}));
    dir.write("qnn/lpbq_float.raw", raw_of(std::vector<float>{0.0f, 1.0f, 2.0f, 3.0f}));
    dir.write("qnn/int4.raw", raw_of(std::vector<std::uint8_t>{0x10, 0x32}));
    dir.write("qnn/a_b.raw", raw_of(std::vector<float>{1.0f}));
    dir.write("qnn/plain.raw", raw_of(std::vector<float>{1.0f}));
    numgap::io::read_policy policy;
    policy.qnn_net_json = dir.write("net.json", R"({"graph": {"tensors": {
        "lpbq": {"dims": [4], "data_type": 1032, "quant_params": {"encoding": 5, "blockwise_expansion": {"axis": 0}}},
        "lpbq_float": {"dims": [4], "data_type": 1032, "quant_params": {"encoding": 5, "blockwise_expansion": {"axis": 0}}},
        "int4": {"dims": [4], "data_type": 772},
        "a.b": {"dims": [1], "data_type": 562}, "a:b": {"dims": [1], "data_type": 534},
        "plain": {"dims": [1], "data_type": 562}}}})");
    const run_directory target = run_directory::open(dir / "qnn", policy);
    CHECK(contains(error_of([&] { (void)target.load("lpbq"); }),
                   "lpbq.raw' holds uint8 integers, but its quantization QNN_QUANTIZATION_ENCODING_BLOCKWISE_EXPANSION"));
    const run_directory reference = run_directory::open(dir / "ref");
    const numgap::io::loaded_tensor lpbq_reference = reference.load("lpbq");
    CHECK(contains(error_of([&] { (void)target.load_like("lpbq", lpbq_reference.view()); }), "BLOCKWISE_EXPANSION"));
    const numgap::io::loaded_tensor dequantized = target.load("lpbq_float");
    CHECK(dequantized.view().type() == numgap::dtype::float32);
    const std::string int4 = error_of([&] { (void)target.load("int4"); });
    CHECK(contains(int4, "int4.raw': '"));
    CHECK(contains(int4, "net.json' gives tensor 'int4' the unsupported \"data_type\" 772"));
    CHECK(contains(error_of([&] { (void)target.load_like("int4", lpbq_reference.view()); }), "unsupported \"data_type\" 772"));
    const std::string collision = error_of([&] { (void)target.load("a_b"); });
    CHECK(contains(collision, "describes both 'a.b' and 'a:b', whose file names are both 'a_b.raw'"));
    CHECK(target.load("plain").view().type() == numgap::dtype::float32);

    // An overlay describes what the model JSON could not.
    dir.write("overlay.json", R"({"tensors": {"a_b": {"dtype": "float32", "shape": [1]}}})");
    const run_directory overlaid = run_directory::open(dir / "qnn", policy, dir / "overlay.json");
    CHECK(overlaid.load("a_b").view().type() == numgap::dtype::float32);
}
}
