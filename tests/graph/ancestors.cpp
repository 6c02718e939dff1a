// Pins down ancestors: transitive producers only, the node itself excluded,
// sorted; termination on a cycle; errors for bad indices.
#include <doctest/doctest.h>

#include <vector>

#include "../core/caught_error.hpp"
#include <numgap/graph/ancestors.hpp>
#include <numgap/graph/basic_graph.hpp>

namespace {
// a -> b -> d, a -> c -> d, e independent.
numgap::basic_graph diamond() {
    numgap::basic_graph g;
    g.add_node("a");
    g.add_node("b", "", {0});
    g.add_node("c", "", {0});
    g.add_node("d", "", {1, 2});
    g.add_node("e");
    return g;
}
} // namespace

TEST_SUITE("graph") {
TEST_CASE("ancestors: of a diamond") {
    const auto g = diamond();
    CHECK(numgap::ancestors(g, 3) == std::vector<std::size_t>{0, 1, 2});
    CHECK(numgap::ancestors(g, 1) == std::vector<std::size_t>{0});
    CHECK(numgap::ancestors(g, 0).empty());
    CHECK(numgap::ancestors(g, 4).empty());
}

TEST_CASE("ancestors: terminates on a cycle") {
    numgap::basic_graph g;
    g.add_node("x");
    g.add_node("y", "", {0});
    g.add_edge(1, 0);
    CHECK(numgap::ancestors(g, 0) == std::vector<std::size_t>{1});
}

TEST_CASE("ancestors: rejects a node that does not exist") {
    CHECK_THROWS_WITH_AS(numgap::ancestors(diamond(), 5), doctest::Contains("node index 5 does not exist"),
                         numgap::error);
    const auto failure = numgap_test::caught_error([] { (void)numgap::ancestors(diamond(), 5); });
    REQUIRE(failure.has_value());
    CHECK(failure->kind() == numgap::error_kind::graph);
}
} // TEST_SUITE("graph")
