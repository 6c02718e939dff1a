#include <numgap/core/error.hpp>

#include <doctest/doctest.h>

TEST_SUITE("core") {
TEST_CASE("error carries a kind and a location beside its message") {
    const numgap::error failure(numgap::error_kind::format, "run/a.npy: truncated header",
                                numgap::error_location::at_offset("run/a.npy", 10, "conv1"));
    CHECK(std::string(failure.what()) == "run/a.npy: truncated header");
    CHECK(failure.kind() == numgap::error_kind::format);
    CHECK(failure.where().file == "run/a.npy");
    CHECK(failure.where().item == "conv1");
    CHECK(failure.where().has_offset());
    CHECK(failure.where().offset == 10);
    CHECK(failure.where().line == 0);
}

TEST_CASE("an error made from a message alone is of kind other and has no location") {
    const numgap::error failure("my adapter failed");
    CHECK(failure.kind() == numgap::error_kind::other);
    CHECK(failure.where().empty());
    CHECK_FALSE(failure.where().has_offset());
}

TEST_CASE("every error kind has a distinct name") {
    using numgap::error_kind;
    const error_kind kinds[] = {error_kind::io,    error_kind::format, error_kind::schema,
                                error_kind::shape, error_kind::dtype,  error_kind::graph,
                                error_kind::limit, error_kind::usage,  error_kind::other};
    for (std::size_t i = 0; i < std::size(kinds); ++i)
        for (std::size_t j = i + 1; j < std::size(kinds); ++j)
            CHECK(numgap::name_of(kinds[i]) != numgap::name_of(kinds[j]));
    CHECK(numgap::name_of(error_kind::limit) == "limit");
    const auto at_line = numgap::error_location::at_line("graph.json", 3, 14);
    CHECK(at_line.line == 3);
    CHECK(at_line.column == 14);
    CHECK_FALSE(at_line.empty());
}
}
