// Pins down the repair pass of compare_runs (compare/repair_pairings.hpp) on
// hand-built match results, so it does not depend on what the structural
// matcher finds: a swapped ambiguous pair is repaired by values (mode on),
// only flagged (warn) or left alone (off); a genuinely broken sibling whose
// twin is healthy stays broken and is confirmed, not repaired; a structural
// shape mismatch becomes unmatched rows or takes an alternative that fits,
// never an error; nothing extra is loaded when every pair passes; and
// compare_groups keeps the repaired rows for build_report.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <numgap/compare/build_report.hpp>
#include <numgap/compare/compare_groups.hpp>
#include <numgap/compare/compare_runs.hpp>
#include <numgap/graph/basic_graph.hpp>
#include <numgap/match/match_by_structure.hpp>
#include <numgap/metric/metric_set.hpp>
#include <numgap/report/json.hpp>

#include "keyed_source.hpp"

namespace {
// x -> first, x -> second, (first, second) -> join: two parallel siblings of
// one producer, told apart only by the join's input positions. `extra` adds a
// third, unconsumed sibling.
numgap::basic_graph siblings(const std::string& prefix, bool extra = false) {
    numgap::basic_graph graph;
    const auto x = graph.add_node(prefix + "x", "input");
    const auto first = graph.add_node(prefix + "1", "conv", {x});
    const auto second = graph.add_node(prefix + "2", "conv", {x});
    graph.add_node(prefix + "join", "concat", {first, second});
    if (extra) graph.add_node(prefix + "3", "conv", {x});
    return graph;
}

numgap::match_group pair(const numgap::basic_graph& reference, const numgap::basic_graph& target,
                         const std::string& r, const std::string& t, std::string strategy,
                         std::vector<std::string> ambiguous = {}) {
    numgap::match_group group;
    const std::size_t ref = reference.find(r).value(), tgt = target.find(t).value();
    group.reference_nodes = {ref};
    group.target_nodes = {tgt};
    group.reference_output_node = ref;
    group.target_output_node = tgt;
    group.reference_tensor = r;
    group.target_tensor = t;
    group.strategy = std::move(strategy);
    group.confidence = group.strategy == "structure" ? 0.6 : 1.0;
    for (const std::string& name : ambiguous) group.ambiguous_with.push_back(target.find(name).value());
    return group;
}

const std::vector<float> value_a = {1, 2, 3, 4}, value_b = {-3, 1, 0.5f, -2}, value_x = {1, 1, 2, 2},
                         value_join = {5, 6, 7, 8};

struct views {
    std::map<std::string, std::vector<float>> values;
    std::map<std::string, numgap::tensor_view> map() const {
        std::map<std::string, numgap::tensor_view> result;
        for (const auto& [key, data] : values)
            result.emplace(key, numgap::tensor_view(data.data(), {std::int64_t(data.size())}));
        return result;
    }
};

views repair_reference_values() { return {{{"rx", value_x}, {"r1", value_a}, {"r2", value_b}, {"rjoin", value_join}}}; }
views repair_target_values() { return {{{"tx", value_x}, {"t1", value_a}, {"t2", value_b}, {"tjoin", value_join}}}; }

// The matcher's guess: r1 -> t2 and r2 -> t1, each ambiguous with the other.
numgap::match_result swapped_guess(const numgap::basic_graph& reference, const numgap::basic_graph& target) {
    numgap::match_result matches;
    matches.groups.push_back(pair(reference, target, "rx", "tx", "name"));
    matches.groups.push_back(pair(reference, target, "r1", "t2", "structure", {"t1"}));
    matches.groups.push_back(pair(reference, target, "r2", "t1", "structure", {"t2"}));
    matches.groups.push_back(pair(reference, target, "rjoin", "tjoin", "name"));
    return matches;
}

numgap::group_report row_of(const numgap::comparison_report& report, const std::string& reference_node) {
    for (const auto& group : report.groups)
        if (!group.reference_nodes.empty() && group.reference_nodes.back() == reference_node) return group;
    FAIL("no row for " << reference_node);
    return report.groups.front();
}

numgap::comparison_report compare(const numgap::basic_graph& reference, const numgap::basic_graph& target,
                                  const numgap::match_result& matches, const views& reference_data,
                                  const views& target_data, numgap::repair_mode mode) {
    numgap::compare_options options;
    options.threads = 1;
    options.repair = mode;
    return numgap::compare_runs(reference, target, matches, reference_data.map(), target_data.map(),
                                numgap::metric_set::defaults(), options);
}
} // namespace

