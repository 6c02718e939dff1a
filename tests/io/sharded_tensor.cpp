// Pins graph.json's "shards" (io/run_manifest.hpp, io/sharded_tensor.hpp,
// io/directory_source.hpp), of files and of keys of per-rank safetensors
// files: the syntax and its hostile cases (each an error
// naming graph.json's line, the tensor and the reason), the load-time rules
// (gap, overlap, wrong shapes, dtypes, declared shape, missing files, paths
// leaving the run), and that a loaded sharded tensor's segments are the
// shards' files, mapped where they lie, with the logical shape, layout and
// quantization applied.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include <numgap/io/npy.hpp>
#include <numgap/io/run_directory.hpp>
#include <numgap/io/run_manifest.hpp>
#include <numgap/metric/builtin_metrics.hpp>
#include <numgap/metric/evaluate.hpp>
#include <numgap/metric/evaluate_segments.hpp>

#include "safetensors_builder.hpp"
#include "temp_directory.hpp"

using numgap::io::run_directory;
using numgap_test::contains;
using numgap_test::error_of;

namespace {

void write_floats(const std::filesystem::path& file, std::int64_t rows, std::int64_t columns, float first) {
    std::vector<float> values(std::size_t(rows * columns));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = first + float(i);
    numgap::io::write_npy(file, values.data(), std::vector<std::int64_t>{rows, columns});
}

std::string shard_entry_error(const std::string& tensor_entry) {
    return error_of([&] {
        (void)numgap::io::parse_run_manifest(R"({"tensors": {"w": )" + tensor_entry + "}}", "graph.json");
    });
}

// A run with w stored as [4, 2] and [4, 3] shards along axis 1 (and `entry`
// as the tensor's graph.json entry when given).
void write_sharded_run(const numgap_test::temp_directory& run, const std::string& entry = "") {
    write_floats(run / "w.0.npy", 4, 2, 0.0f);
    write_floats(run / "w.1.npy", 4, 3, 100.0f);
    run.write("graph.json", R"({"tensors": {"w": )" +
                                (entry.empty() ? R"({"shards": [{"file": "w.1.npy", "axis": -1, "offset": 2},
                                                                {"file": "w.0.npy", "axis": -1, "offset": 0}]})"
                                               : entry) +
                                "}}");
}

} // namespace

