// Pins down consumer_lists: the reverse adjacency, one entry per edge,
// ascending; empty graphs; dangling producers throw.
#include <doctest/doctest.h>

#include <vector>

#include <numgap/graph/basic_graph.hpp>
#include <numgap/graph/consumer_lists.hpp>

TEST_SUITE("graph") {
TEST_CASE("consumer_lists: reverse every edge") {
    numgap::basic_graph g;
    g.add_node("x");
    g.add_node("square", "mul", {0, 0});
    g.add_node("neg", "neg", {0});
    const numgap::consumer_lists consumers(g);
    CHECK(consumers.num_nodes() == 3);
    const auto of_x = consumers.consumers(0);
    CHECK(std::vector<std::size_t>(of_x.begin(), of_x.end()) == std::vector<std::size_t>{1, 1, 2});
    CHECK(consumers.consumers(2).empty());
    CHECK(numgap::consumer_lists(numgap::basic_graph{}).num_nodes() == 0);
}

namespace {
struct dangling {
    std::size_t num_nodes() const { return 1; }
    std::vector<std::size_t> producers(std::size_t) const { return {4}; }
    const char* node_name(std::size_t) const { return "only"; }
};
} // namespace

TEST_CASE("consumer_lists: reject dangling producers") {
    CHECK_THROWS_WITH_AS(numgap::consumer_lists{dangling{}}, doctest::Contains("'only' (index 0)"), numgap::error);
}
} // TEST_SUITE("graph")
