// Pins down `numgap compare --shard I/N` and `numgap merge` end to end on
// generated run directories (fan-out, several divergences, a missing tensor,
// unmatched nodes on both sides, a hostile node name): for N = 1, 2 and 7 the
// merged JSON and CSV are byte for byte the unsharded ones, and stdout and
// the exit status are the same; partials that do not fit together (truncated,
// another comparison, a shard twice or missing) and bad --shard values are
// refused with exit 2 and a message naming the file or the flag.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <numgap/io/npy.hpp>

#include "cli_support.hpp"

namespace {
using namespace numgap_cli_test;

constexpr int node_count = 40;

// Node i reads i-1 and i/2 (fan-out); sizes vary so balancing by bytes matters.
// The target diverges at 7 (origin), 8 (propagated), 21 and 33 (origins);
// 12 is not dumped by the target; 17 has a hostile name; "ref_only" and
// "target_only" match nothing.
void write_shard_runs(const fs::path& dir) {
    for (const char* side : {"reference", "target"}) {
        const bool target = std::string(side) == "target";
        std::string graph = "{\"nodes\": [";
        for (int i = 0; i < node_count; ++i) {
            std::string inputs;
            if (i > 0) inputs += "\"t" + std::to_string(i - 1) + "\"";
            if (i > 3 && i / 2 != i - 1) inputs += ", \"t" + std::to_string(i / 2) + "\"";
            const std::string name = i == 17 ? "=cmd|' /C calc'!A0,\\\"q\\\"\\n\\u001b[2J" : "n" + std::to_string(i);
            graph += std::string(i ? ", " : "") + "{\"name\": \"" + name + "\", \"op\": \"op" + std::to_string(i % 4) +
                     "\", \"inputs\": [" + inputs + "], \"outputs\": [\"t" + std::to_string(i) + "\"]}";
            if (target && i == 12) continue;
            std::vector<float> values(std::size_t(1 + (i * 29) % 97));
            for (std::size_t k = 0; k < values.size(); ++k) values[k] = float((k * 5 + std::size_t(i)) % 13) - 6.0f;
            if (target && (i == 7 || i == 8 || i == 21 || i == 33))
                for (float& v : values) v = -v;
            fs::create_directories(dir / side);
            numgap::io::write_npy(dir / side / ("t" + std::to_string(i) + ".npy"), values.data(),
                                  std::vector<std::int64_t>{std::int64_t(values.size())});
        }
        const std::string own = target ? "target_only" : "ref_only";
        graph +=
            ", {\"name\": \"" + own + "\", \"op\": \"extra\", \"inputs\": [\"t3\"], \"outputs\": [\"" + own + "\"]}";
        const std::vector<float> extra = {1, 2, 3};
        numgap::io::write_npy(dir / side / (own + ".npy"), extra.data(), std::vector<std::int64_t>{3});
        std::ofstream(dir / side / "graph.json") << graph << "]}";
    }
}

std::vector<std::string> runs(const fs::path& dir) {
    return {(dir / "reference").string(), (dir / "target").string(), "--match", "name"};
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

// Writes the N partials of the comparison and returns their paths.
std::vector<std::string> shard_all(const fs::path& dir, int shards, const std::vector<std::string>& extra = {},
                                   const std::string& prefix = "partial") {
    std::vector<std::string> partials;
    for (int shard = 0; shard < shards; ++shard) {
        const std::string partial =
            (dir / (prefix + "_" + std::to_string(shard) + "_of_" + std::to_string(shards) + ".json")).string();
        const cli_result result = run_cli(
            with(with({"compare"}, runs(dir)),
                 with({"--shard", std::to_string(shard) + "/" + std::to_string(shards), "--json", partial}, extra)),
            dir);
        CHECK(result.status == 0);
        CHECK(result.out.find("partial report written") != std::string::npos);
        partials.push_back(partial);
    }
    return partials;
}
} // namespace

TEST_SUITE("cli") {
TEST_CASE("cli: merge of --shard partials equals the unsharded report for N = 1, 2, 7 (JSON, CSV, stdout, exit)") {
    REQUIRE_CLI();
    const fs::path dir = scratch("shard_merge");
    write_shard_runs(dir);
    const cli_result whole = run_cli(with(with({"compare"}, runs(dir)), {"--json", (dir / "whole.json").string(),
                                                                         "--csv", (dir / "whole.csv").string()}),
                                     dir);
    REQUIRE(whole.status == 1);
    const std::string whole_json = slurp(dir / "whole.json"), whole_csv = slurp(dir / "whole.csv");
    CHECK(whole_json.find("\"first_divergence\":\"n7\"") != std::string::npos);
    CHECK(whole_json.find("\"origins\":[\"n7\",\"n21\",\"n33\"]") != std::string::npos);
    CHECK(whole_json.find("\\u001b[2J") != std::string::npos); // the hostile name stays escaped
    CHECK(whole.out.find("\x1b[2J") == std::string::npos);
    for (int shards : {1, 2, 7}) {
        CAPTURE(shards);
        std::vector<std::string> merge = shard_all(dir, shards);
        // Given in reverse: the order of the partials does not matter.
        std::reverse(merge.begin(), merge.end());
        merge.insert(merge.begin(), "merge");
        const cli_result merged = run_cli(
            with(merge, {"--json", (dir / "merged.json").string(), "--csv", (dir / "merged.csv").string()}), dir);
        CHECK(merged.status == whole.status);
        CHECK(merged.out == whole.out);
        CHECK(merged.err == whole.err);
        CHECK(slurp(dir / "merged.json") == whole_json);
        CHECK(slurp(dir / "merged.csv") == whole_csv);
    }
}

TEST_CASE("cli: merge refuses truncated, foreign, repeated and missing partials; --shard checks its value") {
    REQUIRE_CLI();
    const fs::path dir = scratch("shard_merge_hostile");
    write_shard_runs(dir);
    const std::vector<std::string> partials = shard_all(dir, 2);
    auto refused = [&](const std::vector<std::string>& args, const std::string& expected) {
        const cli_result result = run_cli(args, dir);
        CAPTURE(result.err);
        CHECK(result.status == 2);
        CHECK(result.err.find(expected) != std::string::npos);
    };
    const std::string text = slurp(partials[1]);
    const std::string truncated = (dir / "truncated.json").string();
    std::ofstream(truncated, std::ios::binary) << text.substr(0, text.size() / 3);
    refused({"merge", partials[0], truncated}, "truncated.json:");
    const std::vector<std::string> foreign = shard_all(dir, 2, {"--metric", "cosine"}, "foreign");
    refused({"merge", partials[0], foreign[1]}, "come from different comparisons");
    refused({"merge", partials[0], partials[0]}, "is given twice");
    refused({"merge", partials[1]}, "shard 0 of 2 is missing");
    refused({"merge", (dir / "absent.json").string()}, "absent.json");
    refused({"merge"}, "merge needs the partial reports");
    refused(with(with({"compare"}, runs(dir)), {"--shard", "2/2", "--json", "p.json"}), "--shard expects I/N");
    refused(with(with({"compare"}, runs(dir)), {"--shard", "1/2"}), "needs --json");
    refused(with(with({"compare"}, runs(dir)), {"--shard", "0/2", "--json", "p.json", "--csv", "c.csv"}),
            "ask `numgap merge`");
}
} // TEST_SUITE("cli")