TEST_SUITE("io") {
TEST_CASE("graph.json shards: parsed, sorted by offset, and every malformed entry refused with its reason") {
    const numgap::io::run_manifest manifest = numgap::io::parse_run_manifest(
        R"({"tensors": {"w": {"shards": [{"file": "b.npy", "axis": 1, "offset": 8}, {"file": "a.npy", "axis": 1, "offset": 0}]}}})",
        "graph.json");
    const numgap::io::tensor_spec& spec = manifest.tensors.front();
    REQUIRE(spec.shards.size() == 2);
    CHECK(spec.shards[0].file == "a.npy");
    CHECK(spec.shards[1].offset == 8);
    CHECK(spec.shard_axis == 1);

    CHECK(contains(shard_entry_error(R"({"shards": []})"), "\"shards\" is empty"));
    CHECK(contains(shard_entry_error(R"({"shards": {"file": "a"}})"), "must be an array of objects"));
    CHECK(contains(shard_entry_error(R"({"shards": [3]})"), "shard 0 must be an object"));
    CHECK(contains(shard_entry_error(R"({"shards": [{"file": "a.npy", "offset": 0}]})"), "needs \"file\", \"axis\" and \"offset\""));
    CHECK(contains(shard_entry_error(R"({"shards": [{"file": "a.npy", "axis": 0, "offset": 0, "rank": 1}]})"),
                   "unknown key \"rank\""));
    CHECK(contains(shard_entry_error(R"({"shards": [{"file": "", "axis": 0, "offset": 0}]})"), "\"file\" is empty"));
    CHECK(contains(shard_entry_error(R"({"shards": [{"file": "a.npy", "axis": 0, "offset": -1}]})"), "outside [0,"));
    CHECK(contains(shard_entry_error(R"({"shards": [{"file": "a.npy", "axis": 9, "offset": 0}]})"), "outside [-8, 7]"));
    CHECK(contains(shard_entry_error(R"({"shards": [{"file": "a.npy", "axis": 0, "offset": 0}, {"file": "b.npy", "axis": 1, "offset": 4}]})"),
                   "a tensor is split along one axis"));
    CHECK(contains(shard_entry_error(R"({"shards": [{"file": "a.npy", "axis": 0, "offset": 0}, {"file": "b.npy", "axis": 0, "offset": 0}]})"),
                   "like an earlier shard"));
    CHECK(contains(shard_entry_error(R"({"shards": [{"file": "a.npy", "axis": 0, "offset": 0}, {"file": "a.npy", "axis": 0, "offset": 4}]})"),
                   "names file 'a.npy' again"));
    CHECK(contains(shard_entry_error(R"({"file": "w.npy", "shards": [{"file": "a.npy", "axis": 0, "offset": 0}]})"),
                   "\"file\" and \"shards\" are given"));
    CHECK(contains(shard_entry_error(R"({"shape": [4, 4], "shards": [{"file": "a.npy", "axis": 2, "offset": 0}]})"),
                   "is not a dimension of shape of rank 2"));
    CHECK(contains(shard_entry_error(R"({"shards": [{"file": "a.npy", "axis": 0, "offset": 0}],
                                      "block": {"size": 32, "scales": "s"}, "dtype": "int8"})"),
                   "block-quantized shards are not supported"));
    // A hostile count is refused before any file is looked at.
    std::string many = R"({"shards": [)";
    for (int i = 0; i <= int(numgap::max_segments); ++i)
        many += (i ? "," : "") + std::string(R"({"file": "s)") + std::to_string(i) + R"(.npy", "axis": 0, "offset": )" +
                std::to_string(i) + "}";
    const std::string huge = shard_entry_error(many + "]}");
    CHECK(contains(huge, "above numgap's limit of 4096"));
    CHECK(contains(huge, "graph.json:1:"));
}

TEST_CASE("run_directory: a sharded tensor loads as segments of its mapped shards, with the logical shape") {
    numgap_test::temp_directory run;
    write_sharded_run(run);
    const run_directory dir = run_directory::open(run.path());
    CHECK(dir.keys() == std::vector<std::string>{"w"}); // shard files are no tensors of their own
    CHECK(*dir.stored_shape("w") == std::vector<std::int64_t>{4, 5});
    const numgap::io::loaded_tensor w = dir.load("w");
    REQUIRE(w.is_sharded());
    CHECK(w.view().data() == nullptr); // nothing reads it as one tensor
    CHECK(w.view().shape(0) == 4);
    CHECK(w.view().shape(1) == 5);
    const numgap::segmented_view segments = w.segments();
    CHECK(segments.axis == 1);
    REQUIRE(segments.segments.size() == 2);
    CHECK(segments.segments[0].offset == 0);
    CHECK(segments.segments[1].offset == 2);
    CHECK(segments.segments[1].view.shape(1) == 3);
    CHECK(static_cast<const float*>(segments.segments[1].view.data())[0] == 100.0f);
    CHECK(segments.segments[1].view.name() == "w");
    w.check_intact();

    // One shard is the tensor in one file (its view has data); it must start at 0.
    write_sharded_run(run, R"({"shards": [{"file": "w.1.npy", "axis": 1, "offset": 0}]})");
    const numgap::io::loaded_tensor single = run_directory::open(run.path()).load("w");
    CHECK_FALSE(single.is_sharded());
    CHECK(static_cast<const float*>(single.view().data())[0] == 100.0f);
    write_sharded_run(run, R"({"shards": [{"file": "w.1.npy", "axis": 1, "offset": 2}]})");
    CHECK(contains(error_of([&] { (void)run_directory::open(run.path()).load("w"); }),
                   "shard file 'w.1.npy' starts at offset 2 but the first shard must start at 0"));
    write_sharded_run(run, R"({"shards": [{"file": "w.1.npy", "axis": 2, "offset": 0}]})");
    CHECK(contains(error_of([&] { (void)run_directory::open(run.path()).load("w"); }), "cannot be split along axis 2"));
}

TEST_CASE("run_directory: per-channel scales along the split axis are each shard's own range of them") {
    numgap_test::temp_directory run;
    const std::vector<std::uint8_t> codes(12, 10);
    numgap::io::write_npy(run / "q.0.npy", numgap::tensor_view(codes.data(), {2, 4}));
    numgap::io::write_npy(run / "q.1.npy", numgap::tensor_view(codes.data(), {4, 2}));
    run.write("graph.json", R"({"tensors": {"q": {"scale": [1, 2, 3, 4], "zero_point": 0, "quant_axis": 1,
        "axis_order": [1, 0],
        "shards": [{"file": "q.0.npy", "axis": 0, "offset": 0}, {"file": "q.1.npy", "axis": 0, "offset": 2}]}}})");
    const run_directory dir = run_directory::open(run.path());
    CHECK(contains(error_of([&] { (void)dir.load("q"); }), "may differ only along axis 1"));

    // Consistent shapes: [2, 4] and [1, 4] rows of a [3, 4] tensor, scales along axis 1 (not split): shared.
    numgap::io::write_npy(run / "q.1.npy", numgap::tensor_view(codes.data(), {1, 4}));
    run.write("graph.json", R"({"tensors": {"q": {"scale": [1, 2, 3, 4], "quant_axis": 1,
        "shards": [{"file": "q.0.npy", "axis": 0, "offset": 0}, {"file": "q.1.npy", "axis": 0, "offset": 2}]}}})");
    const numgap::io::loaded_tensor shared = run_directory::open(run.path()).load("q");
    CHECK(shared.segments().segments[1].view.quant().scales.size() == 4);

    // Split along the quantized axis 1: [3, 1] and [3, 3]; the second takes scales 2, 3, 4.
    numgap::io::write_npy(run / "q.0.npy", numgap::tensor_view(codes.data(), {3, 1}));
    numgap::io::write_npy(run / "q.1.npy", numgap::tensor_view(codes.data(), {3, 3}));
    run.write("graph.json", R"({"tensors": {"q": {"scale": [1, 2, 3, 4], "zero_point": [0, 1, 2, 3], "quant_axis": 1,
        "shards": [{"file": "q.0.npy", "axis": 1, "offset": 0}, {"file": "q.1.npy", "axis": 1, "offset": 1}]}}})");
    const numgap::io::loaded_tensor narrowed = run_directory::open(run.path()).load("q");
    const numgap::quantization& second = narrowed.segments().segments[1].view.quant();
    REQUIRE(second.scales.size() == 3);
    CHECK(second.scales[0] == 2.0f);
    CHECK(second.zero_points[2] == 3);
    CHECK(narrowed.view().quant().scales.size() == 4);
}

