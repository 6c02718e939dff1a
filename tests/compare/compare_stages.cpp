// Pins down compare_runs' two stages: compare_groups packs every group's
// outcome (compared_groups.hpp) and build_report makes the same report from
// it after the tensor sources are gone; every field of a row survives the
// packing (shapes above rank four, quantization, messages, error kinds and
// locations, metrics that do not follow the set's columns), and build_report
// refuses graphs or a match result that are not the ones compared. The
// repair path through the stages: tests/compare/repair_pairings.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <numgap/compare/build_report.hpp>
#include <numgap/compare/compare_groups.hpp>
#include <numgap/compare/compare_runs.hpp>
#include <numgap/compare/compared_groups.hpp>
#include <numgap/core/error.hpp>
#include <numgap/graph/basic_graph.hpp>
#include <numgap/match/match_by_handle.hpp>
#include <numgap/match/match_by_name.hpp>
#include <numgap/metric/metric_set.hpp>
#include <numgap/report/analyze_report.hpp>
#include <numgap/report/csv.hpp>
#include <numgap/report/json.hpp>

#include "../io/temp_directory.hpp"
#include "chain_graph.hpp"

namespace {
// Tensors that give every kind of row: pass (x, a), fail (b), a rank-5 shape
// (c), per-tensor quantized int8 (q), missing from the target (m), a shape
// mismatch (s: error with kind shape), and extra_ref/extra_target unmatched
// (extra_ref's tensor dumped). The values live here, so destroying a run
// destroys what its views point at.
struct stage_values {
    std::map<std::string, std::vector<float>> floats;
    std::vector<std::int8_t> quantized;
    std::vector<std::int64_t> shape5{1, 2, 1, 2, 2};

    std::map<std::string, numgap::tensor_view> source() const {
        std::map<std::string, numgap::tensor_view> views;
        for (const auto& [key, data] : floats)
            views.emplace(key, key == "c" ? numgap::tensor_view(data.data(), std::span(shape5))
                                          : numgap::tensor_view(data.data(), {std::int64_t(data.size())}));
        if (!quantized.empty())
            views.emplace("q", numgap::tensor_view(quantized.data(), numgap::dtype::int8, {4})
                                   .with_quantization(numgap::quantization::per_tensor(0.5f, 1)));
        return views;
    }
};

std::unique_ptr<stage_values> stage_reference_values() {
    auto run = std::make_unique<stage_values>();
    run->floats = {{"x", {1, 2, 3, 4}},  {"a", {0.5f, -1, 2, 0.25f}},
                   {"b", {3, -2, 1, 5}}, {"c", {1, 2, 3, 4, 5, 6, 7, 8}},
                   {"m", {1, 2}},        {"s", {1, 2, 3}},
                   {"extra_ref", {4, 4}}};
    run->quantized = {2, 4, 6, 8};
    return run;
}

std::unique_ptr<stage_values> stage_target_values() {
    auto run = stage_reference_values();
    run->floats["b"] = {-3, 2, -1, -5};
    run->floats.erase("m");
    run->floats["s"] = {1, 2};
    run->floats.erase("extra_ref");
    run->floats["extra_target"] = {1};
    return run;
}

const std::vector<std::string> stage_reference_names{"x", "a", "b", "c", "q", "m", "s", "extra_ref"};
const std::vector<std::string> stage_target_names{"x", "a", "b", "c", "q", "m", "s", "extra_target"};

numgap::group_report stage_row(const numgap::comparison_report& report, const std::string& node) {
    for (const auto& group : report.groups)
        if (!group.reference_nodes.empty() && group.reference_nodes.back() == node) return group;
    FAIL("no row for " << node);
    return report.groups.front();
}

numgap::compare_options stage_threads(std::size_t count) {
    numgap::compare_options options;
    options.threads = count;
    return options;
}
} // namespace

