// Pins down is_reachable: direction (producer to consumer), no path between
// siblings, a node reaches itself only on a cycle.
#include <doctest/doctest.h>

#include <numgap/graph/basic_graph.hpp>
#include <numgap/graph/is_reachable.hpp>

TEST_SUITE("graph") {
TEST_CASE("is_reachable: follows edge direction") {
    numgap::basic_graph g;
    g.add_node("a");
    g.add_node("b", "", {0});
    g.add_node("c", "", {0});
    g.add_node("d", "", {1});
    CHECK(numgap::is_reachable(g, 0, 3));
    CHECK_FALSE(numgap::is_reachable(g, 3, 0));
    CHECK_FALSE(numgap::is_reachable(g, 1, 2));
    CHECK_FALSE(numgap::is_reachable(g, 1, 1));
    CHECK_THROWS_AS(numgap::is_reachable(g, 0, 9), numgap::error);
}

TEST_CASE("is_reachable: self on a cycle") {
    numgap::basic_graph g;
    g.add_node("a");
    g.add_node("b", "", {0});
    g.add_edge(1, 0);
    CHECK(numgap::is_reachable(g, 0, 0));
    CHECK(numgap::is_reachable(g, 1, 0));
}
} // TEST_SUITE("graph")
