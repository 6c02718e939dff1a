// dump_failing_pairs' errors: a program can tell them apart by kind and
// location (the writes themselves are exercised by the fuzz target two_runs
// and the CLI tests).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <numgap/compare/dump_failing_pairs.hpp>
#include <numgap/core/error.hpp>
#include <numgap/report/comparison_report.hpp>

#include "../core/caught_error.hpp"
#include "keyed_source.hpp"

namespace {

// A scratch directory removed on scope exit.
struct scratch_directory {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("numgap_dump_test_" + std::to_string(::getpid()));
    scratch_directory() {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~scratch_directory() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
};

} // namespace

TEST_SUITE("compare") {
TEST_CASE("dump_failing_pairs: a directory that cannot be created is an io error naming it") {
    const scratch_directory scratch;
    std::ofstream(scratch.path / "blocker") << "a file, not a directory";
    const std::filesystem::path directory = scratch.path / "blocker" / "dumps";
    numgap_test::keyed_source reference, target;
    const auto failure = numgap_test::caught_error(
        [&] { (void)numgap::dump_failing_pairs(numgap::comparison_report{}, reference, target, directory); });
    REQUIRE(failure.has_value());
    CHECK(std::string(failure->what()).find("cannot create the directory '" + directory.string() + "'") !=
          std::string::npos);
    CHECK(failure->kind() == numgap::error_kind::io);
    CHECK(failure->where().file == directory.string());
}

TEST_CASE("dump_failing_pairs: a failing pair whose tensor the run lost is an io error naming the tensor") {
    const scratch_directory scratch;
    numgap::comparison_report report;
    numgap::group_report failing;
    failing.reference_tensor = "conv1";
    failing.target_tensor = "conv1";
    failing.status = numgap::group_status::fail;
    report.groups.push_back(failing);
    numgap_test::keyed_source reference, target; // hold nothing
    const auto failure =
        numgap_test::caught_error([&] { (void)numgap::dump_failing_pairs(report, reference, target, scratch.path); });
    REQUIRE(failure.has_value());
    CHECK(std::string(failure->what()) == "cannot dump tensor 'conv1': the run no longer has it");
    CHECK(failure->kind() == numgap::error_kind::io);
    CHECK(failure->where().item == "conv1");
}
} // TEST_SUITE("compare")
