// Pins down the graph concepts and customization points: basic_graph and a
// user struct adapted through ADL free functions (no copy) model them; the
// defaults of the optional attributes; member customization wins over ADL.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../core/as_vector.hpp"
#include <numgap/graph.hpp>

namespace user {
// A graph the library has never seen: adapted with free functions only.
struct layer {
    std::string label;
    std::vector<int> inputs;
    std::string kind;
};
struct network {
    std::vector<layer> layers;
};
inline std::size_t num_nodes(const network& n) { return n.layers.size(); }
inline const std::vector<int>& producers(const network& n, std::size_t i) { return n.layers[i].inputs; }
inline std::string_view node_name(const network& n, std::size_t i) { return n.layers[i].label; }
inline std::string_view op_type(const network& n, std::size_t i) { return n.layers[i].kind; }

// Member customization, and an ADL function that must lose against it.
struct both {
    std::size_t num_nodes() const { return 2; }
    std::vector<std::size_t> producers(std::size_t i) const { return i == 0 ? std::vector<std::size_t>{} : std::vector<std::size_t>{0}; }
    std::string node_name(std::size_t i) const { return "member" + std::to_string(i); }
};
inline std::string node_name(const both&, std::size_t) { return "adl"; }

struct no_names {
    std::size_t num_nodes() const { return 0; }
    std::vector<std::size_t> producers(std::size_t) const { return {}; }
};
} // namespace user

static_assert(numgap::graph<numgap::basic_graph>);
static_assert(numgap::graph_with_op_types<numgap::basic_graph>);
static_assert(numgap::graph_with_debug_handles<numgap::basic_graph>);
static_assert(numgap::graph_with_output_keys<numgap::basic_graph>);
static_assert(numgap::graph_with_output_shapes<numgap::basic_graph>);

static_assert(numgap::graph<user::network>);
static_assert(numgap::graph_with_op_types<user::network>);
static_assert(!numgap::graph_with_debug_handles<user::network>);
static_assert(!numgap::graph_with_output_keys<user::network>);
static_assert(!numgap::graph_with_output_shapes<user::network>);

static_assert(numgap::graph<user::both>);
static_assert(!numgap::graph<user::no_names>);
static_assert(!numgap::graph<int>);

TEST_SUITE("graph") {
TEST_CASE("graph cpo adl adaptation reads the users data without copying") {
    user::network n{{{"input", {}, "placeholder"}, {"conv", {0}, "conv2d"}}};
    CHECK(numgap::num_nodes(n) == 2);
    // The producers range is the user's own vector, returned by reference.
    CHECK(&numgap::producers(n, 1) == &n.layers[1].inputs);
    CHECK(std::string_view(numgap::node_name(n, 1)) == "conv");
    CHECK(std::string_view(numgap::op_type(n, 1)) == "conv2d");
}

TEST_CASE("graph cpo defaults for optional attributes") {
    user::network n{{{"input", {}, ""}}};
    // No handles -> empty range; no output keys -> one key equal to the name;
    // no shapes -> unknown.
    CHECK(std::ranges::empty(numgap::debug_handles(n, 0)));
    auto keys = numgap::output_keys(n, 0);
    REQUIRE(keys.size() == 1);
    CHECK(keys[0] == "input");
    CHECK_FALSE(numgap::output_shape(n, 0, 0).has_value());
    user::both b;
    CHECK(std::string_view(numgap::op_type(b, 0)).empty());
}

TEST_CASE("graph cpo member wins over adl") {
    user::both b;
    CHECK(std::string(numgap::node_name(b, 1)) == "member1");
    CHECK(numgap::topological_order(b) == std::vector<std::size_t>{0, 1});
}

TEST_CASE("graph cpo basic graph members") {
    numgap::basic_graph g;
    const auto x = g.add_node("x", "input");
    const auto topk = g.add_node("topk", "aten::topk", {x}, {7, 8}, {"topk.values", "topk.indices"});
    g.set_output_shape(topk, 1, {1, 5});
    CHECK(numgap::num_nodes(g) == 2);
    CHECK(numgap_test::as_vector(numgap::producers(g, topk)) == std::vector<std::size_t>{x});
    CHECK(numgap_test::as_vector(numgap::debug_handles(g, topk)) == std::vector<std::int64_t>{7, 8});
    CHECK(numgap_test::as_vector(numgap::output_keys(g, topk)) ==
          std::vector<std::string>{"topk.values", "topk.indices"});
    CHECK_FALSE(numgap::output_shape(g, topk, 0).has_value());
    CHECK(numgap::output_shape(g, topk, 1) == numgap::shape_type{1, 5});
    CHECK_FALSE(numgap::output_shape(g, topk, 9).has_value());
}
} // TEST_SUITE("graph")
