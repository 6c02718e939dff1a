// The CLI on QNN raw output folders: `numgap compare REF qnn_out[#N]` with the
// dtype and shape inferred from the reference (the note on stderr, the
// inference in the table), Result_N selection and its note, --qnn-net-json,
// and the usage errors of --raw-layout and --raw-dtype.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <numgap/io/npy.hpp>

#include "cli_support.hpp"

namespace {
using namespace numgap_cli_test;

void write_raw(const fs::path& path, const std::vector<float>& values) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * sizeof(float)));
}

// (1, 3, 2, 1) NCHW values stored channels-last (1, 2, 1, 3).
std::vector<float> channels_last(const std::vector<float>& nchw) {
    return {nchw[0], nchw[2], nchw[4], nchw[1], nchw[3], nchw[5]};
}

// reference/{a,b}.npy (1, 3, 2, 1) with a graph a -> b; qnn/Result_0 negates
// b, qnn/Result_1 holds both as the reference; both stored channels-last.
void write_qnn_runs(const fs::path& dir) {
    const std::vector<float> a = {1.0f, -2.0f, 3.0f, 0.5f, 4.0f, -1.0f}, b = {2.0f, 1.0f, -3.0f, 7.0f, 0.25f, 5.0f};
    std::vector<float> negated = b;
    for (float& value : negated) value = -value;
    const std::vector<std::int64_t> shape{1, 3, 2, 1};
    fs::create_directories(dir / "reference");
    numgap::io::write_npy(dir / "reference" / "a.npy", a.data(), shape);
    numgap::io::write_npy(dir / "reference" / "b.npy", b.data(), shape);
    std::ofstream(dir / "reference" / "graph.json") << R"({"nodes": [{"name": "a"}, {"name": "b", "inputs": ["a"]}]})";
    write_raw(dir / "qnn" / "Result_0" / "a.raw", channels_last(a));
    write_raw(dir / "qnn" / "Result_0" / "b.raw", channels_last(negated));
    write_raw(dir / "qnn" / "Result_1" / "a.raw", channels_last(a));
    write_raw(dir / "qnn" / "Result_1" / "b.raw", channels_last(b));
    std::ofstream(dir / "model_net.json") << R"({"graph": {"tensors": {
        "a": {"dims": [1, 2, 1, 3], "data_type": 562, "axis_format": "NHWC"},
        "b": {"dims": [1, 2, 1, 3], "data_type": 562, "axis_format": "NHWC"}}}})";
}
} // namespace

TEST_SUITE("cli") {

TEST_CASE("cli: a QNN raw output folder as target, shaped like the reference or by --qnn-net-json; #N picks Result_N") {
    REQUIRE_CLI();
    const fs::path dir = scratch("qnn_raw");
    write_qnn_runs(dir);
    const std::string reference = (dir / "reference").string(), qnn = (dir / "qnn").string();

    const cli_result same = run_cli({"compare", reference, qnn + "#1"}, dir);
    CHECK(same.status == 0);
    CHECK(same.err.find("2 of 2 raw tensors have no dtype or shape") != std::string::npos);
    CHECK(same.out.find("inferred from reference tensor") != std::string::npos);

    const cli_result broken = run_cli({"compare", reference, qnn}, dir);
    CHECK(broken.status == 1);
    CHECK(broken.err.find("read Result_0 of 2 Result_<N> folders") != std::string::npos);
    CHECK(broken.out.find("first divergence: b") != std::string::npos);

    // In the reference's own layout the channels-last bytes no longer line up.
    CHECK(run_cli({"compare", reference, qnn + "#1", "--raw-layout", "as-reference"}, dir).status == 1);

    const cli_result described =
        run_cli({"compare", reference, qnn + "#Result_1", "--qnn-net-json", (dir / "model_net.json").string()}, dir);
    CHECK(described.status == 0);
    CHECK(described.out.find("inferred") == std::string::npos);

    const cli_result layout = run_cli({"compare", reference, qnn, "--raw-layout", "hwc"}, dir);
    CHECK(layout.status == 2);
    CHECK(layout.err.find("--raw-layout must be nhwc, nchw or as-reference, not 'hwc'") != std::string::npos);
    const cli_result type = run_cli({"compare", reference, qnn, "--raw-dtype", "float128"}, dir);
    CHECK(type.status == 2);
    CHECK(type.err.find("--raw-dtype must be a numgap dtype") != std::string::npos);
}
}
