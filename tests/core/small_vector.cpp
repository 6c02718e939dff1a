// Pins down numgap::small_vector (core/small_vector.hpp) against std::vector
// as the model: random push/emplace/pop/resize/clear/copy/move on strings
// long enough to own heap blocks, across the inline/heap boundary; element
// lifetimes (every constructed element destroyed once); moves (a heap block
// changes hands, inline elements are moved one by one); an argument that
// refers to an element while the vector grows; the strong guarantee of
// growth when a copy throws; and append_generated (in place, all or nothing).
#include <doctest/doctest.h>

#include <cstddef>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <numgap/core/small_vector.hpp>

namespace small_vector_test {
// Counts live objects; its copy constructor throws once copies_left reaches
// 0, and its move constructor may throw, so growth copies it.
struct tracked {
    static inline int live = 0;
    static inline int copies_left = 1 << 30;
    int value = 0;
    tracked() { ++live; }
    explicit tracked(int v) : value(v) { ++live; }
    tracked(const tracked& other) : value(other.value) {
        if (copies_left-- <= 0) throw std::runtime_error("copy refused");
        ++live;
    }
    tracked(tracked&& other) noexcept(false) : value(other.value) {
        ++live;
        ++moves;
    }
    static inline int moves = 0;
    tracked& operator=(const tracked&) = default;
    ~tracked() { --live; }
    bool operator==(const tracked& other) const { return value == other.value; }
};

template <class T, std::size_t N>
std::vector<T> as_std(const numgap::small_vector<T, N>& v) {
    return std::vector<T>(v.begin(), v.end());
}
} // namespace small_vector_test

TEST_SUITE("core") {
TEST_CASE("small_vector keeps N elements inside and grows onto the heap past them") {
    numgap::small_vector<std::string, 4> v;
    CHECK(v.empty());
    CHECK(v.capacity() == 4);
    const std::string* inside = v.data();
    for (int i = 0; i < 4; ++i) v.push_back(std::to_string(i));
    CHECK(v.data() == inside);
    CHECK(v.capacity() == 4);
    v.emplace_back(40, 'x'); // past N: a heap block
    CHECK(v.data() != inside);
    CHECK(v.capacity() >= 5);
    CHECK(v.size() == 5);
    CHECK(v[0] == "0");
    CHECK(v[3] == "3");
    CHECK(v.back() == std::string(40, 'x'));
    CHECK(v.front() == "0");
    v.pop_back();
    CHECK(v.size() == 4);
    v.resize(2);
    CHECK(small_vector_test::as_std(v) == std::vector<std::string>{"0", "1"});
    v.resize(6);
    CHECK(v.size() == 6);
    CHECK(v[5].empty()); // value-initialised
    v.clear();
    CHECK(v.empty());
    numgap::small_vector<int, 3> numbers{1, 2, 3};
    numbers.resize(5);
    CHECK(numbers[3] == 0);
    CHECK(numbers[4] == 0);
    CHECK(numbers == numgap::small_vector<int, 3>{1, 2, 3, 0, 0});
    CHECK_FALSE(numbers == numgap::small_vector<int, 3>{1, 2, 3, 0});
}

TEST_CASE("small_vector grows geometrically, also by resize, and refuses more than max_size") {
    numgap::small_vector<int, 2> v;
    std::size_t blocks = 0;
    const int* last = v.data();
    for (int i = 0; i < 1000; ++i) {
        v.resize(v.size() + 1);
        if (v.data() != last) ++blocks;
        last = v.data();
    }
    CHECK(blocks <= 10); // 2 -> 4 -> ... -> 1024: nine new blocks
    CHECK(v.capacity() < 2048);
    CHECK(v.max_size() == std::size_t(std::numeric_limits<std::ptrdiff_t>::max()) / sizeof(int));
    CHECK_THROWS_AS(v.reserve(v.max_size() + 1), std::length_error);
    CHECK(v.size() == 1000);
}

TEST_CASE("small_vector copies and moves, inside and on the heap") {
    using vector = numgap::small_vector<std::string, 2>;
    const std::string long_text(64, 'q');
    for (const std::size_t count : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(9)}) {
        CAPTURE(count);
        vector source;
        std::vector<std::string> model;
        for (std::size_t i = 0; i < count; ++i) {
            source.push_back(long_text + std::to_string(i));
            model.push_back(long_text + std::to_string(i));
        }
        vector copy(source);
        CHECK(small_vector_test::as_std(copy) == model);
        CHECK(small_vector_test::as_std(source) == model);
        const std::string* block = source.data();
        vector moved(std::move(source));
        CHECK(small_vector_test::as_std(moved) == model);
        CHECK(source.empty()); // NOLINT(bugprone-use-after-move): the moved-from state is specified
        if (count > 2) CHECK(moved.data() == block); // the heap block changed hands
        vector assigned{"stale", "values", "here"};
        assigned = copy;
        CHECK(small_vector_test::as_std(assigned) == model);
        vector move_assigned{"x"};
        move_assigned = std::move(copy);
        CHECK(small_vector_test::as_std(move_assigned) == model);
        CHECK(copy.empty()); // NOLINT(bugprone-use-after-move)
        auto& self = assigned;
        assigned = self;
        CHECK(small_vector_test::as_std(assigned) == model);
        assigned = std::move(self);
        CHECK(small_vector_test::as_std(assigned) == model);
        source.push_back("reused"); // a moved-from vector is usable
        CHECK(source.size() == 1);
    }
}