TEST_SUITE("compare") {
TEST_CASE("compare_groups + build_report: the report of compare_runs, built after the sources are destroyed") {
    const auto reference_graph = numgap_test::chain_graph(stage_reference_names);
    const auto target_graph = numgap_test::chain_graph(stage_target_names);
    const auto matches = numgap::match_by_name(reference_graph, target_graph);
    const auto metrics = numgap::metric_set::defaults();
    for (const std::size_t thread_count : {1u, 2u}) {
        CAPTURE(thread_count);
        std::string expected_json, expected_csv;
        {
            const auto reference = stage_reference_values(), target = stage_target_values();
            const auto whole = numgap::compare_runs(reference_graph, target_graph, matches, reference->source(),
                                                    target->source(), metrics, stage_threads(thread_count));
            expected_json = numgap::to_json(whole);
            expected_csv = numgap::to_csv(whole);
        }
        std::optional<numgap::compared_groups> compared;
        {
            auto reference = stage_reference_values(), target = stage_target_values();
            compared = numgap::compare_groups(reference_graph, target_graph, matches, reference->source(),
                                              target->source(), metrics, stage_threads(thread_count));
            reference.reset(); // every tensor freed: build_report must not look at them
            target.reset();
        }
        CHECK(compared->size() == matches.groups.size());
        CHECK(compared->metric_names() == metrics.names());
        // Handed over, the graphs and the match result are freed on the way: the same report.
        {
            const auto reference = stage_reference_values(), target = stage_target_values();
            numgap::basic_graph reference_copy = reference_graph, target_copy = target_graph;
            numgap::match_result matches_copy = matches;
            const auto handed_over =
                numgap::build_report(numgap::compare_groups(reference_graph, target_graph, matches, reference->source(),
                                                            target->source(), metrics, stage_threads(thread_count)),
                                     std::move(reference_copy), std::move(target_copy), std::move(matches_copy));
            CHECK(numgap::to_json(handed_over) == expected_json);
            CHECK(numgap::to_csv(handed_over) == expected_csv);
            // Lvalues, const or not, are only read: the caller's graphs stay whole.
            numgap::basic_graph kept_reference = reference_graph, kept_target = target_graph;
            numgap::match_result kept_matches = matches;
            const auto kept =
                numgap::build_report(numgap::compare_groups(reference_graph, target_graph, matches, reference->source(),
                                                            target->source(), metrics, stage_threads(thread_count)),
                                     kept_reference, kept_target, kept_matches);
            CHECK(numgap::to_json(kept) == expected_json);
            CHECK(kept_reference.num_nodes() == reference_graph.num_nodes());
            CHECK(kept_target.num_nodes() == target_graph.num_nodes());
            CHECK(kept_matches.groups.size() == matches.groups.size());
        }
        const auto report = numgap::build_report(std::move(*compared), reference_graph, target_graph, matches);
        CHECK(numgap::to_json(report) == expected_json);
        CHECK(numgap::to_csv(report) == expected_csv);

        // What the packing had to carry, field by field.
        CHECK(stage_row(report, "x").status == numgap::group_status::pass);
        CHECK(stage_row(report, "b").status == numgap::group_status::fail);
        REQUIRE(stage_row(report, "b").metrics.size() == 3);
        CHECK(stage_row(report, "b").metrics[0].name == "cosine");
        CHECK(stage_row(report, "b").metrics[0].value == doctest::Approx(-1.0));
        CHECK(stage_row(report, "b").metrics[0].rule.has_value());
        CHECK_FALSE(stage_row(report, "b").metrics[0].passed);
        CHECK(stage_row(report, "b").count == 4);
        CHECK(stage_row(report, "c").shape == std::vector<std::int64_t>{1, 2, 1, 2, 2});
        CHECK(stage_row(report, "a").shape == std::vector<std::int64_t>{4});
        CHECK(stage_row(report, "q").quantization_reference == "scale=0.5 zero_point=1");
        CHECK(stage_row(report, "q").dtype_reference == numgap::dtype::int8);
        CHECK(stage_row(report, "m").status == numgap::group_status::missing);
        CHECK(stage_row(report, "m").message == "target tensor 'm' was not dumped");
        CHECK(stage_row(report, "s").status == numgap::group_status::error);
        REQUIRE(stage_row(report, "s").error_detail.has_value());
        CHECK(stage_row(report, "s").error_detail->kind == numgap::error_kind::shape);
        CHECK(stage_row(report, "extra_ref").status == numgap::group_status::unmatched);
        CHECK(stage_row(report, "extra_ref").reference_tensor == "extra_ref"); // dumped: held when compared
        CHECK(report.summary.unmatched_reference_dumped == 1);
        CHECK(report.summary.first_divergence == "b");
    }
}

TEST_CASE("compare_groups: an unmatched node whose tensor the run does not hold names no tensor") {
    const auto reference_graph = numgap_test::chain_graph({"x", "lonely"});
    const auto target_graph = numgap_test::chain_graph({"x"});
    const auto matches = numgap::match_by_name(reference_graph, target_graph);
    const auto values = stage_reference_values(); // holds x, not "lonely"
    auto compared = numgap::compare_groups(reference_graph, target_graph, matches, values->source(), values->source(),
                                           numgap::metric_set::defaults());
    const auto report = numgap::build_report(std::move(compared), reference_graph, target_graph, matches);
    CHECK(stage_row(report, "lonely").status == numgap::group_status::unmatched);
    CHECK(stage_row(report, "lonely").reference_tensor.empty());
    CHECK(report.summary.unmatched_reference_dumped == 0);
}

TEST_CASE("pack_outcome and unpack_outcome: every outcome field of a row comes back, columns or not") {
    numgap::detail::metric_columns columns;
    columns.names = {"cosine", "atol"};
    columns.rules = {numgap::pass_rule{numgap::comparison::ge, 0.99}, std::nullopt};
    const auto round_trip = [&](numgap::group_report row) {
        numgap::detail::group_outcome outcome;
        double values[2] = {};
        unsigned char passed[2] = {};
        numgap::detail::pack_outcome(row, outcome, columns, values, passed);
        numgap::group_report back;
        numgap::detail::unpack_outcome(outcome, back, columns, values, passed);
        return back;
    };
    numgap::group_report row;
    row.status = numgap::group_status::fail;
    row.count = 120;
    row.dtype_reference = numgap::dtype::float32;
    row.dtype_target = numgap::dtype::bfloat16;
    for (const std::size_t rank : {0u, 1u, 4u, 5u, 9u}) {
        CAPTURE(rank);
        row.shape.assign(rank, 3);
        row.metrics = {{"cosine", 0.5, columns.rules[0], false}, {"atol", 2.5, std::nullopt, true}};
        const numgap::group_report back = round_trip(row);
        CHECK(back.status == row.status);
        CHECK(back.count == 120);
        CHECK(back.dtype_reference == numgap::dtype::float32);
        CHECK(back.dtype_target == numgap::dtype::bfloat16);
        CHECK(back.shape == row.shape);
        REQUIRE(back.metrics.size() == 2);
        for (std::size_t m = 0; m < 2; ++m) {
            CHECK(back.metrics[m].name == row.metrics[m].name);
            CHECK(back.metrics[m].value == row.metrics[m].value);
            CHECK(back.metrics[m].rule == row.metrics[m].rule);
            CHECK(back.metrics[m].passed == row.metrics[m].passed);
        }
        CHECK(back.message.empty());
        CHECK_FALSE(back.error_detail.has_value());
    }
    // Metrics that do not follow the columns (another rule, another order, one more) are kept whole.
    const std::vector<std::vector<numgap::report_metric>> odd{
        {{"cosine", 0.5, numgap::pass_rule{numgap::comparison::ge, 0.5}, true}, {"atol", 1, std::nullopt, true}},
        {{"atol", 1, std::nullopt, true}, {"cosine", 0.5, columns.rules[0], false}},
        {{"cosine", 0.5, columns.rules[0], false}, {"atol", 1, std::nullopt, true}, {"mse", 3, std::nullopt, true}},
        {{"cosine", 0.5, columns.rules[0], false}}};
    for (const auto& metrics : odd) {
        row.metrics = metrics;
        const numgap::group_report back = round_trip(row);
        REQUIRE(back.metrics.size() == metrics.size());
        for (std::size_t m = 0; m < metrics.size(); ++m) {
            CHECK(back.metrics[m].name == metrics[m].name);
            CHECK(back.metrics[m].value == metrics[m].value);
            CHECK(back.metrics[m].rule == metrics[m].rule);
            CHECK(back.metrics[m].passed == metrics[m].passed);
        }
    }
    // An error row: no metrics, its message, quantization text and error kind and location.
    row.status = numgap::group_status::error;
    row.metrics.clear();
    row.message = "cannot read 'x.npy': truncated";
    row.quantization_reference = "scale=0.5 zero_point=1";
    row.quantization_target = "scale=0.25 zero_point=0";
    row.error_detail = numgap::group_error{numgap::error_kind::io, numgap::error_location::at_item("x.npy", "x")};
    const numgap::group_report back = round_trip(row);
    CHECK(back.status == numgap::group_status::error);
    CHECK(back.metrics.empty());
    CHECK(back.message == row.message);
    CHECK(back.quantization_reference == row.quantization_reference);
    CHECK(back.quantization_target == row.quantization_target);
    REQUIRE(back.error_detail.has_value());
    CHECK(back.error_detail->kind == numgap::error_kind::io);
    CHECK(back.error_detail->where.file == "x.npy");
    CHECK(back.error_detail->where.item == "x");
}

TEST_CASE("build_report: graphs or a match result other than those compared are refused") {
    const auto reference_graph = numgap_test::chain_graph({"x", "a"});
    const auto target_graph = numgap_test::chain_graph({"x", "a"});
    const auto matches = numgap::match_by_name(reference_graph, target_graph);
    const auto values = stage_reference_values();
    const auto compare = [&] {
        return numgap::compare_groups(reference_graph, target_graph, matches, values->source(), values->source(),
                                      numgap::metric_set::defaults());
    };
    const auto bigger = numgap_test::chain_graph({"x", "a", "b"});
    numgap::match_result fewer = matches;
    fewer.groups.pop_back();
    numgap::match_result other_unmatched = matches;
    other_unmatched.unmatched_target.push_back(1);
    const auto refused = [](auto build) {
        try {
            build();
        } catch (const numgap::error& failure) {
            CHECK(failure.kind() == numgap::error_kind::usage);
            return std::string(failure.what());
        }
        FAIL("build_report accepted what compare_groups did not compare");
        return std::string();
    };
    CHECK(numgap_test::contains(refused([&] { numgap::build_report(compare(), bigger, target_graph, matches); }),
                                "the graphs (3 and 2 nodes) or the match result (2 groups) are not those "
                                "compare_groups compared (2 and 2 nodes, 2 groups)"));
    CHECK(numgap_test::contains(refused([&] { numgap::build_report(compare(), reference_graph, bigger, matches); }),
                                "(2 and 3 nodes)"));
    CHECK(numgap_test::contains(refused([&] { numgap::build_report(compare(), reference_graph, target_graph, fewer); }),
                                "(1 groups)"));
    CHECK(numgap_test::contains(
        refused([&] { numgap::build_report(compare(), reference_graph, target_graph, other_unmatched); }),
        "unmatched nodes are not those"));
    // The same graphs and match result build it.
    CHECK(numgap::build_report(compare(), reference_graph, target_graph, matches).summary.passed == 2);
}

TEST_CASE("build_report: its analysis, from the rows it made, equals analyze_report's by name") {
    // build_report knows each reference node's row and skips analyze_report's
    // lookup of every node by name; re-analysing the report by name must
    // change nothing. Random DAGs with fused groups (a target node carrying
    // several handles), dropped and extra nodes, and failing nodes spread so
    // that some are origins and some propagated. In odd rounds the reference
    // graph stores its nodes out of topological order (edges set afterwards),
    // so the snapshot's order is not the graph's and the mapping between them counts.
    std::mt19937 random(20261206);
    std::size_t fused_groups = 0, origins = 0, propagated = 0, reordered_graphs = 0;
    for (int round = 0; round < 20; ++round) {
        CAPTURE(round);
        const std::size_t n = 5 + random() % 120;
        numgap::basic_graph reference, target;
        std::map<std::string, std::vector<float>> reference_values, target_values;
        // Node i (in topological order) is stored at index slot[i].
        std::vector<std::size_t> slot(n);
        std::iota(slot.begin(), slot.end(), 0);
        if (round % 2 == 1) std::shuffle(slot.begin(), slot.end(), random);
        std::vector<std::size_t> node_at(n);
        for (std::size_t i = 0; i < n; ++i) node_at[slot[i]] = i;
        reordered_graphs += !std::is_sorted(slot.begin(), slot.end());
        for (std::size_t index = 0; index < n; ++index) {
            const std::string name = "r" + std::to_string(node_at[index]);
            reference.add_node(name, "op", {}, {std::int64_t(node_at[index])});
            reference_values[name] = {float(node_at[index]), 1.0f + float(random() % 7), -2.0f};
        }
        for (std::size_t i = 1; i < n; ++i) {
            std::vector<std::size_t> producers;
            for (std::size_t k = random() % 3; k > 0; --k) producers.push_back(slot[random() % i]);
            std::sort(producers.begin(), producers.end());
            producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
            reference.set_producers(slot[i], producers);
        }
        // Target: consecutive reference nodes, one in six dropped, runs of
        // two or three fused into one node carrying their handles.
        for (std::size_t i = 0; i < n;) {
            const std::size_t span = random() % 5 == 0 ? 2 + random() % 2 : 1;
            std::vector<std::int64_t> handles;
            for (std::size_t k = i; k < std::min(n, i + span); ++k) handles.push_back(std::int64_t(k));
            const std::size_t last = std::min(n, i + span) - 1;
            i = last + 1;
            if (random() % 6 == 0) continue;
            std::vector<std::size_t> producers;
            if (target.num_nodes() > 0) producers.push_back(target.num_nodes() - 1);
            const std::string name = "t" + std::to_string(target.num_nodes());
            target.add_node(name, "op", producers, handles);
            std::vector<float> values = reference_values["r" + std::to_string(last)];
            if (random() % 4 == 0) values[1] = -values[1] * 3; // fails
            target_values[name] = values;
        }
        target.add_node("t_extra", "op", {}, {std::int64_t(n + 7)});
        target_values["t_extra"] = {1, 2};
        const auto views = [](const std::map<std::string, std::vector<float>>& values) {
            std::map<std::string, numgap::tensor_view> result;
            for (const auto& [key, data] : values)
                result.emplace(key, numgap::tensor_view(data.data(), {std::int64_t(data.size())}));
            return result;
        };
        const numgap::match_result matches = numgap::match_by_handle(reference, target);
        for (const numgap::match_group& group : matches.groups) fused_groups += group.reference_nodes.size() > 1;
        const numgap::comparison_report report = numgap::compare_runs(
            reference, target, matches, views(reference_values), views(target_values), numgap::metric_set::defaults());
        numgap::comparison_report by_name = report;
        numgap::analyze_report(by_name);
        CHECK(numgap::to_json(by_name) == numgap::to_json(report));
        origins += report.summary.origin_groups.size();
        propagated += report.summary.failed - report.summary.origin_groups.size();
    }
    // The cases the test is for did occur.
    CHECK(reordered_graphs >= 9);
    CHECK(fused_groups > 10);
    CHECK(origins > 10);
    CHECK(propagated > 10);
}

TEST_CASE("build_report: a match result naming a reference node in two groups is refused as before") {
    const auto reference_graph = numgap_test::chain_graph({"x", "a"});
    const auto target_graph = numgap_test::chain_graph({"x", "a"});
    numgap::match_result matches = numgap::match_by_name(reference_graph, target_graph);
    matches.groups.push_back(matches.groups.front());
    const auto values = stage_reference_values();
    auto compared = numgap::compare_groups(reference_graph, target_graph, matches, values->source(), values->source(),
                                           numgap::metric_set::defaults());
    CHECK_THROWS_WITH_AS(numgap::build_report(std::move(compared), reference_graph, target_graph, matches),
                         doctest::Contains("reference node 'x' belongs to two report groups (0 and 2)"), numgap::error);
}
} // TEST_SUITE("compare")
