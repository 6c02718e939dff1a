// Pins down compare_shard + merge_partial_reports: for N = 1, 2, 3 and 7 the
// merged report is the unsharded one, byte for byte in JSON and CSV, on a
// generated comparison with fan-out, several divergences (origins and
// propagated failures), a missing and an error row, unmatched nodes on both
// sides, a hostile name, a swapped ambiguous pair the repair pass fixes and a
// structural shape mismatch repaired with an unmatched alternative; and the
// plan balances bytes, deterministically, keeping repair units together.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <numgap/compare/compare_runs.hpp>
#include <numgap/compare/compare_shard.hpp>
#include <numgap/compare/shard_plan.hpp>
#include <numgap/graph/basic_graph.hpp>
#include <numgap/metric/metric_set.hpp>
#include <numgap/report/csv.hpp>
#include <numgap/report/json.hpp>
#include <numgap/report/merge_partial_reports.hpp>
#include <numgap/report/partial_report_json.hpp>
#include <numgap/report/read_partial_report.hpp>

namespace {
constexpr std::size_t node_count = 48;

std::string reference_name(std::size_t i) {
    // One hostile name: quotes, a comma, a newline, a formula and terminal escape.
    return i == 17 ? "=HYPERLINK(\"x\"),\n\x1b[31mevil" : "node_" + std::to_string(i);
}

// Fan-out: node i reads i-1 and i/2, so early nodes feed many later ones.
numgap::basic_graph generated_graph(bool target) {
    numgap::basic_graph graph;
    for (std::size_t i = 0; i < node_count; ++i) {
        std::vector<std::size_t> producers;
        if (i > 0) producers.push_back(i - 1);
        if (i > 3 && i / 2 != i - 1) producers.push_back(i / 2);
        graph.add_node(target ? "t_" + std::to_string(i) : reference_name(i), "op" + std::to_string(i % 5), producers);
    }
    if (target) graph.add_node("t_extra", "conv", {std::size_t(19)}); // the right target for reference node 20
    return graph;
}

// Varied sizes, so balancing by bytes matters; the siblings 10 and 11 alike, so only values tell them apart.
std::size_t length_of(std::size_t i) { return 1 + ((i == 11 ? 10 : i) * 37) % 61; }

struct run_values {
    std::map<std::string, std::vector<float>> values;
    std::map<std::string, numgap::tensor_view> views() const {
        std::map<std::string, numgap::tensor_view> result;
        for (const auto& [key, data] : values)
            result.emplace(key, numgap::tensor_view(data.data(), {std::int64_t(data.size())}));
        return result;
    }
};

std::vector<float> values_of(std::size_t i, float scale = 1) {
    std::vector<float> data(length_of(i));
    for (std::size_t k = 0; k < data.size(); ++k) data[k] = scale * float((k * 7 + i * 3) % 11) - 4.5f * scale;
    return data;
}

run_values reference_values() {
    run_values run;
    for (std::size_t i = 0; i < node_count; ++i) run.values["r" + std::to_string(i)] = values_of(i);
    return run;
}

// Divergences at 5 (origin), 6 (reads 5: propagated), 15 and 40 (origins);
// 30 not dumped; 33 the wrong size; t_extra holds node 20's values, t_20 another shape.
run_values target_values() {
    run_values run;
    for (std::size_t i = 0; i < node_count; ++i) {
        if (i == 30) continue;
        const bool diverges = i == 5 || i == 6 || i == 15 || i == 40;
        run.values["t" + std::to_string(i)] = values_of(i, diverges ? -1.0f : 1.0f);
    }
    run.values["t33"].push_back(1);
    run.values["t20"] = {1, 2, 3};
    run.values["t_extra"] = values_of(20);
    return run;
}

numgap::match_result generated_matches() {
    numgap::match_result matches;
    for (std::size_t i = 0; i < node_count; ++i) {
        if (i == 25) {
            matches.unmatched_reference.push_back(i);
            matches.unmatched_target.push_back(i);
            continue;
        }
        numgap::match_group group;
        group.reference_nodes = {i};
        group.reference_output_node = i;
        // The matcher's guess swaps 10 and 11 (ambiguous with each other).
        const std::size_t target = i == 10 ? 11 : i == 11 ? 10 : i;
        group.target_nodes = {target};
        group.target_output_node = target;
        group.reference_tensor = "r" + std::to_string(i);
        group.target_tensor = "t" + std::to_string(target);
        group.strategy = i == 10 || i == 11 || i == 20 ? "structure" : "name";
        group.confidence = group.strategy == "structure" ? 0.5 : 1.0;
        if (i == 10 || i == 11) group.ambiguous_with = {i == 10 ? std::size_t(10) : std::size_t(11)};
        if (i == 20) group.ambiguous_with = {node_count}; // t_extra
        matches.groups.push_back(group);
    }
    matches.unmatched_target.push_back(node_count);
    return matches;
}

std::vector<std::uint64_t> group_bytes(const numgap::match_result& matches) {
    std::vector<std::uint64_t> bytes;
    for (const numgap::match_group& group : matches.groups)
        bytes.push_back(4 *
                        (length_of(group.reference_nodes.front()) + length_of(group.target_output_node % node_count)));
    return bytes;
}

numgap::compare_options serial() {
    numgap::compare_options options;
    options.threads = 2;
    return options;
}
} // namespace