TEST_CASE("small_vector: an argument referring to an element survives growth") {
    numgap::small_vector<std::string, 2> v{std::string(50, 'a'), std::string(50, 'b')};
    v.push_back(v[0]); // full: grows, and v[0] must still be read intact
    CHECK(v.size() == 3);
    CHECK(v[2] == std::string(50, 'a'));
    while (v.size() < v.capacity()) v.push_back("fill");
    v.emplace_back(v[1]);
    CHECK(v.back() == std::string(50, 'b'));
}

TEST_CASE("small_vector destroys every element it constructed, and growth is all or nothing") {
    using small_vector_test::tracked;
    tracked::live = 0;
    tracked::copies_left = 1 << 30;
    {
        numgap::small_vector<tracked, 3> v;
        for (int i = 0; i < 10; ++i) v.emplace_back(i);
        CHECK(tracked::live == 10);
        numgap::small_vector<tracked, 3> copy(v);
        CHECK(tracked::live == 20);
        v.resize(4);
        CHECK(tracked::live == 14);
        copy = v;
        CHECK(tracked::live == 8);
        // Growth copies this type (its move may throw): the third copy fails,
        // and v is as before, with no element leaked or destroyed twice.
        while (v.size() < v.capacity()) v.emplace_back(100);
        const std::vector<tracked> before(v.begin(), v.end());
        const int live_before = tracked::live;
        tracked::copies_left = 2;
        CHECK_THROWS_AS(v.emplace_back(7), std::runtime_error);
        tracked::copies_left = 1 << 30;
        CHECK(tracked::live == live_before);
        CHECK(std::vector<tracked>(v.begin(), v.end()) == before);
        tracked::copies_left = 0;
        CHECK_THROWS_AS(v.reserve(v.capacity() + 1), std::runtime_error);
        tracked::copies_left = 1 << 30;
        CHECK(tracked::live == live_before);
        numgap::small_vector<tracked, 3> failed_copy;
        tracked::copies_left = 1;
        CHECK_THROWS_AS(failed_copy = v, std::runtime_error);
        tracked::copies_left = 1 << 30;
        CHECK(failed_copy.size() == 1); // basic guarantee: what was copied stays, valid
    }
    CHECK(tracked::live == 0);
}