TEST_CASE("run_directory: shards that do not tile, disagree or leave the run are refused naming the file") {
    numgap_test::temp_directory run;
    const auto load_error = [&](const std::string& entry) {
        write_sharded_run(run, entry);
        return error_of([&] { (void)run_directory::open(run.path()).load("w"); });
    };
    const std::string gap = load_error(R"({"shards": [{"file": "w.0.npy", "axis": 1, "offset": 0}, {"file": "w.1.npy", "axis": 1, "offset": 3}]})");
    CHECK(contains(gap, "shard file 'w.1.npy' starts at offset 3 but the shards before it end at 2 (a gap)"));
    CHECK(contains(gap, "tensor 'w'"));
    CHECK(contains(load_error(R"({"shards": [{"file": "w.0.npy", "axis": 1, "offset": 0}, {"file": "w.1.npy", "axis": 1, "offset": 1}]})"),
                   "(an overlap)"));
    CHECK(contains(load_error(R"({"shards": [{"file": "w.0.npy", "axis": 1, "offset": 1}, {"file": "w.1.npy", "axis": 1, "offset": 3}]})"),
                   "the first shard must start at 0"));
    CHECK(contains(load_error(R"({"shards": [{"file": "w.0.npy", "axis": 0, "offset": 0}, {"file": "w.1.npy", "axis": 0, "offset": 4}]})"),
                   "shards may differ only along axis 0"));
    CHECK(contains(load_error(R"({"shards": [{"file": "w.0.npy", "axis": 2, "offset": 0}]})"), "cannot be split along axis 2"));
    CHECK(contains(load_error(R"({"shape": [4, 6], "shards": [{"file": "w.0.npy", "axis": 1, "offset": 0}, {"file": "w.1.npy", "axis": 1, "offset": 2}]})"),
                   "shard file 'w.1.npy' should be (4, 4) (graph.json's shape (4, 6) from offset 2 along axis 1)"));
    CHECK(contains(load_error(R"({"dtype": "float64", "shards": [{"file": "w.0.npy", "axis": 1, "offset": 0}]})"), "float64"));
    std::vector<double> wide(12, 1.0);
    numgap::io::write_npy(run / "d.npy", numgap::tensor_view(wide.data(), {4, 3}));
    CHECK(contains(load_error(R"({"shards": [{"file": "w.0.npy", "axis": 1, "offset": 0}, {"file": "d.npy", "axis": 1, "offset": 2}]})"),
                   "share one dtype"));

    // Opening already refuses shard files that are missing or outside the run.
    const auto open_error = [&](const std::string& entry) {
        write_sharded_run(run, entry);
        return error_of([&] { (void)run_directory::open(run.path()); });
    };
    CHECK(contains(open_error(R"({"shards": [{"file": "w.0.npy", "axis": 1, "offset": 0}, {"file": "w.9.npy", "axis": 1, "offset": 2}]})"),
                   "shard file 'w.9.npy' does not exist"));
    numgap_test::temp_directory outside;
    write_floats(outside / "secret.npy", 4, 3, 0.0f);
    const std::string escaping = (std::filesystem::path("..") / outside.path().filename() / "secret.npy").string();
    const std::string escape = open_error(R"({"shards": [{"file": "w.0.npy", "axis": 1, "offset": 0}, {"file": ")" +
                                          escaping + R"(", "axis": 1, "offset": 2}]})");
    CHECK(contains(escape, "is refused"));
    CHECK(contains(escape, "may only name files inside it"));
    CHECK(contains(open_error(R"({"shards": [{"file": "/etc/passwd", "axis": 1, "offset": 0}]})"), "is refused"));
}
}

