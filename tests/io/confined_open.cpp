// open_confined's refusals are io errors naming the entry asked for, and
// still say which refusal happened (run_directory words its message by it).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <numgap/io/confined_open.hpp>

#include "temp_directory.hpp"

TEST_SUITE("io") {
TEST_CASE("open_confined: a path outside the run is an io error naming the entry") {
    numgap_test::temp_directory scratch;
    scratch.write("run/inside.npy", "x");
    scratch.write("outside.npy", "x");
    std::vector<numgap::io::confined_root> roots;
    roots.push_back(numgap::io::confined_root::open(scratch / "run"));
    CHECK(numgap::io::open_confined(roots, "inside.npy", numgap::io::confined_target::file).valid());
    try {
        (void)numgap::io::open_confined(roots, "../outside.npy", numgap::io::confined_target::file);
        FAIL("a path outside the run was opened");
    } catch (const numgap::io::confined_open_error& failure) {
        CHECK(failure.reason_kind() == numgap::io::confined_open_error::kind::outside);
        CHECK(std::string(failure.what()).find("outside the run directory") != std::string::npos);
        // confined_open_error::kind (the refusal) hides error::kind(); the base answers.
        const numgap::error& as_error = failure;
        CHECK(as_error.kind() == numgap::error_kind::io);
        CHECK(failure.where().file == "../outside.npy");
    }
    const auto missing = numgap_test::caught_error(
        [&] { (void)numgap::io::open_confined(roots, "absent.npy", numgap::io::confined_target::file); });
    REQUIRE(missing.has_value());
    CHECK(missing->kind() == numgap::error_kind::io);
    CHECK(missing->where().file == "absent.npy");
}
} // TEST_SUITE("io")
