// Pins down the explicit mapping: pairs sharing a node form one group, raw
// names are used, and every bad entry is a numgap::error naming the name.
#include <doctest/doctest.h>

#include "../core/caught_error.hpp"
#include <numgap/graph/basic_graph.hpp>
#include <numgap/match/match_explicit.hpp>

namespace {
struct graphs {
    numgap::basic_graph ref, tgt;
    graphs() {
        ref.add_node("conv");
        ref.add_node("bn", "", {0});
        ref.add_node("relu", "", {1});
        tgt.add_node("fused");
        tgt.add_node("out", "", {0});
    }
};
} // namespace

TEST_SUITE("match") {
TEST_CASE("match_explicit: pairs sharing a node form one group") {
    graphs g;
    numgap::match_options options;
    options.explicit_mapping = {{"conv", "fused"}, {"bn", "fused"}, {"relu", "out"}};
    const auto result = numgap::match_explicit(g.ref, g.tgt, options);
    REQUIRE(result.groups.size() == 2);
    CHECK(result.groups[0].reference_nodes == std::vector<std::size_t>{0, 1});
    CHECK(result.groups[0].target_nodes == std::vector<std::size_t>{0});
    CHECK(result.groups[0].kind == numgap::match_kind::fused);
    CHECK(result.groups[0].reference_output_node == 1);
    CHECK(result.groups[0].strategy == "explicit");
    CHECK(result.groups[1].kind == numgap::match_kind::one_to_one);
    CHECK(result.unmatched_reference.empty());
}

TEST_CASE("match_explicit: bad entries throw") {
    graphs g;
    numgap::match_options options;
    options.explicit_mapping = {{"conv", "missing"}};
    CHECK_THROWS_WITH_AS(numgap::match_explicit(g.ref, g.tgt, options),
                         doctest::Contains("target graph has no node named 'missing'"), numgap::error);
    const auto missing = numgap_test::caught_error([&] { (void)numgap::match_explicit(g.ref, g.tgt, options); });
    REQUIRE(missing.has_value());
    CHECK(missing->kind() == numgap::error_kind::schema);
    CHECK(missing->where().item == "missing");
    options.explicit_mapping = {{"nope", "fused"}};
    CHECK_THROWS_WITH_AS(numgap::match_explicit(g.ref, g.tgt, options),
                         doctest::Contains("reference graph has no node named 'nope'"), numgap::error);
    g.tgt.add_node("fused");
    options.explicit_mapping = {{"conv", "fused"}};
    CHECK_THROWS_WITH_AS(numgap::match_explicit(g.ref, g.tgt, options),
                         doctest::Contains("several nodes named 'fused'"), numgap::error);
    numgap::match_result prior;
    prior.groups.push_back({{0}, {1}, numgap::match_kind::one_to_one, "handle", 1, 0, 1, "conv", "out", {}});
    options.explicit_mapping = {{"conv", "out"}};
    CHECK_THROWS_WITH_AS(numgap::match_explicit(g.ref, g.tgt, options, prior),
                         doctest::Contains("reference node 'conv' (index 0) was already matched"), numgap::error);
    const auto again = numgap_test::caught_error([&] { (void)numgap::match_explicit(g.ref, g.tgt, options, prior); });
    REQUIRE(again.has_value());
    CHECK(again->kind() == numgap::error_kind::usage);
    CHECK(again->where().item == "conv");
}

TEST_CASE("match_explicit: empty mapping matches nothing") {
    graphs g;
    const auto result = numgap::match_explicit(g.ref, g.tgt);
    CHECK(result.groups.empty());
    CHECK(result.unmatched_reference.size() == 3);
    CHECK(result.unmatched_target.size() == 2);
}
} // TEST_SUITE("match")