TEST_SUITE("io") {
TEST_CASE("run_directory: block parameters stored as shards, a file both a shard and a tensor, overflowing tilings") {
    numgap_test::temp_directory run;
    // Block scales naming a sharded tensor: its view has no data to read them from.
    const std::vector<std::int8_t> codes(64, 3);
    numgap::io::write_npy(run / "w.npy", numgap::tensor_view(codes.data(), numgap::dtype::int8, std::vector<std::int64_t>{2, 32}));
    write_floats(run / "s0.npy", 1, 1, 0.5f);
    write_floats(run / "s1.npy", 1, 1, 0.25f);
    run.write("graph.json", R"({"tensors": {
        "w": {"dtype": "int8", "block": {"size": 32, "axis": -1, "scales": "s"}},
        "s": {"shards": [{"file": "s0.npy", "axis": 0, "offset": 0}, {"file": "s1.npy", "axis": 0, "offset": 1}]}}})");
    const std::string scales = error_of([&] { (void)run_directory::open(run.path()).load("w"); });
    CHECK(contains(scales, "block scales 's' is stored as 2 shards"));

    // A file that is a shard of one tensor and the file of another is refused
    // whichever key sorts first.
    write_floats(run / "b.npy", 4, 2, 0.0f);
    write_floats(run / "c.npy", 4, 3, 0.0f);
    for (const std::string sharded : {"a", "z"}) {
        CAPTURE(sharded);
        run.write("graph.json", R"({"tensors": {")" + sharded +
                                    R"(": {"shards": [{"file": "b.npy", "axis": 1, "offset": 0},
                                                        {"file": "c.npy", "axis": 1, "offset": 2}]},
                                      "b": {"file": "b.npy"}}})");
        const std::string both = error_of([&] { (void)run_directory::open(run.path()); });
        CHECK(contains(both, "b.npy"));
        CHECK(contains(both, "tensor '" + sharded + "'"));
    }

    // Zero-sized uint8 shards whose other dimensions are huge: each header is
    // within limits, the tiled tensor's element count (or the sum of the
    // lengths along the axis) is not.
    const std::uint8_t none = 0;
    const auto empty_shards = [&](std::int64_t length, std::int64_t inner) {
        const std::vector<std::int64_t> shape = {0, length, inner};
        for (const char* name : {"e0.npy", "e1.npy"})
            numgap::io::write_npy(run / name, numgap::tensor_view(&none, numgap::dtype::uint8, shape));
        run.write("graph.json", R"({"tensors": {"e": {"shards": [{"file": "e0.npy", "axis": 1, "offset": 0},
                                  {"file": "e1.npy", "axis": 1, "offset": )" + std::to_string(length) + "}]}}}");
        return run_directory::open(run.path());
    };
    const run_directory tiled = empty_shards(std::int64_t(1) << 61, 2);
    CHECK(contains(error_of([&] { (void)tiled.load("e"); }), "overflows 64 bits"));
    const run_directory summed = empty_shards(std::int64_t(1) << 62, 1);
    CHECK_FALSE(summed.stored_shape("e").has_value()); // the lengths' sum overflows: unknown, not negative
    CHECK(contains(error_of([&] { (void)summed.load("e"); }), "longer than 2^63"));
}
}

