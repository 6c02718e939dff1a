// The CLI's overlay flags: --reference-overlay and --target-overlay give each
// run its own overlay graph.json; --overlay gives every run that takes one the
// same (said on stderr when that is both) and cannot be mixed with the
// per-side flags; a graph.json beside a file run that both runs would read
// unnamed is warned about, since it may describe only one of them.
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

// A safetensors file holding one 1-d tensor "q" of `dtype` ("F32", "U8").
template <class T> void write_safetensors(const fs::path& path, const std::string& dtype, const std::vector<T>& values) {
    const std::size_t bytes = values.size() * sizeof(T);
    std::string header = R"({"q": {"dtype": ")" + dtype + R"(", "shape": [)" + std::to_string(values.size()) +
                         R"(], "data_offsets": [0, )" + std::to_string(bytes) + "]}}";
    header.resize((header.size() + 7) / 8 * 8, ' ');
    std::string file(8, '\0');
    for (int i = 0; i < 8; ++i) file[std::size_t(i)] = char((std::uint64_t(header.size()) >> (8 * i)) & 0xff);
    file += header;
    file.append(reinterpret_cast<const char*>(values.data()), bytes);
    std::ofstream(path, std::ios::binary) << file;
}

// ref.safetensors: q float32 {0, 1, -1, 2}; target.safetensors: q uint8
// {128, 130, 126, 132}, which is the same with scale 0.5 and zero point 128
// (target_overlay.json). Only the target may take that overlay: the reference
// stores float32, which cannot be quantized.
void write_overlay_runs(const fs::path& dir) {
    write_safetensors(dir / "ref.safetensors", "F32", std::vector<float>{0.0f, 1.0f, -1.0f, 2.0f});
    write_safetensors(dir / "target.safetensors", "U8", std::vector<std::uint8_t>{128, 130, 126, 132});
    std::ofstream(dir / "target_overlay.json") << R"({"nodes": [{"name": "q"}], "tensors": {"q": {"scale": 0.5, "zero_point": 128}}})";
    std::ofstream(dir / "reference_overlay.json") << R"({"nodes": [{"name": "q"}]})";
}
} // namespace

TEST_SUITE("cli") {

TEST_CASE("cli: --reference-overlay and --target-overlay give each run its own overlay; --overlay describes both") {
    REQUIRE_CLI();
    const fs::path dir = scratch("overlays");
    write_overlay_runs(dir);
    const std::string reference = (dir / "ref.safetensors").string(), target = (dir / "target.safetensors").string();
    const std::string target_overlay = (dir / "target_overlay.json").string();

    const cli_result per_side = run_cli({"compare", reference, target, "--target-overlay", target_overlay,
                                         "--reference-overlay", (dir / "reference_overlay.json").string()}, dir);
    CHECK(per_side.status == 0);
    CHECK(per_side.err.find("describes both runs") == std::string::npos);
    CHECK(per_side.err.find("warning") == std::string::npos);

    const cli_result target_only = run_cli({"compare", reference, target, "--target-overlay", target_overlay}, dir);
    CHECK(target_only.status == 0);

    // The same overlay for both quantizes the float32 reference too: refused, and stderr said why it was used.
    const cli_result both = run_cli({"compare", reference, target, "--overlay", target_overlay}, dir);
    CHECK(both.status != 0);
    CHECK(both.err.find("--overlay '" + target_overlay + "' describes both runs") != std::string::npos);

    const cli_result mixed = run_cli({"compare", reference, target, "--overlay", target_overlay, "--target-overlay", target_overlay}, dir);
    CHECK(mixed.status == 2);
    CHECK(mixed.err.find("cannot be combined with --reference-overlay or --target-overlay") != std::string::npos);

    fs::create_directories(dir / "run_a");
    fs::create_directories(dir / "run_b");
    const float value = 1.0f;
    numgap::io::write_npy(dir / "run_a" / "q.npy", &value, std::vector<std::int64_t>{1});
    numgap::io::write_npy(dir / "run_b" / "q.npy", &value, std::vector<std::int64_t>{1});
    const cli_result directories =
        run_cli({"compare", (dir / "run_a").string(), (dir / "run_b").string(), "--overlay", target_overlay}, dir);
    CHECK(directories.status == 2);
    CHECK(directories.err.find("both runs are run directories") != std::string::npos);
    const cli_result directory_side = run_cli(
        {"compare", (dir / "run_a").string(), target, "--reference-overlay", target_overlay, "--target-overlay", target_overlay}, dir);
    CHECK(directory_side.status == 2);
    CHECK(directory_side.err.find("is a directory: it takes its graph from its own graph.json") != std::string::npos);
}

TEST_CASE("cli: a graph.json beside both run files, or a directory's own beside a target file, is warned about") {
    REQUIRE_CLI();
    const fs::path dir = scratch("overlay_beside");
    write_overlay_runs(dir);
    std::ofstream(dir / "graph.json") << R"({"nodes": [{"name": "q"}], "tensors": {"q": {"scale": 0.5, "zero_point": 128}}})";
    const std::string reference = (dir / "ref.safetensors").string(), target = (dir / "target.safetensors").string();
    const cli_result shared = run_cli({"compare", reference, target}, dir);
    CHECK(shared.status != 0); // the target's metadata applied to the reference, as the warning says
    CHECK(shared.err.find("warning: the reference and the target both take their graph and tensor metadata from '" +
                          (dir / "graph.json").string() + "'") != std::string::npos);

    // Naming one side's overlay leaves the other with the graph.json beside it: no warning, and it passes.
    const cli_result named = run_cli({"compare", reference, target, "--reference-overlay",
                                      (dir / "reference_overlay.json").string()}, dir);
    CHECK(named.err.find("warning") == std::string::npos);
    CHECK(named.status == 0);

    // A target file inside the reference directory reads the directory's own graph.json.
    fs::create_directories(dir / "run");
    const float values[4] = {0.0f, 1.0f, -1.0f, 2.0f};
    numgap::io::write_npy(dir / "run" / "q.npy", values, std::vector<std::int64_t>{4});
    std::ofstream(dir / "run" / "graph.json") << R"({"nodes": [{"name": "q"}]})";
    fs::copy_file(dir / "target.safetensors", dir / "run" / "target.safetensors");
    const cli_result inside = run_cli({"compare", (dir / "run").string(), (dir / "run" / "target.safetensors").string()}, dir);
    CHECK(inside.err.find("warning: the reference and the target both take") != std::string::npos);
}
}