TEST_SUITE("compare") {
TEST_CASE("compare_shard: merging N = 1, 2, 3, 7 partials gives the unsharded report byte for byte") {
    const auto reference = generated_graph(false), target = generated_graph(true);
    const auto matches = generated_matches();
    const run_values reference_data = reference_values(), target_data = target_values();
    const auto reference_views = reference_data.views(), target_views = target_data.views();
    const auto metrics = numgap::metric_set::defaults();
    const auto whole =
        numgap::compare_runs(reference, target, matches, reference_views, target_views, metrics, serial());
    // The fixture exercises what it claims to.
    CHECK(whole.summary.failed >= 4);
    CHECK(whole.summary.origins.size() >= 3);
    CHECK(whole.summary.first_divergence == "node_5");
    CHECK(whole.summary.missing == 1);
    CHECK(whole.summary.errors == 1);
    CHECK(whole.summary.repaired >= 3);
    CHECK(whole.summary.unmatched_reference == 1);
    CHECK(whole.summary.unmatched_target >= 2);
    const std::string whole_json = numgap::to_json(whole), whole_csv = numgap::to_csv(whole);
    const auto bytes = group_bytes(matches);
    for (std::size_t shards : {1, 2, 3, 7}) {
        CAPTURE(shards);
        std::vector<numgap::partial_report> partials;
        std::vector<std::string> names;
        // Shards in reverse: merge must not depend on the order it is given them.
        for (std::size_t shard = shards; shard-- > 0;) {
            const auto partial = numgap::compare_shard(reference, target, matches, reference_views, target_views,
                                                       metrics, serial(), {shard, shards}, bytes, "options");
            names.push_back("shard" + std::to_string(shard) + ".json");
            partials.push_back(numgap::parse_partial_report(numgap::to_partial_json(partial), names.back()));
        }
        const auto merged = numgap::merge_partial_reports(partials, names);
        CHECK(numgap::to_json(merged) == whole_json);
        CHECK(numgap::to_csv(merged) == whole_csv);
        CHECK(merged.summary.origins == whole.summary.origins);
    }
}

TEST_CASE("compare_shard: hostile sets of partials are refused, naming the file and the reason") {
    const auto reference = generated_graph(false), target = generated_graph(true);
    const auto matches = generated_matches();
    const run_values reference_data = reference_values(), target_data = target_values();
    const auto reference_views = reference_data.views(), target_views = target_data.views();
    const auto bytes = group_bytes(matches);
    auto shard = [&](std::size_t index, std::size_t count, const char* options) {
        return numgap::compare_shard(reference, target, matches, reference_views, target_views,
                                     numgap::metric_set::defaults(), serial(), {index, count}, bytes, options);
    };
    const auto a = shard(0, 2, "options"), b = shard(1, 2, "options");
    const std::vector<std::string> names = {"a.json", "b.json"};
    auto refused = [&](std::vector<numgap::partial_report> partials, const std::string& expected) {
        try {
            (void)numgap::merge_partial_reports(std::move(partials), names);
            FAIL("merged: " << expected);
        } catch (const numgap::error& failure) {
            CAPTURE(failure.what());
            CHECK(std::string(failure.what()).find(expected) != std::string::npos);
        }
    };
    refused({a, shard(1, 2, "other options")}, "different comparisons (fingerprint");
    refused({a, a}, "shard 0 is given twice ('a.json' and 'b.json')");
    refused({a}, "shard 1 of 2 is missing");
    refused({b}, "shard 0 of 2 is missing");
    refused({}, "none was given");
    auto stolen = b;
    stolen.owned_groups.push_back(a.owned_groups.front());
    refused({a, stolen}, "groups in all");
    auto extra_row = b;
    extra_row.rows.push_back(a.rows.front());
    refused({a, extra_row}, "which its shard does not own");
    CHECK_THROWS_AS(shard(2, 2, "options"), numgap::error);
}

TEST_CASE("compare_shard: a partial's JSON round-trips; truncated or altered JSON is refused with file:line:column") {
    const auto reference = generated_graph(false), target = generated_graph(true);
    const auto matches = generated_matches();
    const run_values reference_data = reference_values(), target_data = target_values();
    const auto partial =
        numgap::compare_shard(reference, target, matches, reference_data.views(), target_data.views(),
                              numgap::metric_set::defaults(), serial(), {0, 1}, group_bytes(matches), "options");
    const std::string text = numgap::to_partial_json(partial);
    CHECK(numgap::to_partial_json(numgap::parse_partial_report(text, "p.json")) == text);
    // The hostile name stays escaped in the partial itself.
    CHECK(text.find("\\n\\u001b[31mevil") != std::string::npos);
    auto refused = [&](const std::string& hostile, const std::string& expected) {
        try {
            (void)numgap::parse_partial_report(hostile, "p.json");
            FAIL("accepted: " << expected);
        } catch (const numgap::error& failure) {
            CAPTURE(failure.what());
            CHECK(std::string(failure.what()).find(expected) != std::string::npos);
            CHECK(std::string(failure.what()).starts_with("p.json:"));
        }
    };
    for (std::size_t cut : {std::size_t(0), std::size_t(10), text.size() / 2, text.size() - 3})
        refused(text.substr(0, cut), "p.json:");
    auto replaced = [&](const std::string& from, const std::string& to) {
        std::string altered = text;
        const std::size_t at = altered.find(from);
        REQUIRE(at != std::string::npos);
        return altered.replace(at, from.size(), to);
    };
    refused(replaced("\"format_version\":1", "\"format_version\":2"), "format_version 2");
    refused(replaced("numgap-partial-report", "numgap-report"), "not a numgap partial report");
    refused(replaced("\"shard\":0", "\"shard\":1"), "\"shard\" must be a whole number from 0 to 0");
    refused(replaced("\"status\":\"pass\"", "\"status\":\"great\""), "unknown value 'great'");
    refused(replaced("\"from\":\"group\",\"index\":0", "\"from\":\"group\",\"index\":9999"), "\"index\"");
    refused(replaced("\"fails_every_candidate\":false", "\"fails_every_candidate\":0"), "true or false");
    refused(replaced("\"ref_tensor\":", "\"surprise\":1,\"ref_tensor\":"), "unknown key \"surprise\"");
    refused(replaced("\"count\":", "\"count\":-"), "\"count\"");
    refused(replaced("\"owned_groups\":[0,", "\"owned_groups\":[1,"), "ascending");
}

TEST_CASE("plan_shards: balances bytes greedily, deterministically, and keeps repair units in one shard") {
    numgap::match_result matches;
    for (std::size_t i = 0; i < 6; ++i) {
        numgap::match_group group;
        group.reference_nodes = {i};
        group.target_nodes = {i};
        group.target_output_node = i;
        matches.groups.push_back(group);
    }
    matches.groups[4].ambiguous_with = {5}; // 4 and 5 form one unit
    matches.groups[1].ambiguous_with = {6}; // an unmatched target node: reported by group 1's shard
    const std::vector<std::uint64_t> bytes = {100, 10, 60, 50, 20, 20};
    const auto plan = numgap::plan_shards(matches, 6, 7, bytes, 2);
    // Units by weight: 100 (g0), 60 (g2), 50 (g3), 40 (g4+g5), 10 (g1).
    CHECK(plan.group_shard == std::vector<std::size_t>{0, 1, 1, 1, 0, 0});
    CHECK(plan.shard_bytes == std::vector<std::uint64_t>{140, 120});
    CHECK(plan.target_node_shard[6] == 1);
    CHECK(plan.target_node_shard[4] == plan.target_node_shard[5]);
    CHECK(numgap::plan_shards(matches, 6, 7, bytes, 2).group_shard == plan.group_shard);
    const auto one = numgap::plan_shards(matches, 6, 7, bytes, 1);
    CHECK(one.group_shard == std::vector<std::size_t>(6, 0));
    CHECK_THROWS_AS(numgap::plan_shards(matches, 6, 7, bytes, 0), numgap::error);
    matches.groups[0].ambiguous_with = {99};
    CHECK_THROWS_WITH_AS(numgap::plan_shards(matches, 6, 7, bytes, 2), doctest::Contains("target node 99"),
                         numgap::error);
}
} // TEST_SUITE("compare")