namespace {

// Two per-rank safetensors files repeating the keys "w" ([4, 2] and [4, 3],
// columns 0-1 and 2-4 of a [4, 5] tensor whose element (r, c) is 10 r + c)
// and "b" (the same [3] vector in both: replicated).
void write_rank_files(const numgap_test::temp_directory& run) {
    std::filesystem::create_directories(run / "rank0");
    std::filesystem::create_directories(run / "rank1");
    const auto columns = [](std::int64_t first, std::int64_t count) {
        std::vector<float> values;
        for (std::int64_t r = 0; r < 4; ++r)
            for (std::int64_t c = first; c < first + count; ++c) values.push_back(float(10 * r + c));
        return numgap_test::bytes_of(values);
    };
    const std::vector<std::byte> bias = numgap_test::bytes_of(std::vector<float>{1, 2, 3});
    run.write("rank0/model.safetensors",
              numgap_test::safetensors_file({{"w", "F32", "[4,2]", columns(0, 2)}, {"b", "F32", "[3]", bias}}));
    run.write("rank1/model.safetensors",
              numgap_test::safetensors_file({{"w", "F32", "[4,3]", columns(2, 3)}, {"b", "F32", "[3]", bias}}));
}

const std::string keyed_w = R"({"shards": [{"file": "rank1/model.safetensors", "key": "w", "axis": 1, "offset": 2},
                                          {"file": "rank0/model.safetensors", "key": "w", "axis": 1, "offset": 0}]})";

} // namespace

