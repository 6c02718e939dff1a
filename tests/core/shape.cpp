// Pins down the shape helpers the readers share: Python's tuple spelling and
// a byte count that refuses overflow instead of wrapping.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include <numgap/core/shape.hpp>

TEST_SUITE("core") {

TEST_CASE("shape: text spells shapes as python tuples") {
    CHECK(numgap::detail::shape_text(std::vector<std::int64_t>{}) == "()");
    CHECK(numgap::detail::shape_text(std::vector<std::int64_t>{4}) == "(4,)");
    CHECK(numgap::detail::shape_text(std::vector<std::int64_t>{2, 3, 0}) == "(2, 3, 0)");
}

TEST_CASE("checked storage bytes rounds packed types up and refuses overflow") {
    using numgap::detail::checked_storage_bytes;
    CHECK(checked_storage_bytes(std::vector<std::int64_t>{3, 5}, numgap::dtype::int4) == 8u);
    CHECK(checked_storage_bytes(std::vector<std::int64_t>{2, 5}, numgap::dtype::uint4) == 5u);
    CHECK(checked_storage_bytes(std::vector<std::int64_t>{3, 5}, numgap::dtype::int16) == 30u);
    CHECK(checked_storage_bytes(std::vector<std::int64_t>{0, 5}, numgap::dtype::int4) == 0u);
    const std::int64_t huge = std::int64_t(1) << 62;
    CHECK_FALSE(checked_storage_bytes(std::vector<std::int64_t>{huge, 4}, numgap::dtype::int4));
    CHECK_FALSE(checked_storage_bytes(std::vector<std::int64_t>{-2}, numgap::dtype::uint4));
}

TEST_CASE("checked byte count multiplies and refuses overflow and negatives") {
    using numgap::detail::checked_byte_count;
    CHECK(checked_byte_count(std::vector<std::int64_t>{2, 3}, 4) == 24u);
    CHECK(checked_byte_count(std::vector<std::int64_t>{}, 2) == 2u);
    CHECK(checked_byte_count(std::vector<std::int64_t>{0, 5}, 4) == 0u);
    CHECK_FALSE(checked_byte_count(std::vector<std::int64_t>{-1}, 4));
    const std::int64_t huge = std::int64_t(1) << 40;
    CHECK_FALSE(checked_byte_count(std::vector<std::int64_t>{huge, huge}, 1));
    // A zero dimension makes the count 0, but the product of the others must
    // still fit: strides are built from it.
    CHECK_FALSE(checked_byte_count(std::vector<std::int64_t>{0, huge, huge}, 1));
}

} // TEST_SUITE