TEST_CASE("small_vector::append_generated builds each element where it lies and counts them once") {
    using small_vector_test::tracked;
    tracked::live = 0;
    tracked::copies_left = 1 << 30;
    {
        numgap::small_vector<tracked, 4> v;
        v.emplace_back(-1);
        tracked::moves = 0;
        v.append_generated(3, [](std::size_t i) { return tracked(int(i) * 10); });
        CHECK(tracked::moves == 0); // built in place: no temporary moved in
        CHECK(tracked::live == 4);
        REQUIRE(v.size() == 4);
        CHECK(v.capacity() == 4);
        CHECK(v[0].value == -1);
        CHECK(v[3].value == 20);
        v.append_generated(0, [](std::size_t) -> tracked { throw std::runtime_error("not called"); });
        CHECK(v.size() == 4);
        // Past the capacity: a block at least twice as large, the new
        // elements built in it (the old ones copied: tracked's move may throw).
        const tracked* inside = v.data();
        v.append_generated(1, [](std::size_t) { return tracked(100); });
        CHECK(v.data() != inside);
        CHECK(v.capacity() == 8);
        v.append_generated(5, [](std::size_t i) { return tracked(101 + int(i)); });
        REQUIRE(v.size() == 10);
        CHECK(v.capacity() == 16);
        CHECK(tracked::moves == 0);
        CHECK(tracked::live == 10);
        for (int i = 0; i < 6; ++i) CHECK(v[std::size_t(4 + i)].value == 100 + i);
        CHECK(v[1].value == 0);
        // make may read the elements, also while the vector grows.
        const tracked& first = v[0];
        v.append_generated(7, [&](std::size_t i) { return tracked(first.value + int(i)); });
        REQUIRE(v.size() == 17);
        CHECK(v.capacity() == 32);
        CHECK(v[10].value == -1);
        CHECK(v[16].value == 5);
        // A make that throws, in place and while growing: what it had built
        // is destroyed and the vector is as before, block and capacity too.
        const std::vector<tracked> before(v.begin(), v.end());
        const tracked* data_before = v.data();
        const std::size_t capacity_before = v.capacity();
        const int live_before = tracked::live;
        for (const std::size_t count : {std::size_t(5), capacity_before}) {
            CAPTURE(count);
            int calls = 0;
            CHECK_THROWS_AS(v.append_generated(count,
                                               [&](std::size_t i) {
                                                   ++calls;
                                                   if (i == 3) throw std::runtime_error("make refused");
                                                   return tracked(int(i));
                                               }),
                            std::runtime_error);
            CHECK(calls == 4);
            CHECK(tracked::live == live_before);
            CHECK(v.data() == data_before);
            CHECK(v.capacity() == capacity_before);
            CHECK(std::vector<tracked>(v.begin(), v.end()) == before);
        }
        // Counts past max_size, including one that would wrap size + count.
        for (const std::size_t count : {v.max_size(), std::numeric_limits<std::size_t>::max()})
            CHECK_THROWS_AS(v.append_generated(count, [](std::size_t) { return tracked(0); }), std::length_error);
        CHECK(v.size() == 17);
    }
    CHECK(tracked::live == 0);
    numgap::small_vector<std::string, 2> texts{"a"};
    texts.append_generated(3, [](std::size_t i) { return std::string(30, char('b' + i)); });
    CHECK(small_vector_test::as_std(texts) ==
          std::vector<std::string>{"a", std::string(30, 'b'), std::string(30, 'c'), std::string(30, 'd')});
}

TEST_CASE("small_vector matches std::vector over random operations") {
    std::mt19937 rng(7);
    numgap::small_vector<std::string, 4> v;
    std::vector<std::string> model;
    auto text = [&](std::size_t i) { return std::string(rng() % 2 ? 3 : 40, char('a' + i % 26)) + std::to_string(i); };
    for (std::size_t step = 0; step < 4000; ++step) {
        switch (rng() % 8) {
        case 0:
        case 1:
        case 2: {
            const std::string value = text(step);
            v.push_back(value);
            model.push_back(value);
            break;
        }
        case 3:
            if (!model.empty()) {
                v.pop_back();
                model.pop_back();
            }
            break;
        case 4: {
            const std::size_t size = rng() % 12;
            v.resize(size);
            model.resize(size);
            break;
        }
        case 5: {
            numgap::small_vector<std::string, 4> other(v);
            v = std::move(other);
            break;
        }
        case 6:
            if (rng() % 8 == 0) {
                v.clear();
                model.clear();
            } else {
                std::vector<std::string> added(rng() % 6);
                for (std::size_t i = 0; i < added.size(); ++i) added[i] = text(step + i);
                v.append_generated(added.size(), [&](std::size_t i) { return added[i]; });
                model.insert(model.end(), added.begin(), added.end());
            }
            break;
        default: {
            const std::size_t wanted = rng() % 16;
            v.reserve(wanted);
            CHECK(v.capacity() >= wanted);
            break;
        }
        }
        REQUIRE(small_vector_test::as_std(v) == model);
    }
}
} // TEST_SUITE("core")
