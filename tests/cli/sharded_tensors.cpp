// Pins `numgap compare` on run directories whose graph.json stores a tensor
// as tensor-parallel shards (files, or keys of per-rank safetensors files): a
// sharded target (or reference) against an unsplit run passes, reports the logical shape and says how it was stored; a
// faulty shard fails and --dump-failing writes the whole tensor; shards that
// do not tile make the group an error naming the file, not a wrong number.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <numgap/io/npy.hpp>
#include <numgap/io/run_directory.hpp>

#include "../io/safetensors_builder.hpp"
#include "cli_support.hpp"

namespace {
using namespace numgap_cli_test;

void write_text(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

std::vector<float> columns(const std::vector<float>& matrix, std::int64_t rows, std::int64_t width, std::int64_t begin,
                           std::int64_t end) {
    std::vector<float> part;
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = begin; c < end; ++c) part.push_back(matrix[std::size_t(r * width + c)]);
    return part;
}

const std::string nodes = R"("nodes": [{"name": "x"}, {"name": "w", "inputs": ["x"]}])";

// `side` holds x and w = [4, 6] unsplit; `sharded_side` holds w as [4, 2] and
// [4, 4] shards along axis 1 (the second negated when `faulty`).
void write_runs(const fs::path& dir, const std::string& sharded_side, bool faulty = false,
                std::int64_t second_offset = 2) {
    std::vector<float> w(24), x = {1.0f, 2.0f, -3.0f};
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = float(i % 7) - 2.5f;
    for (const std::string side : {"reference", "target"}) {
        fs::remove_all(dir / side);
        fs::create_directories(dir / side);
        numgap::io::write_npy(dir / side / "x.npy", x.data(), std::vector<std::int64_t>{3});
        if (side != sharded_side) {
            write_text(dir / side / "graph.json", "{" + nodes + "}");
            numgap::io::write_npy(dir / side / "w.npy", w.data(), std::vector<std::int64_t>{4, 6});
            continue;
        }
        std::vector<float> first = columns(w, 4, 6, 0, 2), second = columns(w, 4, 6, 2, 6);
        if (faulty)
            for (float& v : second) v = -v;
        numgap::io::write_npy(dir / side / "w.rank0.npy", first.data(), std::vector<std::int64_t>{4, 2});
        numgap::io::write_npy(dir / side / "w.rank1.npy", second.data(), std::vector<std::int64_t>{4, 4});
        write_text(dir / side / "graph.json",
                   "{" + nodes + R"(, "tensors": {"w": {"shards": [{"file": "w.rank0.npy", "axis": 1, "offset": 0},
                        {"file": "w.rank1.npy", "axis": 1, "offset": )" +
                       std::to_string(second_offset) + "}]}}}");
    }
}

// The target of write_runs(dir, "reference") again as per-rank safetensors
// files repeating the keys "x" (replicated) and "w" (its columns 0-1 and
// 2-5), the second rank's "w" negated when `faulty`; graph.json names the
// shards by key.
void write_rank_target(const fs::path& dir, bool faulty = false) {
    std::vector<float> w(24), x = {1.0f, 2.0f, -3.0f};
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = float(i % 7) - 2.5f;
    std::vector<float> first = columns(w, 4, 6, 0, 2), second = columns(w, 4, 6, 2, 6);
    if (faulty)
        for (float& v : second) v = -v;
    fs::remove_all(dir / "target");
    using numgap_test::bytes_of;
    write_text(
        dir / "target" / "rank0" / "dump.safetensors",
        numgap_test::safetensors_file({{"x", "F32", "[3]", bytes_of(x)}, {"w", "F32", "[4,2]", bytes_of(first)}}));
    write_text(
        dir / "target" / "rank1" / "dump.safetensors",
        numgap_test::safetensors_file({{"x", "F32", "[3]", bytes_of(x)}, {"w", "F32", "[4,4]", bytes_of(second)}}));
    write_text(dir / "target" / "graph.json", "{" + nodes + R"(, "tensors": {
        "x": {"shards": [{"file": "rank0/dump.safetensors", "key": "x", "axis": 0, "offset": 0}]},
        "w": {"shards": [{"file": "rank0/dump.safetensors", "key": "w", "axis": 1, "offset": 0},
                         {"file": "rank1/dump.safetensors", "key": "w", "axis": 1, "offset": 2}]}}})");
}

} // namespace