TEST_SUITE("io") {
TEST_CASE("graph.json shards by safetensors key: parsed, and malformed entries refused") {
    const numgap::io::run_manifest manifest =
        numgap::io::parse_run_manifest(R"({"tensors": {"w": )" + keyed_w + "}}", "graph.json");
    const numgap::io::tensor_spec& spec = manifest.tensors.front();
    REQUIRE(spec.shards.size() == 2);
    CHECK(spec.shards[0].file == "rank0/model.safetensors");
    CHECK(spec.shards[0].key == "w");
    CHECK(spec.shards[1].offset == 2);
    CHECK(contains(shard_entry_error(R"({"shards": [{"file": "a.safetensors", "key": "", "axis": 0, "offset": 0}]})"),
                   "\"key\" is empty"));
    CHECK(contains(shard_entry_error(R"({"shards": [{"file": "a.safetensors", "key": 3, "axis": 0, "offset": 0}]})"),
                   "key"));
    CHECK(contains(shard_entry_error(R"({"shards": [{"key": "w", "axis": 0, "offset": 0}]})"),
                   "needs \"file\", \"axis\" and \"offset\""));
    CHECK(contains(shard_entry_error(R"({"shards": [{"file": "w.npy", "key": "w", "axis": 0, "offset": 0}]})"),
                   "which is not a .safetensors file"));
    CHECK(contains(shard_entry_error(R"({"shards": [{"file": "a.safetensors", "key": "w", "axis": 0, "offset": 0},
                                                    {"file": "a.safetensors", "key": "w", "axis": 0, "offset": 4}]})"),
                   "names key 'w' of file 'a.safetensors' again"));
    // One file may hold several shards of a tensor under different keys.
    const numgap::io::run_manifest two_keys = numgap::io::parse_run_manifest(
        R"({"tensors": {"w": {"shards": [{"file": "a.safetensors", "key": "w0", "axis": 0, "offset": 0},
                                         {"file": "a.safetensors", "key": "w1", "axis": 0, "offset": 4}]}}})",
        "graph.json");
    CHECK(two_keys.tensors.front().shards.size() == 2);
}

