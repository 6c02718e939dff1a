// Pins down the report analysis: group order, the first divergence (earliest
// failing group in reference topological order, named by its last node), and
// error origins (failing groups whose nearest compared ancestors all pass,
// looking through missing/unmatched/error nodes).
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/report/analyze_report.hpp>

#include "sample_report.hpp"

using numgap::group_status;
using numgap::test::make_report;

TEST_SUITE("report") {
TEST_CASE("analyze_report: a fault in norm2 propagating downstream has one origin, norm2") {
    auto report = make_report({{"x", group_status::pass},
                               {"conv1", group_status::pass},
                               {"norm1", group_status::pass},
                               {"relu1", group_status::pass},
                               {"conv2", group_status::pass},
                               {"norm2", group_status::fail},
                               {"add", group_status::fail},
                               {"out", group_status::fail}});
    numgap::analyze_report(report);
    const auto& s = report.summary;
    CHECK(s.groups == 8);
    CHECK(s.passed == 5);
    CHECK(s.failed == 3);
    CHECK(s.missing == 0);
    CHECK(s.errors == 0);
    REQUIRE(s.first_divergence_group.has_value());
    CHECK(*s.first_divergence_group == 5);
    CHECK(s.first_divergence == "norm2");
    CHECK(s.origins == std::vector<std::string>{"norm2"});
    CHECK(report.groups[5].error_origin);
    CHECK_FALSE(report.groups[6].error_origin);
    CHECK(report.groups[6].order == 6);
    CHECK_FALSE(report.all_passed());
}

TEST_CASE("analyze_report: groups listed out of graph order still give the topologically first divergence") {
    auto report = make_report({{"out", group_status::fail},
                               {"add", group_status::fail},
                               {"norm2", group_status::fail},
                               {"conv2", group_status::pass}});
    numgap::analyze_report(report);
    CHECK(report.summary.first_divergence == "norm2");
    CHECK(report.summary.first_divergence_group == std::optional<std::size_t>(2));
    CHECK(report.summary.origins == std::vector<std::string>{"norm2"});
    CHECK(report.summary.unmatched_reference == 0); // absent nodes are not rows
}

TEST_CASE("analyze_report: a missing dump between a pass and a fail is looked through") {
    auto report = make_report({{"relu1", group_status::pass},
                               {"conv2", group_status::missing},
                               {"norm2", group_status::fail},
                               {"add", group_status::fail}});
    numgap::analyze_report(report);
    CHECK(report.summary.missing == 1);
    CHECK(report.summary.origins == std::vector<std::string>{"norm2"});
}

TEST_CASE("analyze_report: a failing ancestor behind an unmatched node makes the error propagated") {
    // relu1 is in no group at all (unmatched): the walk continues to norm1, which fails.
    auto report = make_report({{"norm1", group_status::fail}, {"conv2", group_status::fail}});
    numgap::analyze_report(report);
    CHECK(report.summary.first_divergence == "norm1");
    CHECK(report.summary.origins == std::vector<std::string>{"norm1"});
    CHECK_FALSE(report.groups[1].error_origin);
}

TEST_CASE("analyze_report: an error group is neither a divergence nor a stop for the walk") {
    auto report = make_report({{"norm1", group_status::fail},
                               {"relu1", group_status::error},
                               {"conv2", group_status::fail}});
    numgap::analyze_report(report);
    CHECK(report.summary.errors == 1);
    CHECK(report.summary.first_divergence == "norm1");
    CHECK(report.summary.origins == std::vector<std::string>{"norm1"});
    CHECK_FALSE(report.all_passed());
}

TEST_CASE("analyze_report: two independent faults give two origins in topological order") {
    // norm1 fails; relu1 propagates it; conv2 recovers (passes); norm2 fails again on
    // a passing input, so it introduces its own error; add sees relu1 failing.
    auto report = make_report({{"norm2", group_status::fail},
                               {"norm1", group_status::fail},
                               {"relu1", group_status::fail},
                               {"conv2", group_status::pass},
                               {"add", group_status::fail}});
    numgap::analyze_report(report);
    CHECK(report.summary.first_divergence == "norm1");
    CHECK(report.summary.origins == std::vector<std::string>{"norm1", "norm2"});
    CHECK(report.summary.origin_groups == std::vector<std::size_t>{1, 0});
}

TEST_CASE("analyze_report: a non-convex failing group and the group inside it still give one origin") {
    // G0 = {a, c}, G1 = {b}, a -> b -> c, both failing: each walk reaches the
    // other group. Only an earlier failing group (smaller order) may explain a
    // failure, so b (order 1) is the origin and G0 (order 2) is propagated.
    numgap::comparison_report report;
    report.metric_names = {"cosine"};
    report.reference_graph = {{"a", "op", {}}, {"b", "op", {0}}, {"c", "op", {1}}};
    report.groups.push_back(numgap::test::make_group({"a", "c"}, group_status::fail, 0.3));
    report.groups.push_back(numgap::test::make_group({"b"}, group_status::fail, 0.3));
    numgap::analyze_report(report);
    CHECK(report.groups[0].order == 2);
    CHECK(report.groups[1].order == 1);
    CHECK(report.summary.first_divergence == "b");
    CHECK(report.summary.origins == std::vector<std::string>{"b"});
    CHECK(report.summary.origin_groups == std::vector<std::size_t>{1});
    CHECK(report.groups[1].error_origin);
    CHECK_FALSE(report.groups[0].error_origin);
}

TEST_CASE("analyze_report: a later failing group is looked through to an earlier failing ancestor") {
    // x -> a -> b -> c with G0 = {x}, G1 = {a, c}, G2 = {b}, all failing. b's
    // walk passes a (in the later G1) and reaches x: x is the only origin.
    numgap::comparison_report report;
    report.metric_names = {"cosine"};
    report.reference_graph = {{"x", "op", {}}, {"a", "op", {0}}, {"b", "op", {1}}, {"c", "op", {2}}};
    report.groups.push_back(numgap::test::make_group({"x"}, group_status::fail, 0.3));
    report.groups.push_back(numgap::test::make_group({"a", "c"}, group_status::fail, 0.3));
    report.groups.push_back(numgap::test::make_group({"b"}, group_status::fail, 0.3));
    numgap::analyze_report(report);
    CHECK(report.summary.first_divergence == "x");
    CHECK(report.summary.origins == std::vector<std::string>{"x"});
    CHECK_FALSE(report.groups[1].error_origin);
    CHECK_FALSE(report.groups[2].error_origin);
}

TEST_CASE("analyze_report: a fused group is named by its last reference node and its internal edge is ignored") {
    numgap::comparison_report report;
    report.metric_names = {"cosine"};
    report.reference_graph = numgap::test::residual_graph();
    report.groups.push_back(numgap::test::make_group({"x"}, group_status::pass));
    report.groups.push_back(numgap::test::make_group({"conv1", "norm1"}, group_status::fail, 0.3));
    report.groups.push_back(numgap::test::make_group({"relu1"}, group_status::fail, 0.3));
    numgap::analyze_report(report);
    CHECK(report.groups[1].order == 2);
    CHECK(report.summary.first_divergence == "norm1");
    CHECK(report.summary.origins == std::vector<std::string>{"norm1"});
}

TEST_CASE("analyze_report: all passing means no divergence, no origins, all_passed") {
    auto report = make_report({{"conv1", group_status::pass}, {"norm1", group_status::pass}});
    auto unmatched = numgap::test::make_group({"relu1"}, group_status::unmatched);
    report.groups.push_back(unmatched);
    auto unmatched_target = numgap::test::make_group({"extra"}, group_status::unmatched);
    unmatched_target.reference_nodes.clear();
    report.groups.push_back(unmatched_target);
    numgap::analyze_report(report);
    CHECK_FALSE(report.summary.first_divergence_group.has_value());
    CHECK(report.summary.first_divergence.empty());
    CHECK(report.summary.origins.empty());
    CHECK(report.summary.groups == 2);
    CHECK(report.summary.unmatched_reference == 1);
    CHECK(report.summary.unmatched_target == 1);
    CHECK(report.all_passed());
}

TEST_CASE("analyze_report: running it twice gives the same answer (it resets what it fills)") {
    auto report = make_report({{"norm2", group_status::fail}, {"conv2", group_status::pass}});
    numgap::analyze_report(report);
    const auto first = report.summary.origins;
    numgap::analyze_report(report);
    CHECK(report.summary.origins == first);
    CHECK(report.summary.failed == 1);
}

TEST_CASE("analyze_report: inconsistent hand-built reports are rejected with the offending name") {
    SUBCASE("a group names a node that is not in the reference graph") {
        auto report = make_report({{"nonexistent", group_status::pass}});
        CHECK_THROWS_WITH_AS(numgap::analyze_report(report),
                             doctest::Contains("'nonexistent'"), numgap::error);
    }
    SUBCASE("a producer that is not earlier than its consumer") {
        auto report = make_report({});
        report.reference_graph[1].producers = {5};
        CHECK_THROWS_WITH_AS(numgap::analyze_report(report),
                             doctest::Contains("not in topological order: node 'conv1'"),
                             numgap::error);
    }
    SUBCASE("two groups claim the same node") {
        auto report = make_report({{"conv1", group_status::pass}, {"conv1", group_status::fail}});
        CHECK_THROWS_WITH_AS(numgap::analyze_report(report),
                             doctest::Contains("'conv1' belongs to two report groups"),
                             numgap::error);
    }
    SUBCASE("a node listed twice") {
        auto report = make_report({});
        report.reference_graph[2].name = "conv1";
        CHECK_THROWS_WITH_AS(numgap::analyze_report(report), doctest::Contains("'conv1' twice"),
                             numgap::error);
    }
}

TEST_CASE("analyze_report: a failing ambiguous pair on its own is suspect, never divergence or origin") {
    auto report = make_report({{"relu1", group_status::pass},
                               {"conv2", group_status::pass},
                               {"norm2", group_status::fail},
                               {"add", group_status::fail},
                               {"out", group_status::fail}});
    numgap::test::edit_row(report.groups, 2, [&](numgap::group_report& row) { row.ambiguous_with = {"other_norm"}; });
    numgap::test::edit_row(report.groups, 2, [&](numgap::group_report& row) { row.strategy = "structure"; });
    numgap::analyze_report(report);
    CHECK(report.groups[2].suspect);
    CHECK_FALSE(report.groups[2].error_origin);
    CHECK(report.summary.suspect_groups == std::vector<std::size_t>{2});
    CHECK(report.summary.failed == 3); // still counted as failing
    // The walk from add looks through the suspect norm2 and stops at relu1
    // (pass): add is where a sure pairing first fails.
    CHECK(report.summary.first_divergence == "add");
    CHECK(report.summary.origins == std::vector<std::string>{"add"});
}

TEST_CASE("analyze_report: an ambiguous pair the values confirmed is named like any other") {
    auto report = make_report({{"conv2", group_status::pass},
                               {"norm2", group_status::fail},
                               {"add", group_status::fail}});
    numgap::test::edit_row(report.groups, 1, [&](numgap::group_report& row) { row.ambiguous_with = {"other_norm"}; });
    numgap::test::edit_row(report.groups, 1,
                           [&](numgap::group_report& row) { row.repair = numgap::repair_state::confirmed_by_values; });
    numgap::analyze_report(report);
    CHECK_FALSE(report.groups[1].suspect);
    CHECK(report.summary.suspect_groups.empty());
    CHECK(report.summary.first_divergence == "norm2");
    CHECK(report.summary.origins == std::vector<std::string>{"norm2"});
}

TEST_CASE("analyze_report: repaired groups are counted; only failing ambiguous groups are suspect") {
    auto report = make_report({{"conv2", group_status::pass}, {"norm2", group_status::pass}});
    numgap::test::edit_row(report.groups, 0, [&](numgap::group_report& row) { row.ambiguous_with = {"x"}; });
    numgap::test::edit_row(report.groups, 1, [&](numgap::group_report& row) { row.ambiguous_with = {"y"}; });
    numgap::test::edit_row(report.groups, 1,
                           [&](numgap::group_report& row) { row.repair = numgap::repair_state::repaired_by_values; });
    numgap::analyze_report(report);
    CHECK(report.summary.repaired == 1);
    CHECK_FALSE(report.groups[0].suspect);
    CHECK(report.summary.suspect_groups.empty());
}
namespace {
// The rule of analyze_report.hpp as written there, one walk per failing
// group: the slow, obvious reading the one-pass version must agree with.
std::vector<bool> origins_by_walking(const numgap::comparison_report& report) {
    const auto& nodes = report.reference_graph;
    const std::vector<std::size_t> group_of = numgap::detail::group_of_reference_nodes(report);
    std::vector<bool> origin(report.groups.size(), false);
    for (std::size_t g = 0; g < report.groups.size(); ++g) {
        const auto& group = report.groups[g];
        if (group.status != group_status::fail || group.suspect) continue;
        std::vector<bool> seen(nodes.size(), false);
        std::vector<std::size_t> stack;
        for (std::size_t node = 0; node < nodes.size(); ++node)
            if (group_of[node] == g) {
                seen[node] = true;
                stack.push_back(node);
            }
        bool propagated = false;
        while (!stack.empty() && !propagated) {
            const std::size_t node = stack.back();
            stack.pop_back();
            for (const std::size_t producer : nodes[node].producers) {
                if (seen[producer]) continue;
                seen[producer] = true;
                const std::size_t owner = group_of[producer];
                if (owner != numgap::detail::no_group && owner != g) {
                    const auto& upstream = report.groups[owner];
                    if (upstream.status == group_status::pass) continue;
                    if (upstream.status == group_status::fail && !upstream.suspect && upstream.order < group.order) {
                        propagated = true;
                        break;
                    }
                }
                stack.push_back(producer);
            }
        }
        origin[g] = !propagated;
    }
    return origin;
}
} // namespace

TEST_CASE("analyze_report: origins agree with one walk per failing group on random graphs and groupings") {
    std::mt19937 random(20261205);
    const group_status statuses[] = {group_status::pass, group_status::fail, group_status::fail, group_status::missing,
                                     group_status::error};
    for (int round = 0; round < 300; ++round) {
        numgap::comparison_report report;
        const std::size_t size = 1 + random() % 60;
        for (std::size_t i = 0; i < size; ++i) {
            numgap::report_node node{"n" + std::to_string(i), "op", {}};
            const std::size_t inputs = i == 0 ? 0 : random() % 4;
            for (std::size_t k = 0; k < inputs; ++k) node.producers.push_back(random() % i);
            report.reference_graph.push_back(std::move(node));
        }
        // Groups of 1-3 nodes picked anywhere (so some are not convex); about
        // a fifth of the nodes in no group.
        std::vector<std::size_t> order(size);
        for (std::size_t i = 0; i < size; ++i) order[i] = i;
        std::shuffle(order.begin(), order.end(), random);
        for (std::size_t at = 0; at < size;) {
            const std::size_t take = std::min<std::size_t>(size - at, 1 + random() % 3);
            if (random() % 5 != 0) {
                std::vector<std::string> names;
                for (std::size_t k = 0; k < take; ++k) names.push_back(report.reference_graph[order[at + k]].name);
                report.groups.push_back(numgap::test::make_group(names, statuses[random() % 5]));
                if (random() % 6 == 0)
                    numgap::test::edit_row(report.groups, report.groups.size() - 1,
                                           [&](numgap::group_report& row) { row.ambiguous_with = {"elsewhere"}; });
                if (random() % 4 == 0)
                    numgap::test::edit_row(report.groups, report.groups.size() - 1,
                                           [&](numgap::group_report& row) { row.fails_every_candidate = true; });
            }
            at += take;
        }
        numgap::analyze_report(report);
        const std::vector<bool> expected = origins_by_walking(report);
        std::vector<std::size_t> expected_groups;
        for (std::size_t g = 0; g < report.groups.size(); ++g) {
            INFO("round " << round << ", group " << g);
            CHECK(report.groups[g].error_origin == expected[g]);
            if (expected[g]) expected_groups.push_back(g);
        }
        // summary.origin_groups lists them in order of divergence (group order).
        std::vector<std::size_t> listed = report.summary.origin_groups;
        std::sort(listed.begin(), listed.end());
        CHECK(listed == expected_groups);
        if (report.summary.first_divergence_group) CHECK(expected[*report.summary.first_divergence_group]);
    }
}

TEST_CASE("analyze_report: a long chain failing from one layer on has that layer as its only origin") {
    // The shape of a real divergence: every layer after the broken one fails.
    // One walk per failing group made this quadratic (10^10 steps here).
    numgap::comparison_report report;
    constexpr std::size_t size = 100'000, broken = 1'234;
    for (std::size_t i = 0; i < size; ++i) {
        report.reference_graph.push_back({"layer" + std::to_string(i), "add", {}});
        if (i > 0) report.reference_graph.back().producers.push_back(i - 1);
        report.groups.push_back(numgap::test::make_group({report.reference_graph.back().name},
                                                         i < broken ? group_status::pass : group_status::fail));
    }
    numgap::analyze_report(report);
    CHECK(report.summary.failed == size - broken);
    CHECK(report.summary.first_divergence == "layer1234");
    CHECK(report.summary.origins == std::vector<std::string>{"layer1234"});
    CHECK(report.summary.origin_groups == std::vector<std::size_t>{broken});
}
} // TEST_SUITE("report")
