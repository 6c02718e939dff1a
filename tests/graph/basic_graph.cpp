// Pins down basic_graph: defaults of add_node, lookups (absent, present,
// ambiguous), producer_of for multi-output nodes, nodes without outputs and
// the numgap::error messages for indices that do not exist.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "../core/as_vector.hpp"
#include "../core/caught_error.hpp"
#include <numgap/graph/basic_graph.hpp>

TEST_SUITE("graph") {
TEST_CASE("basic_graph: add node defaults output key to name") {
    numgap::basic_graph g;
    const auto a = g.add_node("a");
    CHECK(a == 0);
    CHECK(numgap_test::as_vector(g.node(a).output_keys) == std::vector<std::string>{"a"});
    CHECK_FALSE(g.output_shape(a, 0).has_value());
    CHECK(g.op_type(a).empty());
    CHECK(g.find("a") == a);
    CHECK_FALSE(g.find("b").has_value());
}

TEST_CASE("basic_graph: op types are kept once per distinct text; each node reads its own") {
    numgap::basic_graph g;
    const std::vector<std::string> ops = {"", "conv", "aten.native_layer_norm.default_with_a_long_name", "relu",
                                          "conv"};
    for (int i = 0; i < 3000; ++i) {
        // Repeated ops, and every 7th node an op of its own.
        const std::string op = i % 7 == 0 ? "custom_" + std::to_string(i) : ops[std::size_t(i) % ops.size()];
        g.add_node("n" + std::to_string(i), op);
    }
    for (int i = 0; i < 3000; ++i) {
        const std::string expected = i % 7 == 0 ? "custom_" + std::to_string(i) : ops[std::size_t(i) % ops.size()];
        CHECK(g.op_type(std::size_t(i)) == expected);
    }
    CHECK(g.node(1).op_index == g.node(4).op_index); // "conv" twice: one entry
    CHECK(g.node(5).op_index == 0);                  // the empty op
    g.set_op(1, "relu");
    g.set_op(2, "");
    g.set_op(3, "brand_new_op");
    CHECK(g.op_type(1) == "relu");
    CHECK(g.op_type(2).empty());
    CHECK(g.op_type(3) == "brand_new_op");
    CHECK(g.op_type(4) == "conv"); // untouched by its neighbour's change
    g.set_op(6, g.op_type(3));     // a view of the graph's own table
    CHECK(g.op_type(6) == "brand_new_op");
    CHECK(g.node(6).op_index == g.node(3).op_index);
    numgap::basic_graph copy = g;
    copy.set_op(4, "changed");
    copy.add_node("extra", "brand_new_op");
    CHECK(g.op_type(4) == "conv");
    CHECK(copy.op_type(4) == "changed");
    CHECK(copy.op_type(3000) == "brand_new_op");
    CHECK(copy.node(3000).op_index == copy.node(3).op_index);
}

TEST_CASE("basic_graph: rejects a producer that does not exist") {
    numgap::basic_graph g;
    g.add_node("a");
    CHECK_THROWS_WITH_AS(g.add_node("conv1", "conv", {0, 5}),
                         doctest::Contains("node 'conv1' (index 1) lists producer index 5"), numgap::error);
    CHECK(g.num_nodes() == 1); // nothing half-added
    CHECK_THROWS_WITH_AS(g.add_edge(3, 0), doctest::Contains("producer index 3"), numgap::error);
    CHECK_THROWS_WITH_AS(g.add_edge(0, 3), doctest::Contains("node index 3 does not exist"), numgap::error);
    CHECK_THROWS_AS(g.set_producers(0, {1}), numgap::error);
    const auto dangling = numgap_test::caught_error([&] { g.add_node("conv1", "conv", {0, 5}); });
    REQUIRE(dangling.has_value());
    CHECK(dangling->kind() == numgap::error_kind::graph);
    CHECK(dangling->where().item == "conv1");
    const auto missing = numgap_test::caught_error([&] { g.add_edge(0, 3); });
    REQUIRE(missing.has_value());
    CHECK(missing->kind() == numgap::error_kind::graph);
}

TEST_CASE("basic_graph: ambiguous lookups throw naming the key") {
    numgap::basic_graph g;
    g.add_node("dup", "", {}, {}, {"t0"});
    g.add_node("dup", "", {}, {}, {"t0"});
    CHECK_THROWS_WITH_AS(g.find("dup"), doctest::Contains("node name 'dup' belongs to several nodes"), numgap::error);
    CHECK_THROWS_WITH_AS(g.producer_of("t0"), doctest::Contains("'t0'"), numgap::error);
    const auto ambiguous = numgap_test::caught_error([&] { (void)g.producer_of("t0"); });
    REQUIRE(ambiguous.has_value());
    CHECK(ambiguous->kind() == numgap::error_kind::graph);
    CHECK(ambiguous->where().item == "t0");
}

TEST_CASE("basic_graph: find_first and first_producer_of answer where find and producer_of throw") {
    numgap::basic_graph g;
    CHECK(g.names_given_and_unique());
    g.add_node("a", "", {}, {}, {"t0"});
    g.add_node("b", "", {0}, {}, {"t1"});
    CHECK(g.names_given_and_unique());
    g.add_node("a", "", {1}, {}, {"t0"}); // both repeated
    CHECK_FALSE(g.names_given_and_unique());
    CHECK_THROWS_AS(g.find("a"), numgap::error);
    CHECK_THROWS_AS(g.producer_of("t0"), numgap::error);
    CHECK(g.find_first("a") == std::optional<std::size_t>(0));
    CHECK(g.first_producer_of("t0") == std::optional<std::size_t>(0));
    CHECK(g.find_first("b") == std::optional<std::size_t>(1));
    CHECK(g.first_producer_of("t1") == std::optional<std::size_t>(1));
    CHECK_FALSE(g.find_first("t0").has_value());
    CHECK_FALSE(g.first_producer_of("a").has_value());

    numgap::basic_graph unnamed;
    unnamed.add_node("x");
    unnamed.add_node("");
    CHECK_FALSE(unnamed.names_given_and_unique()); // an empty name is no name
    numgap::basic_graph copy = g;
    CHECK_FALSE(copy.names_given_and_unique());
}

TEST_CASE("basic_graph: producer of resolves every output key") {
    numgap::basic_graph g;
    const auto x = g.add_node("x");
    const auto topk = g.add_node("topk", "topk", {x}, {}, {"values", "indices"});
    CHECK(g.producer_of("x") == x);
    CHECK(g.producer_of("values") == topk);
    CHECK(g.producer_of("indices") == topk);
    CHECK_FALSE(g.producer_of("topk").has_value()); // the name is not a key here
    g.set_output_keys(topk, {"v"});
    CHECK_FALSE(g.producer_of("values").has_value());
    CHECK(g.producer_of("v") == topk);
}

TEST_CASE("basic_graph: output shapes are stored once one is set and cleared with the output keys") {
    numgap::basic_graph g;
    const auto split = g.add_node("split", "split", {}, {}, {"low", "high"});
    CHECK_FALSE(g.output_shape(split, 0).has_value());
    CHECK_FALSE(g.output_shape(split, 1).has_value());
    g.set_output_shape(split, 1, {2, 3});
    CHECK_FALSE(g.output_shape(split, 0).has_value());
    CHECK(g.output_shape(split, 1) == numgap::shape_type{2, 3});
    CHECK_FALSE(g.output_shape(split, 2).has_value()); // no such output
    g.set_output_shape(split, 0, {4});
    CHECK(g.output_shape(split, 0) == numgap::shape_type{4});
    CHECK(g.output_shape(split, 1) == numgap::shape_type{2, 3});
    // Replacing one output's shape by one of another rank keeps the others.
    g.set_output_shape(split, 0, {});
    CHECK(g.output_shape(split, 0) == numgap::shape_type{});
    CHECK(g.output_shape(split, 1) == numgap::shape_type{2, 3});
    g.set_output_shape(split, 0, {5, 6, 7, 8});
    g.set_output_shape(split, 1, {9});
    CHECK(g.output_shape(split, 0) == numgap::shape_type{5, 6, 7, 8});
    CHECK(g.output_shape(split, 1) == numgap::shape_type{9});
    g.set_output_keys(split, {"a", "b", "c"});
    for (std::size_t k = 0; k < 3; ++k) CHECK_FALSE(g.output_shape(split, k).has_value());
    g.set_output_shape(split, 2, {1});
    CHECK_FALSE(g.output_shape(split, 0).has_value());
    CHECK_FALSE(g.output_shape(split, 1).has_value());
    CHECK(g.output_shape(split, 2) == numgap::shape_type{1});
    CHECK_THROWS_WITH_AS(g.set_output_shape(split, 3, {1}), doctest::Contains("'split' has 3 outputs"), numgap::error);
}

TEST_CASE("basic_graph: a node named by a view of another node's name copies it") {
    numgap::basic_graph g;
    const std::string long_name(100, 'n');
    g.add_node(long_name);
    // Each add may grow the graph's text while the name it copies lies in it.
    for (int i = 0; i < 200; ++i) g.add_node(g.node_name(std::size_t(i)), g.op_type(0));
    for (std::size_t i = 0; i < g.num_nodes(); ++i) CHECK(g.node_name(i) == long_name);
    CHECK_THROWS_AS(g.find(long_name), numgap::error); // 201 nodes share it
    // With output keys of its own, whose text is stored in the same arena.
    const std::vector<std::string> keys(8, std::string(200, 'k'));
    for (int i = 0; i < 50; ++i) {
        const std::size_t added = g.add_node(g.node_name(0), {}, {}, {}, keys);
        CHECK(g.node_name(added) == long_name);
        CHECK(numgap_test::as_vector(g.output_keys(added)) == keys);
    }
}

TEST_CASE("basic_graph: a moved-from graph can be used again") {
    numgap::basic_graph g;
    g.add_node("a");
    for (int i = 0; i < 100; ++i) g.set_output_keys(0, {std::string(100, char('a' + i % 26))}); // text left behind
    numgap::basic_graph moved = std::move(g);
    CHECK(moved.num_nodes() == 1);
    g = numgap::basic_graph(); // as a caller reusing the variable does
    g.add_node("fresh");
    for (int i = 0; i < 100; ++i) g.set_output_keys(0, {std::string(100, char('a' + i % 26))});
    CHECK(numgap_test::as_vector(g.output_keys(0)) == std::vector<std::string>{std::string(100, char('a' + 99 % 26))});
    numgap::basic_graph reused = std::move(moved);
    moved.add_node("again"); // moved-from, not reassigned
    moved.set_output_keys(0, {"y"});
    for (int i = 0; i < 100; ++i) moved.set_output_keys(0, {std::string(100, 'z')});
    CHECK(moved.node_name(0) == "again");
    CHECK(moved.producer_of(std::string(100, 'z')) == 0);
}

TEST_CASE("basic_graph: node without outputs") {
    numgap::basic_graph g;
    const auto sink = g.add_node("print");
    g.set_output_keys(sink, {});
    CHECK(g.output_keys(sink).empty());
    CHECK_FALSE(g.output_shape(sink, 0).has_value());
    CHECK_THROWS_WITH_AS(g.set_output_shape(sink, 0, {1}), doctest::Contains("'print' has 0 outputs"), numgap::error);
}

TEST_CASE("basic_graph: edges may point forward for file order") {
    numgap::basic_graph g;
    const auto consumer = g.add_node("consumer");
    const auto producer = g.add_node("producer");
    g.add_edge(producer, consumer);
    CHECK(numgap_test::as_vector(g.producers(consumer)) == std::vector<std::size_t>{producer});
    g.set_producers(consumer, {});
    CHECK(g.producers(consumer).empty());
}

TEST_CASE("basic_graph: tracks whether index order is topological") {
    // The flag lets topological_order skip its edge scan; it must turn false
    // on the first backward (or self) edge, whichever call makes it, and
    // stay true for forward edges.
    numgap::basic_graph g;
    CHECK(g.index_order_is_topological());
    g.add_node("a");
    g.add_node("b", "", {0});
    g.add_node("c");
    g.add_edge(1, 2); // forward
    g.set_producers(2, {0, 1});
    CHECK(g.index_order_is_topological());
    g.add_edge(2, 0); // backward
    CHECK_FALSE(g.index_order_is_topological());
    numgap::basic_graph h;
    h.add_node("a");
    h.set_producers(0, {0}); // self loop
    CHECK_FALSE(h.index_order_is_topological());
}

TEST_CASE("basic_graph: replacing output keys reindexes only that node's keys") {
    numgap::basic_graph g;
    const auto a = g.add_node("a", "op", {}, {}, {"x", "y"});
    const auto b = g.add_node("b", "op", {a}, {}, {"y"});
    const auto c = g.add_node("c", "op", {a}, {}, {"z", "z"}); // a key listed twice by one node is still its own
    CHECK(g.producer_of("x") == a);
    CHECK(g.producer_of("z") == c);
    const auto shared = numgap_test::caught_error([&] { (void)g.producer_of("y"); }); // a's and b's
    REQUIRE(shared.has_value());
    CHECK(shared->where().item == "y");
    g.set_output_keys(b, {"w"}); // "y" is a's alone again
    CHECK(g.producer_of("y") == a);
    CHECK(g.producer_of("w") == b);
    g.set_output_keys(c, {});
    CHECK_FALSE(g.producer_of("z").has_value());
    g.set_output_keys(a, {"q"});
    CHECK_FALSE(g.producer_of("x").has_value());
    CHECK_FALSE(g.producer_of("y").has_value());
    CHECK(g.producer_of("q") == a);
    const numgap::basic_graph copy = g; // the indices refer to nodes by index, so copies work
    CHECK(copy.producer_of("w") == b);
    CHECK(copy.find("c") == c);
    // Many nodes, each given its keys after adding (as run_graph does for
    // "outputs": []): each call reindexes one node, not the graph.
    numgap::basic_graph many;
    for (int i = 0; i < 20000; ++i) many.set_output_keys(many.add_node("n" + std::to_string(i)), {});
    CHECK(many.find("n19999") == 19999u);
    CHECK_FALSE(many.producer_of("n5").has_value());
    // One node renamed over and over: its old keys' index entries are
    // reclaimed, and lookups stay right across the compactions.
    for (int round = 0; round < 5000; ++round) {
        many.set_output_keys(7, {"r" + std::to_string(round), "s" + std::to_string(round)});
        if (round % 997 == 0) {
            CHECK(many.producer_of("r" + std::to_string(round)) == 7u);
            CHECK_FALSE(many.producer_of("r" + std::to_string(round - 1)).has_value());
        }
    }
    CHECK(many.producer_of("s4999") == 7u);
    CHECK_FALSE(many.producer_of("s4998").has_value());
}

TEST_CASE("basic_graph: agrees with a model of vectors through random edits") {
    // The lists live in shared pools (core/list_pool.hpp) that move lists
    // and compact: every accessor must still see each node's own lists.
    struct model_node {
        std::string name;
        std::vector<std::size_t> producers;
        std::vector<std::int64_t> handles;
        std::vector<std::string> keys;
        std::vector<std::optional<numgap::shape_type>> shapes; // by output, up to the last one set
    };
    std::mt19937 rng(7);
    const auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
    numgap::basic_graph g;
    std::vector<model_node> model;
    for (int step = 0; step < 6000; ++step) {
        const std::size_t action = model.empty() ? 0 : pick(6);
        if (action == 0) {
            model_node node{"n" + std::to_string(model.size()), {}, {}, {}, {}};
            for (std::size_t k = pick(3); k > 0 && !model.empty(); --k) node.producers.push_back(pick(model.size()));
            for (std::size_t k = pick(3); k > 0; --k) node.handles.push_back(std::int64_t(pick(100)));
            // No keys (the default: the name), the name itself, or keys of its own.
            const std::size_t keys = pick(3);
            std::vector<std::string> given;
            if (keys == 1) given = {node.name};
            if (keys == 2) given = {node.name + ".a-long-output-key-name", node.name + ".b"};
            g.add_node(node.name, "op", node.producers, node.handles, given);
            node.keys = given.empty() ? std::vector<std::string>{node.name} : given;
            model.push_back(node);
        } else if (action == 1) {
            const std::size_t consumer = pick(model.size()), producer = pick(model.size());
            g.add_edge(producer, consumer);
            model[consumer].producers.push_back(producer);
        } else if (action == 2) {
            const std::size_t node = pick(model.size());
            std::vector<std::size_t> producers(pick(4));
            for (std::size_t& producer : producers) producer = pick(model.size());
            g.set_producers(node, producers);
            model[node].producers = producers;
        } else if (action == 3) {
            const std::size_t node = pick(model.size());
            std::vector<std::int64_t> handles(pick(4), std::int64_t(step));
            g.set_debug_handles(node, handles);
            model[node].handles = handles;
        } else if (action == 4) {
            const std::size_t node = pick(model.size());
            std::vector<std::string> keys;
            for (std::size_t k = pick(3); k > 0; --k)
                keys.push_back("k" + std::to_string(step) + "_" + std::to_string(k));
            g.set_output_keys(node, keys);
            model[node].keys = keys;
            model[node].shapes.clear();
        } else {
            const std::size_t node = pick(model.size());
            if (model[node].keys.empty()) continue;
            const std::size_t output = pick(model[node].keys.size());
            numgap::shape_type shape(pick(5));
            for (std::int64_t& extent : shape) extent = std::int64_t(pick(1000));
            g.set_output_shape(node, output, shape);
            if (model[node].shapes.size() <= output) model[node].shapes.resize(output + 1);
            model[node].shapes[output] = shape;
        }
    }
    REQUIRE(g.num_nodes() == model.size());
    for (std::size_t i = 0; i < model.size(); ++i) {
        CAPTURE(i);
        CHECK(g.node_name(i) == model[i].name);
        CHECK(numgap_test::as_vector(g.producers(i)) == model[i].producers);
        CHECK(numgap_test::as_vector(g.debug_handles(i)) == model[i].handles);
        CHECK(numgap_test::as_vector(g.output_keys(i)) == model[i].keys);
        CHECK(g.find(model[i].name) == i);
        for (const std::string& key : model[i].keys) CHECK(g.producer_of(key) == i);
        for (std::size_t k = 0; k <= model[i].keys.size(); ++k)
            CHECK(g.output_shape(i, k) == (k < model[i].shapes.size() ? model[i].shapes[k] : std::nullopt));
    }
}
} // TEST_SUITE("graph")
