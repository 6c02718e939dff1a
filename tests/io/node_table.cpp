// Pins down io::node_table against the node_specs it was given: names, ops
// (repeated and distinct), inputs, outputs (none, the name alone, others,
// the name among others), debug handles, for a few thousand random nodes;
// copies stay independent; clear() empties the table; views are the
// table's own text (an output list that is the name is the name); find()
// gives the first node of a name, and push_back says whether it was new.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/io/node_table.hpp>

namespace node_table_test {
std::vector<std::string> as_strings(const numgap::io::node_table::text_list& texts) {
    std::vector<std::string> strings;
    for (const std::string_view text : texts) strings.emplace_back(text);
    return strings;
}

void check_node(const numgap::io::node_table& table, std::size_t i, const numgap::io::node_spec& expected) {
    CAPTURE(i);
    CHECK(table.name(i) == expected.name);
    CHECK(table.op(i) == expected.op);
    CHECK(as_strings(table.inputs(i)) == expected.inputs);
    CHECK(as_strings(table.outputs(i)) == expected.outputs);
    CHECK(std::vector<std::int64_t>(table.debug_handles(i).begin(), table.debug_handles(i).end()) ==
          expected.debug_handles);
    const numgap::io::node_spec copied = table[i];
    CHECK(copied.name == expected.name);
    CHECK(copied.op == expected.op);
    CHECK(copied.inputs == expected.inputs);
    CHECK(copied.outputs == expected.outputs);
    CHECK(copied.debug_handles == expected.debug_handles);
}
} // namespace node_table_test

TEST_SUITE("io") {
TEST_CASE("node_table: every node reads back as the node_spec it was given") {
    std::mt19937 rng(11);
    const auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
    const std::vector<std::string> ops = {"", "aten.add.Tensor", "aten.scaled_dot_product_attention.default"};
    numgap::io::node_table table;
    std::vector<numgap::io::node_spec> given;
    for (std::size_t i = 0; i < 3000; ++i) {
        numgap::io::node_spec node;
        // Short names (in a string's own buffer) and long ones; an empty input text too.
        node.name = i % 3 == 0 ? "n" + std::to_string(i) : "model.layers." + std::to_string(i) + ".self_attn.q_proj";
        node.op = i % 11 == 0 ? "custom_op_" + std::to_string(i) : ops[pick(ops.size())];
        for (std::size_t k = pick(4); k > 0; --k)
            node.inputs.push_back(pick(10) == 0 ? "" : "t" + std::to_string(pick(5000)));
        switch (pick(4)) {
        case 0: break; // no outputs
        case 1: node.outputs = {node.name}; break;
        case 2: node.outputs = {node.name + ".0", node.name + ".1"}; break;
        case 3: node.outputs = {"first", node.name}; break;
        }
        for (std::size_t k = pick(3); k > 0; --k) node.debug_handles.push_back(std::int64_t(pick(1000)) - 500);
        // One node in ten repeats an earlier name: added all the same, reported, and find() keeps the first.
        if (i > 0 && i % 10 == 0) node.name = given[pick(i)].name;
        const bool new_name = !table.find(node.name).has_value();
        CHECK(table.push_back(node) == new_name);
        given.push_back(node);
    }
    REQUIRE(table.size() == given.size());
    for (std::size_t i = 0; i < given.size(); ++i) node_table_test::check_node(table, i, given[i]);
    std::map<std::string, std::size_t> first_of_name;
    for (std::size_t i = 0; i < given.size(); ++i) first_of_name.emplace(given[i].name, i);
    for (const numgap::io::node_spec& node : given)
        CHECK(table.find(node.name) == std::optional<std::size_t>(first_of_name.at(node.name)));
    CHECK_FALSE(table.find("not a node").has_value());
    CHECK_FALSE(table.find("").has_value());

    numgap::io::node_table copy = table;
    copy.clear();
    CHECK(copy.empty());
    CHECK_FALSE(copy.find(given[5].name).has_value());
    CHECK(copy.push_back(given[5]));
    node_table_test::check_node(copy, 0, given[5]);
    CHECK(copy.find(given[5].name) == std::optional<std::size_t>(0));
    node_table_test::check_node(table, 5, given[5]); // the original is untouched
    CHECK(table.size() == given.size());
}

TEST_CASE("node_table: a node named by a view of the table's own text") {
    // push_back stores the name before indexing it; the view may dangle once
    // storing has grown the text, so the stored copy is what gets indexed.
    numgap::io::node_table table;
    for (int i = 0; i < 3000; ++i)
        table.push_back({"a-node-name-longer-than-a-short-string-" + std::to_string(i), "op", {}, {}, {}});
    // As many again: the text doubles, so some push_back grows it while its name views it.
    for (std::size_t i = 0; i < 3000; ++i) {
        const std::string expected(table.name(i));
        CHECK_FALSE(table.push_back(table.name(i), table.op(i), {}, {}, {}));
        CHECK(table.name(table.size() - 1) == expected);
        CHECK(table.find(expected) == std::optional<std::size_t>(i));
    }
}

TEST_CASE("node_table: the views are the table's own text") {
    numgap::io::node_table table;
    table.push_back({"relu", "aten.relu.default", {"x"}, {"relu"}, {7}});
    table.push_back({"add", "aten.relu.default", {"relu", "x"}, {}, {}});
    // An output list that is the name alone is the name's own text, not a copy.
    CHECK(table.outputs(0)[0].data() == table.name(0).data());
    CHECK(table.outputs(1).empty());                 // given none: none (graph.json's reader gives {name} itself)
    CHECK(table.op(0).data() == table.op(1).data()); // one text per distinct op
    CHECK(table.inputs(1).size() == 2);
    CHECK(table.inputs(1)[1] == "x");
    // An input naming a node stored lately reuses that node's text.
    CHECK(table.inputs(1)[0].data() == table.name(0).data());
    CHECK(table.inputs(1)[1].data() == table.inputs(0)[0].data());

    // A moved-from table remembers texts it no longer holds: it must not use them.
    numgap::io::node_table moved = std::move(table);
    table.push_back({"relu", "aten.relu.default", {"x"}, {"relu"}, {}}); // NOLINT(bugprone-use-after-move)
    REQUIRE(table.size() == 1);
    CHECK(table.name(0) == "relu");
    CHECK(table.inputs(0)[0] == "x");
    CHECK(table.op(0) == "aten.relu.default");
    CHECK(table.find("relu") == std::optional<std::size_t>(0));
    CHECK_FALSE(table.find("add").has_value());
    CHECK(moved.size() == 2);
    CHECK(moved.find("add") == std::optional<std::size_t>(1));
    CHECK(moved.op(1) == "aten.relu.default");
}
} // TEST_SUITE("io")
