// Pins down match_auto: the strategy order (explicit -> handle -> name ->
// structure), that each group records its strategy, that later strategies
// only see what earlier ones left, that graph types without handles skip
// that step, and that handle + name matching stay exact inside auto on
// random graphs.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <numgap/graph/basic_graph.hpp>
#include <numgap/match/common_name_normalizer.hpp>
#include <numgap/match/match_auto.hpp>

#include <numgap_support/synthetic_graphs.hpp>
#include "group_of.hpp"

namespace {
using numgap_match_test::group_of;

// A graph type with names and ops but no handles (no debug_handles customization).
struct plain_graph {
    struct node {
        std::string name, op;
        std::vector<std::size_t> inputs;
    };
    std::vector<node> nodes;
    std::size_t num_nodes() const { return nodes.size(); }
    const std::vector<std::size_t>& producers(std::size_t i) const { return nodes[i].inputs; }
    const std::string& node_name(std::size_t i) const { return nodes[i].name; }
    const std::string& op_type(std::size_t i) const { return nodes[i].op; }
};
static_assert(!numgap::graph_with_debug_handles<plain_graph>);
} // namespace

TEST_SUITE("match") {
TEST_CASE("match_auto: runs explicit handle name structure in order") {
    // ref:    x(h0) -> conv(h1) -> bn(h2) -> relu -> fc -> out
    // target: x(h0) -> fused(h1,h2) -> relu -> Gemm' -> out
    //   handles pair x and {conv, bn}->fused; names pair relu; structure
    //   finds fc; explicit maps out -> final (overriding the name "out").
    numgap::basic_graph ref, tgt;
    ref.add_node("x", "input", {}, {0});
    ref.add_node("conv", "aten::conv2d", {0}, {1});
    ref.add_node("bn", "aten::batch_norm", {1}, {2});
    ref.add_node("relu", "aten::relu", {2});
    ref.add_node("fc", "aten::linear", {3});
    ref.add_node("out", "aten::softmax", {4});
    tgt.add_node("in", "input", {}, {0});
    tgt.add_node("fused", "Conv+BatchNormalization", {0}, {1, 2});
    tgt.add_node("relu", "Relu", {1});
    tgt.add_node("node_17", "Gemm", {2});
    tgt.add_node("out", "Softmax", {3});
    tgt.add_node("final", "Softmax", {4});
    numgap::match_options options;
    options.explicit_mapping = {{"out", "final"}};
    const auto result = numgap::match_auto(ref, tgt, options);
    REQUIRE(result.groups.size() == 5);
    CHECK(group_of(result, 0)->strategy == "handle");
    CHECK(group_of(result, 1)->strategy == "handle");
    CHECK(group_of(result, 1)->reference_nodes == std::vector<std::size_t>{1, 2});
    CHECK(group_of(result, 1)->kind == numgap::match_kind::fused);
    CHECK(group_of(result, 3)->strategy == "name");
    CHECK(group_of(result, 4)->strategy == "structure");
    CHECK(group_of(result, 4)->target_nodes == std::vector<std::size_t>{3});
    CHECK(group_of(result, 5)->strategy == "explicit");
    CHECK(group_of(result, 5)->target_nodes == std::vector<std::size_t>{5});
    CHECK(result.unmatched_target == std::vector<std::size_t>{4});
    // Groups are in reference topological order.
    for (std::size_t i = 1; i < result.groups.size(); ++i)
        CHECK(result.groups[i - 1].reference_output_node < result.groups[i].reference_output_node);
}

TEST_CASE("match_auto: on graph types without handles") {
    plain_graph ref{{{"x", "input", {}}, {"a", "aten::relu", {0}}, {"b", "aten::sigmoid", {1}}}};
    plain_graph tgt{{{"x", "input", {}}, {"a", "Relu", {0}}, {"renamed", "Sigmoid", {1}}}};
    const auto result = numgap::match_auto(ref, tgt);
    REQUIRE(result.groups.size() == 3);
    CHECK(group_of(result, 1)->strategy == "name");
    CHECK(group_of(result, 2)->strategy == "structure");
    CHECK(group_of(result, 2)->target_nodes == std::vector<std::size_t>{2});
}

TEST_CASE("match_auto: empty graphs") {
    numgap::basic_graph empty;
    const auto result = numgap::match_auto(empty, empty);
    CHECK(result.groups.empty());
    CHECK(result.unmatched_reference.empty());
    CHECK(result.unmatched_target.empty());
}

TEST_CASE("match_auto: user strategy composes") {
    // A user strategy is any function returning a match_result from a prior
    // one; auto then works around its groups.
    numgap::basic_graph ref, tgt;
    ref.add_node("a", "aten::relu");
    ref.add_node("b", "aten::relu", {0});
    tgt.add_node("a", "Relu");
    tgt.add_node("b", "Relu", {0});
    auto crossed = [](const auto&, const auto&) {
        numgap::match_result mine;
        mine.groups.push_back({{0}, {1}, numgap::match_kind::one_to_one, "crossed", 0.9, 0, 1, "a", "b", {}});
        return mine;
    };
    const auto result = numgap::match_auto(ref, tgt, {}, crossed(ref, tgt));
    REQUIRE(result.groups.size() == 1);
    CHECK(result.groups[0].strategy == "crossed");
    // "b" (reference) and "a" (target) are left; their names differ, and
    // structure cannot pair them (a's counterpart is upstream of b's).
    CHECK(result.unmatched_reference == std::vector<std::size_t>{1});
    CHECK(result.unmatched_target == std::vector<std::size_t>{0});
}

TEST_CASE("match_auto: handles and names stay exact on random graphs") {
    // Half the target nodes lose their handles; names are kept (suffixed).
    // Every node with a handle pairs by handle exactly as the ground truth
    // says; every other surviving node pairs by name.
    const std::uint64_t seed = 99;
    MESSAGE("seed = " << seed);
    std::mt19937_64 rng(seed);
    numgap_test::derive_options options;
    options.rename = false;
    auto pair = numgap_test::derive_target(
        numgap_test::make_reference(numgap_test::model_family::transformer, 1200, rng), options, rng);
    for (std::size_t t = 0; t < pair.target.num_nodes(); t += 2) pair.target.set_debug_handles(t, {});
    numgap::match_options match_options;
    match_options.normalize_name = numgap::common_name_normalizer{};
    const auto result = numgap::match_auto(pair.reference, pair.target, match_options);
    std::size_t by_handle = 0, by_name = 0;
    for (const auto& group : result.groups) {
        if (group.strategy == "handle") {
            ++by_handle;
            for (auto r : group.reference_nodes) CHECK(pair.counterpart[r] == group.target_nodes);
        } else if (group.strategy == "name") {
            ++by_name;
            CHECK(pair.counterpart[group.reference_nodes[0]] == group.target_nodes);
        }
    }
    CHECK(by_handle > 200);
    CHECK(by_name > 200);
    // Every node whose counterpart kept its handles, or carries its name, is
    // matched. (The first nodes of a fused chain whose target node lost its
    // handles are not: the fused node carries the last member's name, and
    // structure cannot add nodes to that name group.)
    for (std::size_t r = 0; r < pair.reference.num_nodes(); ++r) {
        if (pair.counterpart[r].empty()) {
            CHECK(group_of(result, r) == nullptr);
            continue;
        }
        const auto& target_node = pair.target.node(pair.counterpart[r].back());
        if (target_node.debug_handles.empty() &&
            target_node.name != std::string(pair.reference.node(r).name) + "_output_0")
            continue;
        INFO("reference node " << r);
        CHECK(group_of(result, r) != nullptr);
    }
}
} // TEST_SUITE("match")
