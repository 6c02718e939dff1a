// Pins down name matching: exact names, a normaliser, the explicit mapping
// overriding names, duplicate names (error naming both nodes, or skip),
// unnamed nodes, multi-output nodes, nodes without outputs, empty graphs,
// composition with a prior result, and exactness on random graphs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <numgap/graph/basic_graph.hpp>
#include <numgap/match/common_name_normalizer.hpp>
#include <numgap/match/detail/match_context.hpp>
#include <numgap/match/match_by_name.hpp>

#include <numgap_support/synthetic_graphs.hpp>

#include "../core/caught_error.hpp"
#include "group_of.hpp"

using numgap_match_test::group_of;

// basic_graph returns spans into itself: the matchers must still treat its
// names and output keys as kept by the graph (prefetched, copied without a
// temporary string), or million-node matching silently slows down.
static_assert(numgap::detail::stable_attribute<numgap::detail::node_attribute::name, numgap::basic_graph>);
static_assert(numgap::detail::match_side<numgap::basic_graph>::stable_output_keys);

TEST_SUITE("match") {
TEST_CASE("match_by_name: one to one") {
    numgap::basic_graph ref, tgt;
    ref.add_node("x");
    ref.add_node("conv", "conv", {0});
    ref.add_node("relu", "relu", {1});
    tgt.add_node("relu", "Relu"); // index order differs from the reference's
    tgt.add_node("x");
    tgt.add_node("extra", "Cast");
    tgt.add_node("conv", "Conv");
    tgt.set_producers(3, {1});
    tgt.set_producers(0, {3});
    const auto result = numgap::match_by_name(ref, tgt);
    REQUIRE(result.groups.size() == 3);
    // Groups come in reference topological order.
    CHECK(result.groups[0].reference_nodes == std::vector<std::size_t>{0});
    CHECK(result.groups[0].target_nodes == std::vector<std::size_t>{1});
    CHECK(result.groups[1].target_nodes == std::vector<std::size_t>{3});
    CHECK(result.groups[2].target_nodes == std::vector<std::size_t>{0});
    for (const auto& group : result.groups) {
        CHECK(group.kind == numgap::match_kind::one_to_one);
        CHECK(group.strategy == "name");
        CHECK(group.confidence == 1.0);
        CHECK(group.reference_tensor == group.target_tensor); // default key = name on both sides
    }
    CHECK(result.unmatched_reference.empty());
    CHECK(result.unmatched_target == std::vector<std::size_t>{2});
}

TEST_CASE("match_by_name: with a normaliser") {
    numgap::basic_graph ref, tgt;
    ref.add_node("encoder.layer0/attn");
    ref.add_node("encoder.layer0/mlp", "", {0});
    tgt.add_node("encoder_layer0_attn_output_0");
    tgt.add_node("encoder_layer0_mlp@0", "", {0});
    CHECK(numgap::match_by_name(ref, tgt).groups.empty()); // exact names differ
    numgap::match_options options;
    options.normalize_name = numgap::common_name_normalizer{};
    const auto result = numgap::match_by_name(ref, tgt, options);
    REQUIRE(result.groups.size() == 2);
    CHECK(result.groups[0].target_nodes == std::vector<std::size_t>{0});
    CHECK(result.groups[1].target_nodes == std::vector<std::size_t>{1});
    // The tensors compared are the real keys, not the normalised names.
    CHECK(result.groups[1].target_tensor == "encoder_layer0_mlp@0");
}

TEST_CASE("match_by_name: explicit mapping overrides names") {
    numgap::basic_graph ref, tgt;
    ref.add_node("a");
    ref.add_node("b", "", {0});
    tgt.add_node("a");
    tgt.add_node("b", "", {0});
    tgt.add_node("b_fixed", "", {1});
    numgap::match_options options;
    options.explicit_mapping = {{"b", "b_fixed"}};
    const auto result = numgap::match_by_name(ref, tgt, options);
    REQUIRE(result.groups.size() == 2);
    CHECK(result.groups[0].strategy == "name");
    CHECK(result.groups[1].strategy == "explicit");
    CHECK(result.groups[1].reference_nodes == std::vector<std::size_t>{1});
    CHECK(result.groups[1].target_nodes == std::vector<std::size_t>{2});
    CHECK(result.unmatched_target == std::vector<std::size_t>{1}); // the same-named "b" lost
}

TEST_CASE("match_by_name: duplicate names error or skip") {
    numgap::basic_graph ref, tgt;
    ref.add_node("x");
    ref.add_node("conv", "", {0});
    ref.add_node("conv", "", {1});
    tgt.add_node("x");
    tgt.add_node("conv", "", {0});
    CHECK_THROWS_WITH_AS(numgap::match_by_name(ref, tgt),
                         doctest::Contains("reference graph has two nodes named 'conv' after normalisation: 'conv' "
                                           "(index 1) and 'conv' (index 2)"),
                         numgap::error);
    const auto duplicate = numgap_test::caught_error([&] { (void)numgap::match_by_name(ref, tgt); });
    REQUIRE(duplicate.has_value());
    CHECK(duplicate->kind() == numgap::error_kind::schema);
    CHECK(duplicate->where().item == "conv");
    numgap::match_options options;
    options.on_duplicate_names = numgap::match_options::duplicate_names::skip;
    const auto result = numgap::match_by_name(ref, tgt, options);
    REQUIRE(result.groups.size() == 1);
    CHECK(result.unmatched_reference == std::vector<std::size_t>{1, 2});
    CHECK(result.unmatched_target == std::vector<std::size_t>{1});
    // Duplicates created by the normaliser are reported the same way.
    numgap::basic_graph ref2;
    ref2.add_node("a/b");
    ref2.add_node("a.b");
    numgap::match_options normalised;
    normalised.normalize_name = numgap::common_name_normalizer{};
    CHECK_THROWS_WITH_AS(numgap::match_by_name(ref2, tgt, normalised), doctest::Contains("named 'a_b'"), numgap::error);
}

TEST_CASE("match_by_name: ignores unnamed nodes") {
    numgap::basic_graph ref, tgt;
    ref.add_node("");
    ref.add_node("", "", {0});
    tgt.add_node("");
    const auto result = numgap::match_by_name(ref, tgt);
    CHECK(result.groups.empty()); // an empty name is not a key, and not a duplicate either
    CHECK(result.unmatched_reference.size() == 2);
}

TEST_CASE("match_by_name: multi output node compares its last output") {
    numgap::basic_graph ref, tgt;
    ref.add_node("x");
    ref.add_node("topk", "aten::topk", {0}, {}, {"topk.values", "topk.indices"});
    tgt.add_node("x");
    tgt.add_node("topk", "TopK", {0}, {}, {"topk:0", "topk:1"});
    const auto result = numgap::match_by_name(ref, tgt);
    const auto* group = group_of(result, 1);
    REQUIRE(group != nullptr);
    CHECK(group->reference_tensor == "topk.indices");
    CHECK(group->target_tensor == "topk:1");
}

TEST_CASE("match_by_name: node without outputs has no tensor") {
    numgap::basic_graph ref, tgt;
    ref.add_node("print");
    ref.set_output_keys(0, {});
    tgt.add_node("print");
    const auto result = numgap::match_by_name(ref, tgt);
    REQUIRE(result.groups.size() == 1);
    CHECK(result.groups[0].reference_tensor.empty());
    CHECK(result.groups[0].target_tensor == "print");
}

TEST_CASE("match_by_name: empty graphs") {
    numgap::basic_graph empty, one;
    one.add_node("x");
    const auto both_empty = numgap::match_by_name(empty, empty);
    CHECK(both_empty.groups.empty());
    const auto one_side = numgap::match_by_name(one, empty);
    CHECK(one_side.groups.empty());
    CHECK(one_side.unmatched_reference == std::vector<std::size_t>{0});
}

TEST_CASE("match_by_name: composes with a prior result") {
    numgap::basic_graph ref, tgt;
    ref.add_node("a");
    ref.add_node("b", "", {0});
    tgt.add_node("a");
    tgt.add_node("b", "", {0});
    numgap::match_result prior;
    prior.groups.push_back({{0}, {1}, numgap::match_kind::one_to_one, "mine", 0.5, 0, 1, "a", "b", {}});
    const auto result = numgap::match_by_name(ref, tgt, {}, prior);
    // The prior group is kept; "a" (target) and "b" (reference) are left.
    REQUIRE(result.groups.size() == 1);
    CHECK(result.groups[0].strategy == "mine");
    CHECK(result.unmatched_reference == std::vector<std::size_t>{1});
    CHECK(result.unmatched_target == std::vector<std::size_t>{0});
    // A prior that matches a node twice is rejected.
    prior.groups.push_back({{1}, {1}, numgap::match_kind::one_to_one, "mine", 0.5, 1, 1, "b", "b", {}});
    CHECK_THROWS_WITH_AS(numgap::match_by_name(ref, tgt, {}, prior),
                         doctest::Contains("target node 'b' (index 1) belongs to two earlier match groups"),
                         numgap::error);
    const auto twice = numgap_test::caught_error([&] { (void)numgap::match_by_name(ref, tgt, {}, prior); });
    REQUIRE(twice.has_value());
    CHECK(twice->kind() == numgap::error_kind::graph);
    CHECK(twice->where().item == "b");
    numgap::match_result out_of_range;
    out_of_range.groups.push_back({{5}, {0}, numgap::match_kind::one_to_one, "mine", 1, 5, 0, "", "", {}});
    CHECK_THROWS_WITH_AS(numgap::match_by_name(ref, tgt, {}, out_of_range),
                         doctest::Contains("reference node index 5"), numgap::error);
}

TEST_CASE("match_by_name: is exact on random graphs") {
    // Target names are "<reference name>_output_0"; fused nodes take the name
    // of their chain's last node. With the normaliser, every surviving name
    // pairs exactly with its counterpart and nothing else pairs.
    for (auto family : {numgap_test::model_family::cnn, numgap_test::model_family::transformer}) {
        const std::uint64_t seed = 20240601 + static_cast<std::uint64_t>(family);
        MESSAGE("seed = " << seed);
        std::mt19937_64 rng(seed);
        numgap_test::derive_options options;
        options.rename = false;
        auto pair = numgap_test::derive_target(numgap_test::make_reference(family, 1500, rng), options, rng);
        numgap::match_options match_options;
        match_options.normalize_name = numgap::common_name_normalizer{};
        const auto result = numgap::match_by_name(pair.reference, pair.target, match_options);
        std::set<std::pair<std::size_t, std::size_t>> expected, found;
        for (std::size_t r = 0; r < pair.reference.num_nodes(); ++r) {
            for (auto t : pair.counterpart[r])
                if (pair.target.node(t).name == std::string(pair.reference.node(r).name) + "_output_0")
                    expected.emplace(r, t);
        }
        for (const auto& group : result.groups) {
            REQUIRE(group.reference_nodes.size() == 1);
            REQUIRE(group.target_nodes.size() == 1);
            found.emplace(group.reference_nodes[0], group.target_nodes[0]);
        }
        CHECK(found.size() > pair.reference.num_nodes() / 2);
        CHECK(found == expected);
    }
}

TEST_CASE("match_by_name: many equal names in one bucket") {
    // Forty nodes sharing a name share a hash and so crowd one bucket of the
    // grouping pass (the comparison-sort path): with skip they are all left
    // unmatched, and every unique name around them still pairs with its
    // namesake, whatever the index order of the target.
    numgap::basic_graph ref, tgt;
    for (int i = 0; i < 40; ++i) ref.add_node("same");
    for (int i = 0; i < 300; ++i) ref.add_node("u" + std::to_string(i));
    for (int i = 299; i >= 0; --i) tgt.add_node("u" + std::to_string(i));
    tgt.add_node("same");
    numgap::match_options options;
    options.on_duplicate_names = numgap::match_options::duplicate_names::skip;
    const auto result = numgap::match_by_name(ref, tgt, options);
    REQUIRE(result.groups.size() == 300);
    for (std::size_t g = 0; g < result.groups.size(); ++g) {
        const auto& group = result.groups[g];
        CHECK(group.reference_nodes == std::vector<std::size_t>{40 + g}); // reference order
        CHECK(group.target_nodes == std::vector<std::size_t>{299 - g});
        CHECK(group.reference_tensor == "u" + std::to_string(g));
        CHECK(group.target_tensor == group.reference_tensor);
    }
    CHECK(result.unmatched_reference.size() == 40);
    CHECK(result.unmatched_target == std::vector<std::size_t>{300});
    CHECK_THROWS_WITH_AS(numgap::match_by_name(ref, tgt), doctest::Contains("two nodes named 'same'"), numgap::error);
}

namespace {
// A user graph whose names (and so default output keys) are computed on
// each call: match_by_name must copy keys, never keep views into them.
struct computed_names_graph {
    std::size_t count;
    std::size_t num_nodes() const { return count; }
    std::vector<std::size_t> producers(std::size_t) const { return {}; }
    std::string node_name(std::size_t i) const { return "a_rather_long_node_name_" + std::to_string(i); }
};
} // namespace

TEST_CASE("match_by_name: copies output keys a graph computes on the fly") {
    computed_names_graph ref{100};
    numgap::basic_graph tgt;
    for (std::size_t i = 100; i-- > 0;) tgt.add_node(ref.node_name(i), "", {}, {}, {"t" + std::to_string(i)});
    const auto result = numgap::match_by_name(ref, tgt);
    REQUIRE(result.groups.size() == 100);
    for (std::size_t g = 0; g < 100; ++g) {
        CHECK(result.groups[g].reference_tensor == ref.node_name(g));
        CHECK(result.groups[g].target_tensor == "t" + std::to_string(g));
        CHECK(result.groups[g].target_output_node == 99 - g);
    }
}

TEST_CASE("match_by_name: large graphs group exactly") {
    // Beyond 2^12 hash buckets the grouping runs as two counting passes:
    // 20000 names per side (with a crowd of 40 equal names, and the target
    // in a shuffled index order) must pair exactly as a map from name to
    // node would, in reference order, with the crowd left unmatched.
    constexpr std::size_t unique_names = 20000;
    numgap::basic_graph ref, tgt;
    for (std::size_t i = 0; i < unique_names; ++i) {
        ref.add_node("layer" + std::to_string(i) + "/op");
        if (i % 500 == 0)
            for (int copy = 0; copy < 4; ++copy) ref.add_node("crowd"); // several buckets' worth of equal keys
    }
    std::vector<std::size_t> target_order(unique_names);
    std::iota(target_order.begin(), target_order.end(), std::size_t{0});
    std::mt19937_64 rng(77);
    std::shuffle(target_order.begin(), target_order.end(), rng);
    std::vector<std::size_t> target_of_name(unique_names);
    for (std::size_t t = 0; t < unique_names; ++t) {
        tgt.add_node("layer" + std::to_string(target_order[t]) + ".op:0"); // same key after normalising
        target_of_name[target_order[t]] = t;
    }
    tgt.add_node("crowd");
    numgap::match_options options;
    options.normalize_name = numgap::common_name_normalizer{};
    options.on_duplicate_names = numgap::match_options::duplicate_names::skip;
    const auto result = numgap::match_by_name(ref, tgt, options);
    REQUIRE(result.groups.size() == unique_names);
    std::size_t previous_reference = 0;
    for (std::size_t g = 0; g < result.groups.size(); ++g) {
        const auto& group = result.groups[g];
        REQUIRE(group.reference_nodes.size() == 1);
        REQUIRE(group.target_nodes.size() == 1);
        const std::size_t r = group.reference_nodes[0];
        REQUIRE((g == 0 || r > previous_reference));
        previous_reference = r;
        const std::string name(ref.node(r).name);
        REQUIRE(name.starts_with("layer"));
        const std::size_t i = std::stoul(name.substr(5));
        REQUIRE(group.target_nodes[0] == target_of_name[i]);
        REQUIRE(group.reference_tensor == name);
        REQUIRE(group.target_tensor == tgt.node(target_of_name[i]).name);
    }
    CHECK(result.unmatched_reference.size() == 4 * (unique_names / 500));
    CHECK(result.unmatched_target == std::vector<std::size_t>{unique_names});
    options.on_duplicate_names = numgap::match_options::duplicate_names::error;
    CHECK_THROWS_WITH_AS(numgap::match_by_name(ref, tgt, options), doctest::Contains("two nodes named 'crowd'"),
                         numgap::error);
}
} // TEST_SUITE("match")
