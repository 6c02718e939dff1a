// The CLI on ExecuTorch ETDump runs: `numgap compare REF DUMP --debug-buffer
// FILE` (and --reference-debug-buffer), the note saying which run was read
// (escaped for the terminal), DUMP#run=N, and the usage errors of the two flags.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <numgap/io/npy.hpp>

#include "../io/etdump_builder.hpp"
#include "cli_support.hpp"

namespace {
using namespace numgap_cli_test;
namespace et = numgap_test::etdump;

void write_bytes(const fs::path& path, const std::vector<std::byte>& bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

// reference/{a,b}.npy with a graph a -> b, and an ETDump of two runs whose
// second negates b, with its debug buffer.
void write_runs(const fs::path& dir) {
    const std::vector<float> a = {1.0f, -2.0f, 3.0f}, b = {0.5f, 4.0f, -1.0f}, negated = {-0.5f, -4.0f, 1.0f};
    fs::create_directories(dir / "reference");
    numgap::io::write_npy(dir / "reference" / "a.npy", a.data(), std::vector<std::int64_t>{3});
    numgap::io::write_npy(dir / "reference" / "b.npy", b.data(), std::vector<std::int64_t>{3});
    std::ofstream(dir / "reference" / "graph.json") << R"({"nodes": [{"name": "a"}, {"name": "b", "inputs": ["a"]}]})";
    et::debug_buffer buffer;
    const auto a_at = buffer.add(a), b_at = buffer.add(b), negated_at = buffer.add(negated);
    const auto event = [](const char* name, std::int64_t at) {
        return et::debug_event({.name = name}, et::tensor_value(et::tensor(et::float32, {3}, at)));
    };
    write_bytes(dir / "model.etdp", et::file({et::run_data("same", {event("a", a_at), event("b", b_at)}),
                                              et::run_data("broken", {event("a", a_at), event("b", negated_at)})}));
    write_bytes(dir / "debug.bin", buffer.bytes());
}
} // namespace

TEST_SUITE("cli") {

TEST_CASE("cli: an ETDump target with --debug-buffer; #run=N picks the run, the note names it") {
    REQUIRE_CLI();
    const fs::path dir = scratch("etdump");
    write_runs(dir);
    const std::string reference = (dir / "reference").string(), dump = (dir / "model.etdp").string(),
                      buffer = (dir / "debug.bin").string();

    const cli_result same = run_cli({"compare", reference, dump + "#run=0", "--debug-buffer", buffer}, dir);
    CHECK(same.status == 0);
    CHECK(same.err.find("read run #run=0 'same' of 2, 2 tensors from 2 debug events") != std::string::npos);

    const cli_result broken = run_cli({"compare", reference, dump + "#run=1", "--debug-buffer", buffer}, dir);
    CHECK(broken.status == 1);
    CHECK(broken.out.find("first divergence: b") != std::string::npos);

    // The ETDump as reference, the .npy directory as target.
    const cli_result swapped =
        run_cli({"compare", dump + "#run=1", reference, "--reference-debug-buffer", buffer}, dir);
    CHECK(swapped.status == 1);

    const cli_result unchosen = run_cli({"compare", reference, dump, "--debug-buffer", buffer}, dir);
    CHECK(unchosen.status == 2);
    CHECK(unchosen.err.find("holds 2 runs; choose one by appending #run=N") != std::string::npos);

    const cli_result no_buffer = run_cli({"compare", reference, dump + "#run=0"}, dir);
    CHECK(no_buffer.status == 2);
    CHECK(no_buffer.err.find("--debug-buffer FILE") != std::string::npos);

    // The run name comes from the file: printed through terminal_text, never raw.
    et::debug_buffer one;
    const auto at = one.add(std::vector<float>{1.0f, -2.0f, 3.0f});
    write_bytes(dir / "hostile.etdp",
                et::file({et::run_data("evil\x1b[2J\r", {et::debug_event({.name = "a"},
                                                                        et::tensor_value(et::tensor(et::float32, {3}, at)))})}));
    write_bytes(dir / "hostile.bin", one.bytes());
    const cli_result hostile =
        run_cli({"compare", reference, (dir / "hostile.etdp").string(), "--debug-buffer", (dir / "hostile.bin").string()}, dir);
    CHECK(hostile.err.find("read run #run=0 'evil") != std::string::npos);
    CHECK(hostile.err.find('\x1b') == std::string::npos);

    const cli_result not_etdump = run_cli({"compare", reference, reference, "--debug-buffer", buffer}, dir);
    CHECK(not_etdump.status == 2);
    CHECK(not_etdump.err.find("--debug-buffer names a debug buffer, but run") != std::string::npos);
}

} // TEST_SUITE