TEST_SUITE("compare") {
TEST_CASE("repair_pairings: a swapped ambiguous pair is repaired by values; both rows say so") {
    const auto reference = siblings("r"), target = siblings("t");
    const auto report = compare(reference, target, swapped_guess(reference, target), repair_reference_values(),
                                repair_target_values(), numgap::repair_mode::on);
    const auto& first = row_of(report, "r1");
    CHECK(first.status == numgap::group_status::pass);
    CHECK(first.target_nodes == std::vector<std::string>{"t1"});
    CHECK(first.target_tensor == "t1");
    CHECK(first.repair == numgap::repair_state::repaired_by_values);
    CHECK(first.message.find("'t2'") != std::string::npos); // names the matcher's pick
    CHECK(first.ambiguous_with == std::vector<std::string>{"t2"});
    const auto& second = row_of(report, "r2");
    CHECK(second.status == numgap::group_status::pass);
    CHECK(second.target_nodes == std::vector<std::string>{"t2"});
    CHECK(second.repair == numgap::repair_state::repaired_by_values);
    CHECK(report.summary.repaired == 2);
    CHECK(report.all_passed());
    CHECK_FALSE(report.summary.first_divergence_group.has_value());
}

TEST_CASE("repair_pairings through compare_groups: the repaired rows need no source to become the report") {
    // compare_groups repairs on named rows and keeps them; build_report,
    // called after the tensors are gone, gives compare_runs' report.
    const auto reference = siblings("r"), target = siblings("t");
    const auto matches = swapped_guess(reference, target);
    const auto whole =
        compare(reference, target, matches, repair_reference_values(), repair_target_values(), numgap::repair_mode::on);
    numgap::compare_options options;
    options.threads = 1;
    std::optional<numgap::compared_groups> compared;
    {
        auto reference_data = std::make_unique<views>(repair_reference_values());
        auto target_data = std::make_unique<views>(repair_target_values());
        compared = numgap::compare_groups(reference, target, matches, reference_data->map(), target_data->map(),
                                          numgap::metric_set::defaults(), options);
    }
    // Handed over (graphs and match result freed on the way), and kept: the same report.
    {
        auto reference_data = std::make_unique<views>(repair_reference_values());
        auto target_data = std::make_unique<views>(repair_target_values());
        auto reference_copy = reference;
        auto target_copy = target;
        auto matches_copy = matches;
        const auto handed_over =
            numgap::build_report(numgap::compare_groups(reference, target, matches, reference_data->map(),
                                                        target_data->map(), numgap::metric_set::defaults(), options),
                                 std::move(reference_copy), std::move(target_copy), std::move(matches_copy));
        CHECK(numgap::to_json(handed_over) == numgap::to_json(whole));
    }
    const auto staged = numgap::build_report(std::move(*compared), reference, target, matches);
    CHECK(numgap::to_json(staged) == numgap::to_json(whole));
    CHECK(row_of(staged, "r1").target_nodes == std::vector<std::string>{"t1"});
    CHECK(row_of(staged, "r1").repair == numgap::repair_state::repaired_by_values);
    CHECK(staged.summary.repaired == 2);
    CHECK(staged.all_passed());
}

TEST_CASE("repair_pairings: warn keeps the matcher's pairing, marks it repair_possible, and names no origin") {
    const auto reference = siblings("r"), target = siblings("t");
    const auto report = compare(reference, target, swapped_guess(reference, target), repair_reference_values(),
                                repair_target_values(), numgap::repair_mode::warn);
    const auto& first = row_of(report, "r1");
    CHECK(first.status == numgap::group_status::fail);
    CHECK(first.target_nodes == std::vector<std::string>{"t2"});
    CHECK(first.repair == numgap::repair_state::repair_possible);
    CHECK(first.message.find("'t1' passes") != std::string::npos);
    CHECK(first.suspect);
    CHECK(report.summary.failed == 2);
    CHECK(report.summary.repaired == 0);
    // Both failures are guesses among equals: neither is named.
    CHECK_FALSE(report.summary.first_divergence_group.has_value());
    CHECK(report.summary.origins.empty());
    CHECK(report.summary.suspect_groups.size() == 2);
}

TEST_CASE("repair_pairings: off tries nothing; the failing ambiguous pairs stay suspect") {
    const auto reference = siblings("r"), target = siblings("t");
    const auto report = compare(reference, target, swapped_guess(reference, target), repair_reference_values(),
                                repair_target_values(), numgap::repair_mode::off);
    CHECK(row_of(report, "r1").repair == numgap::repair_state::none);
    CHECK(row_of(report, "r1").status == numgap::group_status::fail);
    CHECK(row_of(report, "r1").suspect);
    CHECK(report.summary.origins.empty());
}

TEST_CASE("repair_pairings: a genuinely broken sibling with a healthy twin stays broken and is the origin") {
    const auto reference = siblings("r"), target = siblings("t");
    numgap::match_result matches;
    matches.groups.push_back(pair(reference, target, "rx", "tx", "name"));
    matches.groups.push_back(pair(reference, target, "r1", "t1", "structure", {"t2"}));
    matches.groups.push_back(pair(reference, target, "r2", "t2", "structure", {"t1"}));
    matches.groups.push_back(pair(reference, target, "rjoin", "tjoin", "name"));
    views broken = repair_target_values();
    broken.values["t1"] = {4, -1, 0, 2}; // neither value_a nor value_b
    broken.values["tjoin"] = {-5, 6, -7, 8};
    const auto report = compare(reference, target, matches, repair_reference_values(), broken, numgap::repair_mode::on);
    const auto& first = row_of(report, "r1");
    CHECK(first.status == numgap::group_status::fail);
    CHECK(first.target_nodes == std::vector<std::string>{"t1"});
    CHECK(first.repair == numgap::repair_state::confirmed_by_values);
    CHECK_FALSE(first.suspect);
    CHECK(row_of(report, "r2").status == numgap::group_status::pass);
    CHECK(row_of(report, "r2").repair == numgap::repair_state::none);
    CHECK(report.summary.repaired == 0);
    CHECK(report.summary.first_divergence == "r1");
    CHECK(report.summary.origins == std::vector<std::string>{"r1"});
}

TEST_CASE("repair_pairings: a broken sibling first paired wrongly, repaired and still failing is named, not suspect") {
    // The matcher swapped r1 and r2; t1 is broken. Repair swaps back (r2
    // against t2 passes), r1 fails against t1 and against t2: the values
    // settled the pairing, so r1 is the origin and nothing else is blamed.
    const auto reference = siblings("r"), target = siblings("t");
    views broken = repair_target_values();
    broken.values["t1"] = {4, -1, 0, 2}; // neither value_a nor value_b
    const auto report = compare(reference, target, swapped_guess(reference, target), repair_reference_values(), broken,
                                numgap::repair_mode::on);
    const auto& first = row_of(report, "r1");
    CHECK(first.status == numgap::group_status::fail);
    CHECK(first.target_nodes == std::vector<std::string>{"t1"});
    CHECK(first.repair == numgap::repair_state::repaired_by_values);
    CHECK(first.fails_every_candidate);
    CHECK_FALSE(first.suspect);
    // The message says what the values showed: t1 fails too, the swap lets r2 pass.
    CHECK(first.message.find("target 't1' fails too") != std::string::npos);
    CHECK(first.message.find("passes") != std::string::npos);
    CHECK(first.message.find("target 't1' passes") == std::string::npos);
    CHECK(first.message.find("fails against every candidate ('t2', 't1')") != std::string::npos);
    const auto& second = row_of(report, "r2");
    CHECK(second.status == numgap::group_status::pass);
    CHECK(second.target_nodes == std::vector<std::string>{"t2"});
    CHECK(second.repair == numgap::repair_state::repaired_by_values);
    CHECK(second.message.find("it passes") != std::string::npos);
    CHECK(report.summary.suspect_groups.empty());
    CHECK(report.summary.first_divergence == "r1");
    CHECK(report.summary.origins == std::vector<std::string>{"r1"});
    CHECK(report.summary.failed == 1);
}

TEST_CASE("repair_pairings: a swap partner that fails against both candidates is settled and named") {
    // The matcher swapped r1 and r2; t2 is broken. The swap makes r1 pass;
    // r2 failed against t1 before and fails against t2 after: both of its
    // candidates were compared, so its failure is settled, not suspect.
    const auto reference = siblings("r"), target = siblings("t");
    views broken = repair_target_values();
    broken.values["t2"] = {4, -1, 0, 2};
    const auto report = compare(reference, target, swapped_guess(reference, target), repair_reference_values(), broken,
                                numgap::repair_mode::on);
    const auto& first = row_of(report, "r1");
    CHECK(first.status == numgap::group_status::pass);
    CHECK(first.message.find("target 't1' passes") != std::string::npos);
    CHECK_FALSE(first.fails_every_candidate);
    const auto& second = row_of(report, "r2");
    CHECK(second.status == numgap::group_status::fail);
    CHECK(second.target_nodes == std::vector<std::string>{"t2"});
    CHECK(second.fails_every_candidate);
    CHECK(second.message.find("against target 't2' it fails, against target 't1' it failed") != std::string::npos);
    CHECK_FALSE(second.suspect);
    CHECK(report.summary.first_divergence == "r2");
    CHECK(report.summary.origins == std::vector<std::string>{"r2"});
}

TEST_CASE("repair_pairings: warn says what the values showed, never that a failing candidate passes") {
    const auto reference = siblings("r"), target = siblings("t");
    views broken = repair_target_values();
    broken.values["t1"] = {4, -1, 0, 2};
    const auto report = compare(reference, target, swapped_guess(reference, target), repair_reference_values(), broken,
                                numgap::repair_mode::warn);
    const auto& first = row_of(report, "r1");
    CHECK(first.repair == numgap::repair_state::repair_possible);
    CHECK(first.message.find("target 't1' fails too") != std::string::npos);
    CHECK(first.message.find("target 't1' passes") == std::string::npos);
    CHECK(first.suspect); // warn changed nothing: the failing guess stays unsettled
}

TEST_CASE("repair_pairings: a broken sibling whose reference equals its twin's is not repaired either") {
    // r1 and r2 carry equal values, so r1 against t2 passes; but the swap
    // would make r2 against the broken t1 fail: the failure moves, it does not
    // go away, so the pairing stays (and r1 cannot be confirmed: it is suspect).
    const auto reference = siblings("r"), target = siblings("t");
    numgap::match_result matches;
    matches.groups.push_back(pair(reference, target, "rx", "tx", "name"));
    matches.groups.push_back(pair(reference, target, "r1", "t1", "structure", {"t2"}));
    matches.groups.push_back(pair(reference, target, "r2", "t2", "structure", {"t1"}));
    views reference_data = repair_reference_values();
    reference_data.values["r2"] = value_a;
    views target_data = repair_target_values();
    target_data.values["t2"] = value_a;
    target_data.values["t1"] = {4, -1, 0, 2};
    const auto report = compare(reference, target, matches, reference_data, target_data, numgap::repair_mode::on);
    CHECK(row_of(report, "r1").target_nodes == std::vector<std::string>{"t1"});
    CHECK(row_of(report, "r1").status == numgap::group_status::fail);
    CHECK(row_of(report, "r1").repair == numgap::repair_state::none);
    CHECK(row_of(report, "r2").repair == numgap::repair_state::none);
    CHECK(report.summary.repaired == 0);
}

TEST_CASE("repair_pairings: a structural pair whose shapes differ becomes unmatched rows, never an error") {
    const auto reference = siblings("r"), target = siblings("t");
    numgap::match_result matches;
    matches.groups.push_back(pair(reference, target, "rx", "tx", "name"));
    matches.groups.push_back(pair(reference, target, "r1", "t1", "structure"));
    matches.groups.push_back(pair(reference, target, "r2", "t2", "structure"));
    views target_data = repair_target_values();
    target_data.values["t1"] = {1, 2, 3};
    const auto report = compare(reference, target, matches, repair_reference_values(), target_data, numgap::repair_mode::on);
    CHECK(report.summary.errors == 0);
    CHECK(report.summary.unmatched_reference == 1);
    CHECK(report.summary.unmatched_target == 1);
    const auto& reference_row = row_of(report, "r1");
    CHECK(reference_row.status == numgap::group_status::unmatched);
    CHECK(reference_row.message.find("shapes differ") != std::string::npos);
    CHECK(reference_row.message.find("[3]") != std::string::npos);
    bool target_row_found = false;
    for (const auto& group : report.groups)
        if (group.target_nodes == std::vector<std::string>{"t1"}) {
            target_row_found = true;
            CHECK(group.status == numgap::group_status::unmatched);
            CHECK(group.message.find("shapes differ") != std::string::npos);
        }
    CHECK(target_row_found);
    CHECK(row_of(report, "r2").status == numgap::group_status::pass);
}

TEST_CASE("repair_pairings: a structural shape mismatch takes an unmatched alternative that fits") {
    const auto reference = siblings("r"), target = siblings("t", true);
    numgap::match_result matches;
    matches.groups.push_back(pair(reference, target, "rx", "tx", "name"));
    matches.groups.push_back(pair(reference, target, "r1", "t1", "structure", {"t3"}));
    matches.unmatched_target.push_back(target.find("t2").value());
    matches.unmatched_target.push_back(target.find("t3").value());
    matches.unmatched_reference.push_back(reference.find("r2").value());
    views target_data = repair_target_values();
    target_data.values["t1"] = {1, 2, 3};
    target_data.values["t3"] = value_a;
    const auto report = compare(reference, target, matches, repair_reference_values(), target_data, numgap::repair_mode::on);
    CHECK(report.summary.errors == 0);
    const auto& first = row_of(report, "r1");
    CHECK(first.status == numgap::group_status::pass);
    CHECK(first.target_nodes == std::vector<std::string>{"t3"});
    CHECK(first.repair == numgap::repair_state::repaired_by_values);
    CHECK(first.ambiguous_with == std::vector<std::string>{"t1"});
    bool old_target_unmatched = false;
    for (const auto& group : report.groups)
        if (group.target_nodes == std::vector<std::string>{"t1"}) old_target_unmatched = group.status == numgap::group_status::unmatched;
    CHECK(old_target_unmatched);
}

TEST_CASE("repair_pairings: an exact strategy's shape mismatch stays an error row") {
    const auto reference = siblings("r"), target = siblings("t");
    numgap::match_result matches;
    matches.groups.push_back(pair(reference, target, "r1", "t1", "name"));
    views target_data = repair_target_values();
    target_data.values["t1"] = {1, 2, 3};
    const auto report = compare(reference, target, matches, repair_reference_values(), target_data, numgap::repair_mode::on);
    CHECK(row_of(report, "r1").status == numgap::group_status::error);
    CHECK(report.summary.errors == 1);
}


TEST_CASE("repair_pairings: no extra load when every pair passes; a bounded number when one fails") {
    const auto reference = siblings("r"), target = siblings("t");
    numgap::match_result matches;
    matches.groups.push_back(pair(reference, target, "r1", "t1", "structure", {"t2"}));
    matches.groups.push_back(pair(reference, target, "r2", "t2", "structure", {"t1"}));
    const views reference_data = repair_reference_values();
    views target_data = repair_target_values();
    numgap::compare_options options;
    options.threads = 1;
    {
        numgap_test::keyed_source reference_source, target_source;
        reference_source.views = reference_data.map();
        target_source.views = target_data.map();
        numgap::compare_runs(reference, target, matches, reference_source, target_source,
                             numgap::metric_set::defaults(), options);
        CHECK(reference_source.loads == 2);
        CHECK(target_source.loads == 2);
    }
    {
        target_data.values["t1"] = {4, -1, 0, 2};
        numgap_test::keyed_source reference_source, target_source;
        reference_source.views = reference_data.map();
        target_source.views = target_data.map();
        numgap::compare_runs(reference, target, matches, reference_source, target_source,
                             numgap::metric_set::defaults(), options);
        // One failing group with one alternative: at most 2 extra evaluations
        // (here 1: r1 against t2 fails, so the swap partner is not evaluated).
        CHECK(reference_source.loads == 3);
        CHECK(target_source.loads == 3);
    }
}

TEST_CASE("repair_pairings: the consumers of a wrongly guessed ambiguous pair are repaired with it") {
    // x -> conv -> bn -> add <- bn <- conv <- x: nothing structural tells
    // the branches apart, and the target's names make the matcher's guess
    // (smallest name) the wrong one. The batch norms, paired through the
    // convs' images, inherit the ambiguity: the repair re-pairs them too and
    // nothing is reported as an origin (before: the convs were repaired and
    // the batch norms failed at confidence 1, two false origins).
    auto branches = [](const std::string& main, const std::string& shortcut) {
        numgap::basic_graph graph;
        const auto x = graph.add_node("x", "input");
        const auto c1 = graph.add_node(main, "aten.convolution.default", {x});
        const auto b1 = graph.add_node(main + "_bn", "aten.batch_norm.default", {c1});
        const auto dc = graph.add_node(shortcut, "aten.convolution.default", {x});
        const auto db = graph.add_node(shortcut + "_bn", "aten.batch_norm.default", {dc});
        graph.add_node("sum", "aten.add.Tensor", {b1, db});
        return graph;
    };
    const auto reference = branches("conv1", "downsample_0");
    const auto target = branches("t_b", "t_a"); // the guess takes t_a (the shortcut) for conv1
    const auto matches = numgap::match_by_structure(reference, target);
    views reference_data{{{"x", value_x}, {"conv1", value_a}, {"conv1_bn", {2, 4, 6, 8}}, {"downsample_0", value_b},
                          {"downsample_0_bn", {-1, 0, 1, 0}}, {"sum", value_join}}};
    views target_data{{{"x", value_x}, {"t_b", value_a}, {"t_b_bn", {2, 4, 6, 8}}, {"t_a", value_b},
                       {"t_a_bn", {-1, 0, 1, 0}}, {"sum", value_join}}};
    const auto report = compare(reference, target, matches, reference_data, target_data, numgap::repair_mode::on);
    CHECK(row_of(report, "conv1").target_nodes == std::vector<std::string>{"t_b"});
    CHECK(row_of(report, "conv1_bn").target_nodes == std::vector<std::string>{"t_b_bn"});
    CHECK(row_of(report, "conv1_bn").repair == numgap::repair_state::repaired_by_values);
    CHECK(row_of(report, "downsample_0_bn").target_nodes == std::vector<std::string>{"t_a_bn"});
    CHECK(report.all_passed());
    CHECK_FALSE(report.summary.first_divergence_group.has_value());
}
} // TEST_SUITE("compare")