TEST_CASE("run_directory: shards by key of per-rank safetensors files load as segments in place") {
    numgap_test::temp_directory run;
    write_rank_files(run);
    // The rank files repeat "w" and "b": as files of the run's own keys they
    // are refused (a key in two files), as shard containers they are not.
    CHECK(contains(error_of([&] { (void)run_directory::open(run.path()); }), "'w'"));
    run.write("graph.json", R"({"tensors": {"w": )" + keyed_w + R"(,
        "b": {"shards": [{"file": "rank0/model.safetensors", "key": "b", "axis": 0, "offset": 0}]}}})");
    const run_directory dir = run_directory::open(run.path());
    CHECK(dir.keys() == std::vector<std::string>{"b", "w"}); // the containers' keys only through the entries
    CHECK(*dir.stored_shape("w") == std::vector<std::int64_t>{4, 5});
    const numgap::io::loaded_tensor w = dir.load("w");
    REQUIRE(w.is_sharded());
    const numgap::segmented_view segments = w.segments();
    CHECK(segments.axis == 1);
    REQUIRE(segments.segments.size() == 2);
    for (const numgap::tensor_segment& segment : segments.segments) {
        const auto* values = static_cast<const float*>(segment.view.data());
        const std::int64_t width = segment.view.shape(1);
        for (std::int64_t r = 0; r < 4; ++r)
            for (std::int64_t c = 0; c < width; ++c) CHECK(values[r * width + c] == float(10 * r + segment.offset + c));
    }
    CHECK(segments.segments[1].view.name() == "w");
    w.check_intact();
    // Another spelling of a container, or a link to it inside the run, is the
    // same file: indexed once, and not one of the run's own files either.
    std::filesystem::create_symlink("rank1/model.safetensors", run / "rank1-link.safetensors");
    run.write("graph.json", R"({"tensors": {
        "w": {"shards": [{"file": "rank1-link.safetensors", "key": "w", "axis": 1, "offset": 2},
                         {"file": "rank1/../rank0/model.safetensors", "key": "w", "axis": 1, "offset": 0}]},
        "b": {"shards": [{"file": "./rank1/model.safetensors", "key": "b", "axis": 0, "offset": 0}]},
        "c": {"shards": [{"file": "rank0/model.safetensors", "key": "b", "axis": 0, "offset": 0}]}}})");
    const run_directory spelled = run_directory::open(run.path());
    CHECK(spelled.keys() == std::vector<std::string>{"b", "c", "w"});
    CHECK(*spelled.stored_shape("w") == std::vector<std::int64_t>{4, 5});
    CHECK(static_cast<const float*>(spelled.load("w").segments().segments[1].view.data())[0] == 2.0f);
    CHECK(static_cast<const float*>(spelled.load("b").view().data())[1] == 2.0f);
    std::filesystem::remove(run / "rank1-link.safetensors");
    run.write("graph.json", R"({"tensors": {"w": )" + keyed_w + R"(,
        "b": {"shards": [{"file": "rank0/model.safetensors", "key": "b", "axis": 0, "offset": 0}]}}})");
    const numgap::io::loaded_tensor b = dir.load("b"); // one shard: the tensor in one file
    CHECK_FALSE(b.is_sharded());
    CHECK(static_cast<const float*>(b.view().data())[2] == 3.0f);
    dir.release_cached_pages();

    // The same tensor compared against an unsplit reference equals the unsplit comparison.
    std::vector<float> whole;
    for (std::int64_t r = 0; r < 4; ++r)
        for (std::int64_t c = 0; c < 5; ++c) whole.push_back(float(10 * r + c) + 0.5f);
    const numgap::tensor_view reference(whole.data(), {4, 5});
    const numgap::tensor_segment unsplit{reference, 0};
    const numgap::evaluation sharded = numgap::evaluate_segments(numgap::segmented_view{std::span(&unsplit, 1), 0},
                                                                 segments, numgap::metric_set::defaults());
    std::vector<float> target_values;
    for (std::int64_t r = 0; r < 4; ++r)
        for (std::int64_t c = 0; c < 5; ++c) target_values.push_back(float(10 * r + c));
    const numgap::evaluation plain =
        numgap::evaluate(reference, numgap::tensor_view(target_values.data(), {4, 5}), numgap::metric_set::defaults());
    REQUIRE(sharded.metrics.size() == plain.metrics.size());
    for (std::size_t i = 0; i < plain.metrics.size(); ++i)
        CHECK(sharded.metrics[i].value == doctest::Approx(plain.metrics[i].value).epsilon(1e-12));
}

