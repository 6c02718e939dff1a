// Pins down debug-handle matching and its agreement with ExecuTorch
// Inspector's semantics (map_runtime_aot_intermediate_outputs and the
// overlap merging of debug handles), re-expressed on graphs. Each test says
// which rule it pins down.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

#include <numgap/graph/basic_graph.hpp>
#include <numgap/match/match_by_handle.hpp>

#include <numgap_support/synthetic_graphs.hpp>

namespace {
using handles = std::vector<std::int64_t>;

// A chain whose node i carries handle list handle_lists[i].
numgap::basic_graph chain(const std::vector<handles>& handle_lists, const char* prefix) {
    numgap::basic_graph g;
    for (std::size_t i = 0; i < handle_lists.size(); ++i) {
        std::vector<std::size_t> producers;
        if (i > 0) producers.push_back(i - 1);
        g.add_node(std::string(prefix) + std::to_string(i), "op", producers, handle_lists[i]);
    }
    return g;
}

numgap::match_options executorch() {
    numgap::match_options options;
    options.handle_reference_output = numgap::match_options::handle_output::executorch_compatible;
    return options;
}
} // namespace

TEST_SUITE("match") {
TEST_CASE("match_by_handle: fused runtime node and one sided handles") {
    // Reference chain with handles 0, 1, 2, 3; target nodes [2, 3, 1] and [8, 9].
    // ExecuTorch: the runtime node covering {1, 2, 3} is one group with AOT
    // nodes 1, 2, 3; [8, 9] has no AOT counterpart and is dropped; AOT node 0
    // has no runtime counterpart.
    const auto ref = chain({{0}, {1}, {2}, {3}}, "aot");
    const auto tgt = chain({{2, 3, 1}, {8, 9}}, "rt");
    const auto result = numgap::match_by_handle(ref, tgt);
    REQUIRE(result.groups.size() == 1);
    const auto& group = result.groups[0];
    CHECK(group.reference_nodes == std::vector<std::size_t>{1, 2, 3});
    CHECK(group.target_nodes == std::vector<std::size_t>{0});
    CHECK(group.kind == numgap::match_kind::fused);
    CHECK(group.strategy == "handle");
    // numgap default: the fused chain's output is its topologically last op (handle 3).
    CHECK(group.reference_output_node == 3);
    CHECK(group.reference_tensor == "aot3");
    CHECK(group.target_tensor == "rt0");
    CHECK(result.unmatched_reference == std::vector<std::size_t>{0});
    CHECK(result.unmatched_target == std::vector<std::size_t>{1});
}

TEST_CASE("match_by_handle: executorch compatible takes the handle listed last") {
    // ExecuTorch's map_runtime_aot_intermediate_outputs compares the AOT node
    // whose handle the runtime tuple lists last: (2, 3, 1) -> handle 1.
    const auto ref = chain({{0}, {1}, {2}, {3}}, "aot");
    const auto tgt = chain({{2, 3, 1}, {8, 9}}, "rt");
    const auto result = numgap::match_by_handle(ref, tgt, executorch());
    REQUIRE(result.groups.size() == 1);
    CHECK(result.groups[0].reference_nodes == std::vector<std::size_t>{1, 2, 3});
    CHECK(result.groups[0].reference_output_node == 1);
    CHECK(result.groups[0].reference_tensor == "aot1");
}

TEST_CASE("match_by_handle: decomposition last runtime node carries the value") {
    // One AOT op (handle 4) lowered to three runtime ops sharing handle 4:
    // ExecuTorch keeps the last runtime output for that handle.
    const auto ref = chain({{3}, {4}, {5}}, "aot");
    const auto tgt = chain({{3}, {4}, {4}, {4}, {5}}, "rt");
    for (const auto& options : {numgap::match_options{}, executorch()}) {
        const auto result = numgap::match_by_handle(ref, tgt, options);
        REQUIRE(result.groups.size() == 3);
        const auto& group = result.groups[1];
        CHECK(group.reference_nodes == std::vector<std::size_t>{1});
        CHECK(group.target_nodes == std::vector<std::size_t>{1, 2, 3});
        CHECK(group.kind == numgap::match_kind::decomposed);
        CHECK(group.target_output_node == 3);
        CHECK(result.groups[0].kind == numgap::match_kind::one_to_one);
        CHECK(result.unmatched_reference.empty());
        CHECK(result.unmatched_target.empty());
    }
}

TEST_CASE("match_by_handle: overlap is transitive many to many") {
    // Runtime [1, 2] and [2, 3] overlap each other (ExecuTorch merges such
    // overlapping runtime handles into one entry); together with AOT nodes
    // 1, 2, 3 they form one many-to-many group.
    const auto ref = chain({{1}, {2}, {3}, {7}}, "aot");
    const auto tgt = chain({{1, 2}, {2, 3}, {7}}, "rt");
    const auto result = numgap::match_by_handle(ref, tgt);
    REQUIRE(result.groups.size() == 2);
    CHECK(result.groups[0].reference_nodes == std::vector<std::size_t>{0, 1, 2});
    CHECK(result.groups[0].target_nodes == std::vector<std::size_t>{0, 1});
    CHECK(result.groups[0].kind == numgap::match_kind::many_to_many);
    CHECK(result.groups[0].reference_output_node == 2);
    CHECK(result.groups[0].target_output_node == 1);
    // ExecuTorch-compatible: the target output lists 3 last -> AOT node 2.
    CHECK(numgap::match_by_handle(ref, tgt, executorch()).groups[0].reference_output_node == 2);
}

TEST_CASE("match_by_handle: reference decomposition takes the last carrier") {
    // Several reference nodes share handle 5 (a decomposed AOT op); the
    // ExecuTorch-compatible choice is the topologically last of them.
    const auto ref = chain({{5}, {5}, {6}}, "aot");
    const auto tgt = chain({{6, 5}}, "rt");
    const auto result = numgap::match_by_handle(ref, tgt, executorch());
    REQUIRE(result.groups.size() == 1);
    CHECK(result.groups[0].reference_nodes == std::vector<std::size_t>{0, 1, 2});
    CHECK(result.groups[0].reference_output_node == 1);
    CHECK(numgap::match_by_handle(ref, tgt).groups[0].reference_output_node == 2);
}

TEST_CASE("match_by_handle: executorch fallback when the last handle is target only") {
    // The target lists 9 last, which no reference node carries: numgap falls
    // back to the previous handle (2) instead of dropping the group.
    const auto ref = chain({{1}, {2}}, "aot");
    const auto tgt = chain({{1, 2, 9}}, "rt");
    const auto result = numgap::match_by_handle(ref, tgt, executorch());
    REQUIRE(result.groups.size() == 1);
    CHECK(result.groups[0].reference_output_node == 1);
    const auto reversed = chain({{2, 1, 9}}, "rt");
    CHECK(numgap::match_by_handle(ref, reversed, executorch()).groups[0].reference_output_node == 0);
}

TEST_CASE("match_by_handle: nodes without handles and prior matches take no part") {
    // Node 1 of the reference has no handles; the target node 0 was matched
    // by an earlier strategy, so its handle 0 connects nothing.
    const auto ref = chain({{0}, {}, {2}}, "aot");
    const auto tgt = chain({{0}, {0, 2}}, "rt");
    numgap::match_result prior;
    prior.groups.push_back({{1}, {0}, numgap::match_kind::one_to_one, "name", 1, 1, 0, "aot1", "rt0", {}});
    const auto result = numgap::match_by_handle(ref, tgt, {}, prior);
    REQUIRE(result.groups.size() == 2);
    CHECK(result.groups[0].strategy == "name");
    // Reference 0 and 2 both overlap target 1 ([0, 2]).
    CHECK(result.groups[1].reference_nodes == std::vector<std::size_t>{0, 2});
    CHECK(result.groups[1].target_nodes == std::vector<std::size_t>{1});
}

TEST_CASE("match_by_handle: sparse and extreme handles") {
    // Handles need not be dense: huge, negative and extreme values take the
    // sort path and group exactly like small ones (dense path above).
    const std::int64_t low = std::numeric_limits<std::int64_t>::min();
    const std::int64_t high = std::numeric_limits<std::int64_t>::max();
    const auto ref = chain({{low}, {-5}, {std::int64_t{1} << 40}, {high}}, "aot");
    const auto tgt = chain({{-5, low}, {std::int64_t{1} << 40}, {high, 7}}, "rt");
    const auto result = numgap::match_by_handle(ref, tgt);
    REQUIRE(result.groups.size() == 3);
    CHECK(result.groups[0].reference_nodes == std::vector<std::size_t>{0, 1});
    CHECK(result.groups[0].target_nodes == std::vector<std::size_t>{0});
    CHECK(result.groups[1].reference_nodes == std::vector<std::size_t>{2});
    CHECK(result.groups[2].reference_nodes == std::vector<std::size_t>{3});
    CHECK(result.groups[2].target_nodes == std::vector<std::size_t>{2});
}

TEST_CASE("match_by_handle: empty and handle less graphs") {
    numgap::basic_graph empty;
    const auto ref = chain({{0}, {1}}, "aot");
    CHECK(numgap::match_by_handle(empty, empty).groups.empty());
    const auto one_side = numgap::match_by_handle(ref, empty);
    CHECK(one_side.groups.empty());
    CHECK(one_side.unmatched_reference == std::vector<std::size_t>{0, 1});
    const auto no_handles = chain({{}, {}}, "rt");
    CHECK(numgap::match_by_handle(ref, no_handles).groups.empty());
}

TEST_CASE("match_by_handle: cycle is an error") {
    auto ref = chain({{0}, {1}}, "aot");
    ref.add_edge(1, 0);
    CHECK_THROWS_WITH_AS(numgap::match_by_handle(ref, ref), doctest::Contains("cycle"), numgap::error);
}

TEST_CASE("match_by_handle: is exact on random graphs") {
    // Reference node i carries handle i; a target node carries the handles of
    // every reference node it computes (fused chains: all of them;
    // decomposed layer norms: the same handle on six nodes); inserted no-ops
    // carry none. Expected groups follow from the ground truth exactly.
    for (auto family : {numgap_test::model_family::cnn, numgap_test::model_family::transformer}) {
        const std::uint64_t seed = 777 + static_cast<std::uint64_t>(family);
        MESSAGE("seed = " << seed);
        std::mt19937_64 rng(seed);
        numgap_test::derive_options options;
        options.decompose_rate = 0.5;
        auto pair = numgap_test::derive_target(numgap_test::make_reference(family, 2000, rng), options, rng);
        std::map<std::vector<std::size_t>, std::vector<std::size_t>> expected; // target nodes -> reference nodes
        for (std::size_t r = 0; r < pair.reference.num_nodes(); ++r)
            if (!pair.counterpart[r].empty()) expected[pair.counterpart[r]].push_back(r);
        const auto result = numgap::match_by_handle(pair.reference, pair.target);
        std::map<std::vector<std::size_t>, std::vector<std::size_t>> found;
        bool decomposed_seen = false, fused_seen = false;
        for (const auto& group : result.groups) {
            found[group.target_nodes] = group.reference_nodes;
            decomposed_seen |= group.kind == numgap::match_kind::decomposed;
            fused_seen |= group.kind == numgap::match_kind::fused;
            CHECK(group.reference_output_node == group.reference_nodes.back());
            CHECK(group.target_output_node == group.target_nodes.back());
        }
        CHECK(decomposed_seen == (family == numgap_test::model_family::transformer));
        CHECK(fused_seen);
        CHECK(found == expected);
        for (auto t : result.unmatched_target) CHECK(pair.target.node(t).debug_handles.empty());
    }
}
} // TEST_SUITE("match")
