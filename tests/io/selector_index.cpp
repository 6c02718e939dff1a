// Pins down io/selector_index.hpp, the one reader of the decimal numbers in
// run selectors (#run=N, RUNNER@N) and QNN's Result_N folder names: 1 to 9
// ASCII digits, nothing else.
#include <doctest/doctest.h>

#include <numgap/io/qnn_result_folder.hpp>
#include <numgap/io/selector_index.hpp>

using numgap::io::detail::selector_index;

TEST_SUITE("io") {
TEST_CASE("selector index: 1 to 9 decimal digits, nothing else") {
    CHECK(selector_index("0") == std::size_t(0));
    CHECK(selector_index("07") == std::size_t(7));
    CHECK(selector_index("999999999") == std::size_t(999999999));
    for (const char* refused : {"", "1234567890", "-1", "+1", " 1", "1 ", "1e3", "0x1", "1.0", "١"})
        CHECK_MESSAGE(!selector_index(refused), refused);
    CHECK(numgap::io::detail::qnn_result_index("Result_12") == std::size_t(12));
    CHECK(!numgap::io::detail::qnn_result_index("Result_"));
    CHECK(!numgap::io::detail::qnn_result_index("result_1"));
    CHECK(!numgap::io::detail::qnn_result_index("Result_1a"));
}
}
