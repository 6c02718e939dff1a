// Pins down node_list, the node-set container of match groups: it behaves as
// a std::vector<std::size_t> for everything node sets are used for (contents,
// order, equality and ordering with vectors on either side, copies that do
// not share storage, moves that leave an empty reusable list), keeps up to
// inline_capacity nodes without a heap block, grows past that without losing
// or reordering nodes, and is no larger than a std::vector.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <map>
#include <numeric>
#include <sstream>
#include <utility>
#include <vector>

#include <numgap/match/match_group.hpp>
#include <numgap/match/node_list.hpp>

namespace {

std::vector<std::size_t> iota_vector(std::size_t count, std::size_t first = 0) {
    std::vector<std::size_t> nodes(count);
    std::iota(nodes.begin(), nodes.end(), first);
    return nodes;
}

// Stored inline: the elements live inside the object itself.
bool is_inline(const numgap::node_list& nodes) {
    const auto* object = reinterpret_cast<const char*>(&nodes);
    const auto* data = reinterpret_cast<const char*>(nodes.data());
    return data >= object && data < object + sizeof(nodes);
}

} // namespace

TEST_SUITE("match") {
TEST_CASE("node_list: default is empty and inline") {
    const numgap::node_list nodes;
    CHECK(nodes.empty());
    CHECK(nodes.size() == 0);
    CHECK(nodes.begin() == nodes.end());
    CHECK(nodes.capacity() == numgap::node_list::inline_capacity);
    CHECK(is_inline(nodes));
    CHECK(nodes == std::vector<std::size_t>{});
}

TEST_CASE("node_list: is no larger than a vector") {
    // The point of the type: a group's node sets cost no more space than
    // vectors and no heap block for small groups.
    CHECK(sizeof(numgap::node_list) <= sizeof(std::vector<std::size_t>));
    CHECK(numgap::node_list::inline_capacity >= 2);
}

TEST_CASE("node_list: small lists stay inline") {
    numgap::node_list nodes{7};
    CHECK(is_inline(nodes));
    nodes.push_back(3);
    CHECK(is_inline(nodes));
    CHECK(nodes.size() == 2);
    CHECK(nodes.front() == 7);
    CHECK(nodes.back() == 3);
    CHECK(nodes[0] == 7);
    CHECK(nodes[1] == 3);
}

TEST_CASE("node_list: grows past inline capacity keeping order") {
    numgap::node_list nodes;
    const auto expected = iota_vector(1000, 5);
    for (std::size_t i = 0; i < expected.size(); ++i) {
        nodes.push_back(expected[i]);
        // Every intermediate state is the prefix pushed so far: no element
        // is lost or reordered when storage moves inline -> heap -> bigger heap.
        REQUIRE(nodes.size() == i + 1);
        REQUIRE(nodes.back() == expected[i]);
        REQUIRE(nodes.front() == expected[0]);
    }
    CHECK(!is_inline(nodes));
    CHECK(nodes.capacity() >= 1000);
    CHECK(nodes == expected);
    CHECK(std::equal(nodes.begin(), nodes.end(), expected.begin(), expected.end()));
    // Contiguous: data() indexes like operator[].
    for (std::size_t i = 0; i < nodes.size(); ++i) REQUIRE(nodes.data()[i] == nodes[i]);
}

TEST_CASE("node_list: equality with vectors either side") {
    const numgap::node_list nodes{1, 2, 3};
    const std::vector<std::size_t> same{1, 2, 3}, shorter{1, 2}, longer{1, 2, 3, 4}, different{1, 2, 4};
    CHECK(nodes == same);
    CHECK(same == nodes);
    CHECK(nodes != shorter);
    CHECK(shorter != nodes);
    CHECK(nodes != longer);
    CHECK(nodes != different);
    CHECK(nodes == numgap::node_list{1, 2, 3});
    CHECK(nodes != numgap::node_list{3, 2, 1});
    CHECK(numgap::node_list{} != numgap::node_list{0});
}

TEST_CASE("node_list: ordering is lexicographic like vector") {
    const std::vector<std::vector<std::size_t>> samples{{}, {0}, {0, 1}, {0, 1, 2}, {1}, {1, 0}, {2}, {0, 2}};
    for (const auto& a : samples)
        for (const auto& b : samples) {
            const numgap::node_list list_a(a), list_b(b);
            REQUIRE((list_a < list_b) == (a < b));
            REQUIRE((list_a < b) == (a < b));
            REQUIRE((a < list_b) == (a < b));
            REQUIRE((list_a == list_b) == (a == b));
        }
    // So it can key an ordered container, as vectors of nodes did.
    std::map<numgap::node_list, int> by_nodes;
    by_nodes[{2, 3}] = 1;
    by_nodes[{1}] = 2;
    by_nodes[{2, 3}] = 3;
    CHECK(by_nodes.size() == 2);
    CHECK(by_nodes.begin()->first == std::vector<std::size_t>{1});
    CHECK(by_nodes.at({2, 3}) == 3);
}

TEST_CASE("node_list: copies do not share storage") {
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{50}}) {
        CAPTURE(count);
        numgap::node_list original(iota_vector(count));
        numgap::node_list copy(original);
        CHECK(copy == original);
        CHECK(copy == iota_vector(count));
        if (count > 0) {
            CHECK(copy.data() != original.data());
            copy[0] = 999;
            CHECK(original[0] == 0); // writing the copy leaves the original alone
        }
        copy.push_back(42);
        CHECK(original.size() == count);
    }
}

