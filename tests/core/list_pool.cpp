// Pins down detail::list_pool against a std::vector of std::vectors as the
// model: random push_list, assign (longer, shorter, empty), append to the
// last list and to earlier ones, and truncate, for trivially copyable
// elements and strings, through compactions; and that appending one at a
// time keeps the array within a small multiple of the live elements (the
// amortised O(1) growth the graph's add_edge relies on).
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <numgap/core/list_pool.hpp>

namespace list_pool_test {
template <class T>
void check_equal(const numgap::detail::list_pool<T>& pool, const std::vector<std::vector<T>>& model) {
    REQUIRE(pool.num_lists() == model.size());
    for (std::size_t list = 0; list < model.size(); ++list) {
        const auto got = pool.get(list);
        CAPTURE(list);
        REQUIRE(std::vector<T>(got.begin(), got.end()) == model[list]);
    }
}

template <class T, class Make>
void random_operations(Make make, unsigned seed) {
    std::mt19937 rng(seed);
    numgap::detail::list_pool<T> pool("elements");
    std::vector<std::vector<T>> model;
    std::size_t live = 0;
    const auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
    for (int step = 0; step < 20000; ++step) {
        const std::size_t action = pick(10);
        if (model.empty() || action < 2) {
            std::vector<T> list(pick(4));
            for (T& element : list) element = make(static_cast<unsigned>(rng()));
            CHECK(pool.push_list(list.begin(), list.end()) == model.size());
            model.push_back(list);
        } else if (action < 7) { // append: to the last list or any earlier one
            const std::size_t list = action < 4 ? model.size() - 1 : pick(model.size());
            const T element = make(static_cast<unsigned>(rng()));
            pool.append(list, element);
            model[list].push_back(element);
        } else if (action < 9) {
            const std::size_t list = pick(model.size());
            std::vector<T> replacement(pick(6));
            for (T& element : replacement) element = make(static_cast<unsigned>(rng()));
            pool.assign(list, replacement.begin(), replacement.end());
            model[list] = replacement;
        } else {
            const std::size_t keep = model.size() - pick(2); // the last list or none
            pool.truncate(keep);
            model.resize(keep);
        }
        if (step % 997 == 0) check_equal(pool, model);
    }
    check_equal(pool, model);
    for (const auto& list : model) live += list.size();
    // Leftovers never outnumber the live elements by much (compaction runs
    // once they pass half the array), plus the room appended lists keep.
    CHECK(pool.num_slots() <= 4 * live + 4096);
}
} // namespace list_pool_test

TEST_SUITE("core") {
TEST_CASE("list_pool: agrees with a vector of vectors over random operations") {
    list_pool_test::random_operations<std::size_t>([](unsigned v) { return std::size_t(v); }, 1);
    list_pool_test::random_operations<std::int64_t>([](unsigned v) { return -std::int64_t(v % 1000); }, 2);
    // Strings past the small-string buffer: moves during growth and compaction must keep them whole.
    list_pool_test::random_operations<std::string>(
        [](unsigned v) { return "key-with-a-long-name-" + std::to_string(v % 5000); }, 3);
}

TEST_CASE("list_pool: empty lists, and a list appended to while others follow it") {
    numgap::detail::list_pool<std::size_t> pool("producers");
    const std::vector<std::size_t> none;
    CHECK(pool.push_list(none.begin(), none.end()) == 0);
    CHECK(pool.get(0).empty());
    const std::vector<std::size_t> two = {4, 5};
    CHECK(pool.push_list(two.begin(), two.end()) == 1);
    // List 0 is no longer last: appending one at a time moves it with room to grow.
    const std::size_t appended = 100000;
    for (std::size_t i = 0; i < appended; ++i) pool.append(0, i);
    const auto first = pool.get(0);
    REQUIRE(first.size() == appended);
    CHECK(first.front() == 0);
    CHECK(first.back() == appended - 1);
    CHECK(pool.get(1).size() == 2);
    CHECK(pool.get(1)[1] == 5);
    // Doubling room: the array holds at most a few times the live elements.
    CHECK(pool.num_slots() <= 4 * (appended + 2));
    // Appending to the last list while it ends the array grows it in place.
    numgap::detail::list_pool<std::size_t> dense("producers");
    for (std::size_t node = 0; node < 1000; ++node) {
        dense.push_list(none.begin(), none.end());
        for (std::size_t edge = 0; edge < 3; ++edge) dense.append(node, edge);
    }
    CHECK(dense.num_slots() == 3000);
}

TEST_CASE("list_pool: slots left behind are reclaimed, and the lists survive the compaction") {
    numgap::detail::list_pool<std::string> pool("output keys");
    const std::vector<std::string> tail = {"tail-key-long-enough-for-the-heap"};
    std::vector<std::string> grown;
    pool.push_list(grown.begin(), grown.end());
    pool.push_list(tail.begin(), tail.end());
    // Each assign outgrows the list, so it moves to the end and leaves its
    // old slots behind: without compaction the array would hold ~500,000.
    for (int round = 0; round < 1000; ++round) {
        grown.push_back("key-" + std::to_string(round) + "-with-a-long-enough-name");
        pool.assign(0, grown.begin(), grown.end());
    }
    CHECK(pool.num_slots() < 4 * (grown.size() + 1) + 4096);
    const auto got = pool.get(0);
    CHECK(std::vector<std::string>(got.begin(), got.end()) == grown);
    CHECK(pool.get(1)[0] == tail[0]);
}
} // TEST_SUITE("core")
