// Pins down topological_order: identity when index order is already
// topological, the lexicographically smallest order otherwise, and clear
// errors (naming nodes) for cycles, self-loops and dangling producers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../core/caught_error.hpp"
#include <numgap/graph/basic_graph.hpp>
#include <numgap/graph/topological_order.hpp>

namespace {
struct raw_graph {
    std::vector<std::vector<std::size_t>> inputs;
    std::size_t num_nodes() const { return inputs.size(); }
    const std::vector<std::size_t>& producers(std::size_t i) const { return inputs[i]; }
    std::string node_name(std::size_t i) const { return "n" + std::to_string(i); }
};
} // namespace

TEST_SUITE("graph") {
TEST_CASE("topological_order: empty graph") {
    CHECK(numgap::topological_order(numgap::basic_graph{}).empty());
}

TEST_CASE("topological_order: keeps index order when valid") {
    numgap::basic_graph g;
    g.add_node("a");
    g.add_node("b", "", {0});
    g.add_node("c", "", {0, 1, 1}); // repeated producer (b + b)
    CHECK(numgap::topological_order(g) == std::vector<std::size_t>{0, 1, 2});
}

TEST_CASE("topological_order: sorts a file order graph smallest index first") {
    // 0 <- 2, 1 independent, 2 <- 3: order must put 3 before 2 before 0.
    raw_graph g{{{2}, {}, {3}, {}}};
    const auto order = numgap::topological_order(g);
    CHECK(order == std::vector<std::size_t>{1, 3, 2, 0});
    const auto position = numgap::topological_positions(order);
    CHECK(position[0] == 3);
    CHECK(position[1] == 0);
}

TEST_CASE("topological_order: cycle names the nodes on it") {
    // 0 -> 1 -> 2 -> 1 and 3 hanging off the cycle: the message names 1 and 2.
    raw_graph g{{{}, {0, 2}, {1}, {2}}};
    try {
        (void)numgap::topological_order(g);
        FAIL("a cycle must throw");
    } catch (const numgap::error& e) {
        const std::string message = e.what();
        CHECK(message.find("cycle") != std::string::npos);
        CHECK(message.find("'n1' (index 1)") != std::string::npos);
        CHECK(message.find("'n2' (index 2)") != std::string::npos);
        CHECK(message.find("'n0'") == std::string::npos);
        CHECK(message.find("'n3'") == std::string::npos);
    }
}

TEST_CASE("topological_order: self loop is a cycle") {
    numgap::basic_graph g;
    g.add_node("x");
    g.add_edge(0, 0);
    CHECK_THROWS_WITH_AS(numgap::topological_order(g), doctest::Contains("cycle through node 'x' (index 0)"),
                         numgap::error);
    const auto cycle = numgap_test::caught_error([&] { (void)numgap::topological_order(g); });
    REQUIRE(cycle.has_value());
    CHECK(cycle->kind() == numgap::error_kind::graph);
    CHECK(cycle->where().item == "x");
}

TEST_CASE("topological_order: dangling producer names the node") {
    raw_graph g{{{}, {7}}};
    CHECK_THROWS_WITH_AS(numgap::topological_order(g),
                         doctest::Contains("node 'n1' (index 1) lists producer index 7"), numgap::error);
    const auto dangling = numgap_test::caught_error([&] { (void)numgap::topological_order(g); });
    REQUIRE(dangling.has_value());
    CHECK(dangling->kind() == numgap::error_kind::graph);
    CHECK(dangling->where().item == "n1");
}

namespace {
// A user graph that vouches for its index order, rightly or not.
struct vouching_graph : raw_graph {
    bool vouches = true;
    bool index_order_is_topological() const { return vouches; }
};
} // namespace

TEST_CASE("topological_order: trusts a graph that vouches for its index order") {
    // A true answer is taken at its word (that is the point: no O(N + E)
    // scan); a false one falls back to the full algorithm, cycle errors
    // included.
    vouching_graph g;
    g.inputs = {{1}, {}, {0}};
    g.vouches = false;
    CHECK(numgap::topological_order(g) == std::vector<std::size_t>{1, 0, 2});
    g.inputs = {{1}, {0}};
    CHECK_THROWS_AS(numgap::topological_order(g), numgap::error);
    g.vouches = true;
    g.inputs = {{}, {0}, {0, 1}};
    CHECK(numgap::topological_order(g) == std::vector<std::size_t>{0, 1, 2});
    // basic_graph: after a backward edge the order is computed, not assumed.
    numgap::basic_graph b;
    b.add_node("late");
    b.add_node("early");
    b.add_edge(1, 0);
    CHECK(numgap::topological_order(b) == std::vector<std::size_t>{1, 0});
    b.add_edge(0, 1);
    CHECK_THROWS_WITH_AS(numgap::topological_order(b), doctest::Contains("cycle"), numgap::error);
}
} // TEST_SUITE("graph")