TEST_CASE("node_list: copy assignment between inline and heap") {
    const numgap::node_list small{4, 5}, big(iota_vector(40));
    numgap::node_list target = small;
    target = big; // inline -> heap
    CHECK(target == big);
    target = small; // heap -> small contents (capacity may stay)
    CHECK(target == small);
    CHECK(target.size() == 2);
    numgap::node_list& alias = target;
    target = alias; // self-assignment keeps the contents
    CHECK(target == small);
    target = {9, 8, 7};
    CHECK(target == std::vector<std::size_t>{9, 8, 7});
}

TEST_CASE("node_list: moves leave an empty reusable list") {
    SUBCASE("inline") {
        numgap::node_list source{1, 2};
        numgap::node_list moved(std::move(source));
        CHECK(moved == std::vector<std::size_t>{1, 2});
        CHECK(source.empty()); // NOLINT(bugprone-use-after-move): documented state
        source.push_back(3);
        CHECK(source == std::vector<std::size_t>{3});
        CHECK(moved == std::vector<std::size_t>{1, 2});
    }
    SUBCASE("heap: storage is handed over, not copied") {
        numgap::node_list source(iota_vector(10));
        const std::size_t* storage = source.data();
        numgap::node_list moved(std::move(source));
        CHECK(moved.data() == storage);
        CHECK(moved == iota_vector(10));
        CHECK(source.empty()); // NOLINT(bugprone-use-after-move)
        CHECK(is_inline(source));
        source.push_back(1);
        CHECK(source.size() == 1);
    }
    SUBCASE("move assignment over a heap list frees nothing twice") {
        numgap::node_list target(iota_vector(20));
        numgap::node_list source(iota_vector(30, 100));
        target = std::move(source);
        CHECK(target == iota_vector(30, 100));
        CHECK(source.empty()); // NOLINT(bugprone-use-after-move)
        target = numgap::node_list{5};
        CHECK(target == std::vector<std::size_t>{5});
    }
}

TEST_CASE("node_list: converts to and from vectors and ranges") {
    const std::vector<std::size_t> vector_nodes{3, 1, 2};
    const numgap::node_list nodes = vector_nodes;
    const std::vector<std::size_t> back = nodes;
    CHECK(back == vector_nodes);
    // An input-only range (no size known up front) is read in order.
    std::istringstream text("8 6 4 2");
    const numgap::node_list from_stream{std::istream_iterator<std::size_t>(text), std::istream_iterator<std::size_t>()};
    CHECK(from_stream == std::vector<std::size_t>{8, 6, 4, 2});
}

TEST_CASE("node_list: works with algorithms and reverse iteration") {
    numgap::node_list nodes{5, 3, 9, 1};
    std::sort(nodes.begin(), nodes.end());
    CHECK(nodes == std::vector<std::size_t>{1, 3, 5, 9});
    const std::vector<std::size_t> reversed(nodes.rbegin(), nodes.rend());
    CHECK(reversed == std::vector<std::size_t>{9, 5, 3, 1});
    CHECK(std::count(nodes.begin(), nodes.end(), 5) == 1);
    std::size_t sum = 0;
    for (auto node : nodes) sum += node;
    CHECK(sum == 18);
}

TEST_CASE("node_list: clear keeps capacity") {
    numgap::node_list nodes(iota_vector(16));
    const auto capacity = nodes.capacity();
    nodes.clear();
    CHECK(nodes.empty());
    CHECK(nodes.capacity() == capacity);
    nodes.push_back(4);
    CHECK(nodes == std::vector<std::size_t>{4});
}

TEST_CASE("match group node sets accept vectors and lists") {
    // Code written against the vector-typed fields keeps compiling and
    // behaving the same.
    numgap::match_group group;
    group.reference_nodes = std::vector<std::size_t>{1, 2};
    group.target_nodes = {3};
    std::vector<std::size_t> reference = group.reference_nodes;
    CHECK(reference == std::vector<std::size_t>{1, 2});
    CHECK(group.target_nodes.back() == 3);
    CHECK(numgap::kind_of(group.reference_nodes.size(), group.target_nodes.size()) == numgap::match_kind::fused);
}
} // TEST_SUITE("match")