TEST_SUITE("cli") {
TEST_CASE("cli: shards stored as keys of per-rank safetensors files compare like shard files") {
    REQUIRE_CLI();
    const fs::path dir = scratch("sharded_safetensors_keys");
    write_runs(dir, "target");
    const std::vector<std::string> compare = {"compare", (dir / "reference").string(), (dir / "target").string(),
                                              "--csv", (dir / "files.csv").string()};
    REQUIRE(run_cli(compare, dir).status == 0);
    write_rank_target(dir);
    std::vector<std::string> keyed = compare;
    keyed.back() = (dir / "keys.csv").string();
    const cli_result result = run_cli(keyed, dir);
    CHECK(result.status == 0);
    CHECK(result.out.find("2 groups: 2 passed, 0 failed") != std::string::npos);
    CHECK(slurp(dir / "keys.csv") == slurp(dir / "files.csv"));
    // --shard I/N (group bytes from the keys' headers) and merge give the same rows.
    for (const char* part : {"0", "1"})
        CHECK(run_cli({"compare", (dir / "reference").string(), (dir / "target").string(), "--shard",
                       std::string(part) + "/2", "--json", (dir / (std::string(part) + ".json")).string()},
                      dir)
                  .status == 0);
    CHECK(
        run_cli({"merge", (dir / "0.json").string(), (dir / "1.json").string(), "--csv", (dir / "m.csv").string()}, dir)
            .status == 0);
    CHECK(slurp(dir / "m.csv") == slurp(dir / "keys.csv"));

    write_rank_target(dir, true);
    const cli_result faulty = run_cli(keyed, dir);
    CHECK(faulty.status == 1);
    CHECK(faulty.out.find("first divergence: w") != std::string::npos);
}

TEST_CASE("cli: a sharded target or reference compares with an unsplit run, reporting the logical shape") {
    REQUIRE_CLI();
    const fs::path dir = scratch("sharded_tensors");
    for (const char* sharded : {"target", "reference"}) {
        CAPTURE(sharded);
        write_runs(dir, sharded);
        const cli_result result = run_cli({"compare", (dir / "reference").string(), (dir / "target").string(), "--csv",
                                           (dir / "r.csv").string()},
                                          dir);
        CHECK(result.status == 0);
        CHECK(result.out.find("2 groups: 2 passed, 0 failed") != std::string::npos);
        const std::string csv = slurp(dir / "r.csv");
        CHECK(csv.find(",4x6,") != std::string::npos);
        CHECK(csv.find(std::string(sharded) + " stored as 2 shards along axis 1") != std::string::npos);
    }
    // --shard I/N (group bytes from the shards' headers) and merge give the same rows.
    for (const char* part : {"0", "1"})
        CHECK(run_cli({"compare", (dir / "reference").string(), (dir / "target").string(), "--shard",
                       std::string(part) + "/2", "--json", (dir / (std::string(part) + ".json")).string()},
                      dir)
                  .status == 0);
    CHECK(run_cli({"merge", (dir / "0.json").string(), (dir / "1.json").string(), "--csv", (dir / "m.csv").string()}, dir)
              .status == 0);
    CHECK(slurp(dir / "m.csv") == slurp(dir / "r.csv"));
}

TEST_CASE("cli: a faulty shard fails its group, and --dump-failing writes the whole sharded tensor") {
    REQUIRE_CLI();
    const fs::path dir = scratch("sharded_faulty");
    write_runs(dir, "target", true);
    const cli_result result = run_cli({"compare", (dir / "reference").string(), (dir / "target").string(),
                                       "--dump-failing", (dir / "failing").string()},
                                      dir);
    CHECK(result.status == 1);
    CHECK(result.out.find("first divergence: w") != std::string::npos);
    const numgap::io::run_directory dumped = numgap::io::run_directory::open(dir / "failing");
    const numgap::io::loaded_tensor target = dumped.load("001_w.target");
    const numgap::io::loaded_tensor reference = dumped.load("001_w.reference");
    REQUIRE(target.view().size() == 24);
    const float* t = static_cast<const float*>(target.view().data());
    const float* r = static_cast<const float*>(reference.view().data());
    for (std::int64_t i = 0; i < 24; ++i) {
        CAPTURE(i);
        CHECK(t[i] == (i % 6 < 2 ? r[i] : -r[i])); // the negated shard holds columns 2..5
    }
}

TEST_CASE("cli: shards that leave a gap make the group an error naming the shard, never a number") {
    REQUIRE_CLI();
    const fs::path dir = scratch("sharded_gap");
    write_runs(dir, "target", false, 3);
    const cli_result result = run_cli({"compare", (dir / "reference").string(), (dir / "target").string(), "--csv",
                                       (dir / "r.csv").string()},
                                      dir);
    CHECK(result.status == 2); // an error group, as for any unreadable tensor
    CHECK(result.err.find("group 'w'") != std::string::npos);
    const std::string csv = slurp(dir / "r.csv");
    CHECK(csv.find(",error,") != std::string::npos);
    CHECK(csv.find("shard file 'w.rank1.npy' starts at offset 3 but the shards before it end at 2 (a gap)") !=
          std::string::npos);
}
}
