// Pins down match_kind: the spelling reports use and the kind implied by the
// sizes of a group's node sets.
#include <doctest/doctest.h>

#include <numgap/match/match_kind.hpp>

TEST_SUITE("match") {
TEST_CASE("match_kind: to string") {
    CHECK(numgap::to_string(numgap::match_kind::one_to_one) == "one_to_one");
    CHECK(numgap::to_string(numgap::match_kind::fused) == "fused");
    CHECK(numgap::to_string(numgap::match_kind::decomposed) == "decomposed");
    CHECK(numgap::to_string(numgap::match_kind::many_to_many) == "many_to_many");
}

TEST_CASE("match_kind: of sizes") {
    CHECK(numgap::kind_of(1, 1) == numgap::match_kind::one_to_one);
    CHECK(numgap::kind_of(3, 1) == numgap::match_kind::fused);
    CHECK(numgap::kind_of(1, 4) == numgap::match_kind::decomposed);
    CHECK(numgap::kind_of(2, 2) == numgap::match_kind::many_to_many);
}
} // TEST_SUITE("match")