TEST_CASE("run_directory: shards by key that are missing, mistyped, misshapen or leave the run are refused") {
    numgap_test::temp_directory run;
    write_rank_files(run);
    const auto open_error = [&](const std::string& tensors) {
        run.write("graph.json", R"({"tensors": {)" + tensors + "}}");
        return error_of([&] { (void)run_directory::open(run.path()); });
    };
    const auto load_error = [&](const std::string& tensors) {
        run.write("graph.json", R"({"tensors": {)" + tensors + "}}");
        return error_of([&] { (void)run_directory::open(run.path()).load("w"); });
    };
    const std::string no_key =
        open_error(R"("w": {"shards": [{"file": "rank0/model.safetensors", "key": "v", "axis": 1, "offset": 0}]})");
    CHECK(contains(no_key, "shard 'v' of file 'rank0/model.safetensors': the file has no such key"));
    CHECK(contains(no_key, "tensor 'w'"));
    CHECK(contains(
        open_error(R"("w": {"shards": [{"file": "rank2/model.safetensors", "key": "w", "axis": 1, "offset": 0}]})"),
        "does not exist"));
    CHECK(contains(
        open_error(R"("w": {"shards": [{"file": "/etc/model.safetensors", "key": "w", "axis": 1, "offset": 0}]})"),
        "is refused"));
    run.write("rank2.safetensors", "not a safetensors file");
    const std::string malformed =
        open_error(R"("w": {"shards": [{"file": "rank2.safetensors", "key": "w", "axis": 1, "offset": 0}]})");
    CHECK(contains(malformed, "rank2.safetensors"));
    CHECK(contains(malformed, "tensor 'w'"));
    std::filesystem::remove(run / "rank2.safetensors"); // unnamed, it would be one of the run's own files
    // A container that is also a plain shard file, or a tensor's file, is refused.
    CHECK(
        contains(open_error(R"("v": {"shards": [{"file": "rank0/model.safetensors", "axis": 0, "offset": 0}]}, "w": )" +
                            keyed_w),
                 "is also a safetensors file holding shards by key"));
    // A key is the shard of one entry: not twice under two spellings of its
    // file, not for two tensors.
    CHECK(
        contains(open_error(R"("w": {"shards": [{"file": "rank0/model.safetensors", "key": "w", "axis": 1, "offset": 0},
                                                 {"file": "./rank0/model.safetensors", "key": "w", "axis": 1, "offset": 2},
                                                 {"file": "rank1/model.safetensors", "key": "w", "axis": 1, "offset": 4}]})"),
                 "shard 'w' of file './rank0/model.safetensors': named twice (the same file and key)"));
    CHECK(contains(open_error(R"("v": )" + keyed_w + R"(, "w": )" + keyed_w),
                   "tensor 'w': shard 'w' of file 'rank0/model.safetensors': already a shard of tensor 'v'"));
    // Tiling and shape rules name the shard by key and file.
    CHECK(contains(
        load_error(R"("w": {"shards": [{"file": "rank0/model.safetensors", "key": "w", "axis": 1, "offset": 0},
                                                 {"file": "rank1/model.safetensors", "key": "w", "axis": 1, "offset": 3}]})"),
        "shard 'w' of file 'rank1/model.safetensors' starts at offset 3 but the shards before it end at 2 (a gap)"));
    CHECK(contains(
        load_error(
            R"("w": {"shape": [4, 6], "shards": [{"file": "rank0/model.safetensors", "key": "w", "axis": 1, "offset": 0},
                                                                  {"file": "rank1/model.safetensors", "key": "w", "axis": 1, "offset": 2}]})"),
        "shard 'w' of file 'rank1/model.safetensors' should be (4, 4)"));
    const std::string dtype = load_error(
        R"("w": {"dtype": "float16", "shards": [{"file": "rank0/model.safetensors", "key": "w", "axis": 1, "offset": 0},
                                                                               {"file": "rank1/model.safetensors", "key": "w", "axis": 1, "offset": 2}]})");
    CHECK(contains(dtype, "stores key 'w' as F32"));
    CHECK(
        contains(load_error(R"("w": {"shards": [{"file": "rank0/model.safetensors", "key": "b", "axis": 0, "offset": 0},
                                                 {"file": "rank1/model.safetensors", "key": "w", "axis": 0, "offset": 3}]})"),
                 "shard 'w' of file 'rank1/model.safetensors' has shape (4, 3) but shard 'b' of file "
                 "'rank0/model.safetensors' has shape (3,)"));
    // A rank file no entry names is one of the run's own files: its key 'w'
    // then clashes with the sharded entry.
    CHECK(contains(
        open_error(R"("w": {"shards": [{"file": "rank0/model.safetensors", "key": "w", "axis": 1, "offset": 0}]})"),
        "tensor 'w' is stored as shards, but 'rank1/model.safetensors' also holds key 'w'"));
}
} // TEST_SUITE("io")
