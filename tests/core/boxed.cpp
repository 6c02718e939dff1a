// Pins numgap::boxed (core/boxed.hpp): 8 bytes set or not, std::optional's
// reading interface, deep copies, and assignment from a value, an optional
// and std::nullopt.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <numgap/core/boxed.hpp>

TEST_SUITE("core") {
TEST_CASE("boxed: a pointer's size, optional's interface, copies that copy the value") {
    using box = numgap::boxed<std::vector<int>>;
    static_assert(sizeof(box) == sizeof(void*));

    box empty;
    CHECK(!empty.has_value());
    CHECK(!empty);
    CHECK(empty == std::nullopt);
    CHECK(!empty.as_optional());
    CHECK_THROWS_AS((void)empty.value(), std::bad_optional_access);

    box set = std::vector<int>{0, 2, 3, 1};
    REQUIRE(set.has_value());
    CHECK(set->size() == 4);
    CHECK((*set)[3] == 1);
    CHECK(set == std::vector<int>{0, 2, 3, 1});
    CHECK(!(set == std::vector<int>{0, 2, 1, 3}));
    CHECK(!(empty == std::vector<int>{}));
    CHECK(set.as_optional() == std::optional(std::vector<int>{0, 2, 3, 1}));

    box copy = set; // a value: changing the copy leaves the original
    copy->push_back(9);
    CHECK(set->size() == 4);
    CHECK(copy->size() == 5);
    CHECK(!(copy == set));
    copy = set;
    CHECK(copy == set);
    const box& same = copy;
    copy = same; // self-assignment keeps the value
    CHECK(copy == set);

    box moved = std::move(copy);
    CHECK(moved == set);

    moved = std::nullopt;
    CHECK(!moved);
    moved = std::optional<std::vector<int>>{std::vector<int>{7}};
    CHECK(moved == std::vector<int>{7});
    moved = std::optional<std::vector<int>>{};
    CHECK(!moved);
    CHECK(moved.emplace(3, 5) == std::vector<int>{5, 5, 5});
    moved.reset();
    CHECK(moved == empty);
    CHECK(!(moved == set));

    const numgap::boxed<std::string> text = std::string("a key longer than the small-string buffer");
    CHECK(text.value() == "a key longer than the small-string buffer");
}
} // TEST_SUITE("core")
