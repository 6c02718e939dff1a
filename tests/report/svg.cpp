// Pins down SVG rendering: a missing Graphviz program gives a clear error
// naming it, a failing dot run quotes its diagnostics, the time limit stops a
// hung renderer, and (only where graphviz is installed) a real SVG is produced.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <numgap/core/error.hpp>
#include <numgap/report/analyze_report.hpp>
#include <numgap/report/dot.hpp>
#include <numgap/report/svg.hpp>

#include "sample_report.hpp"

namespace {
std::filesystem::path scratch(const std::string& name) {
    return std::filesystem::temp_directory_path() / ("numgap_svg_test_" + name);
}
} // namespace

// posix_spawnp reports a missing program as ENOENT with glibc; where it
// cannot (other libcs, user-mode emulators), the child exits 127. Both
// messages say the program is not installed.
TEST_CASE("svg: a Graphviz program that is not installed is reported as such") {
    const auto dot_file = scratch("a.dot");
    std::ofstream(dot_file) << "digraph { a -> b }\n";
    numgap::svg_options options;
    options.dot_program = "numgap-no-such-dot-program";
    CHECK_THROWS_WITH_AS(numgap::render_svg(dot_file, scratch("a.svg"), options),
                         doctest::Contains("'numgap-no-such-dot-program' is not installed"),
                         numgap::error);
    std::filesystem::remove(dot_file);
}

TEST_CASE("svg: a renderer that exits with an error has its message quoted") {
    const auto dot_file = scratch("b.dot");
    std::ofstream(dot_file) << "x\n";
    numgap::svg_options options;
    options.dot_program = "false"; // exits 1 with no output; proves the exit status is checked
    CHECK_THROWS_WITH_AS(numgap::render_svg(dot_file, scratch("b.svg"), options),
                         doctest::Contains("with 'false' failed"), numgap::error);
    CHECK_FALSE(std::filesystem::exists(scratch("b.svg.dot-stderr.txt")));
    std::filesystem::remove(dot_file);
}

TEST_CASE("svg: a renderer that hangs is killed after the time limit") {
    // A shell script standing in for a dot that never finishes.
    const auto fake = scratch("hang.sh");
    std::ofstream(fake) << "#!/bin/sh\nexec sleep 30\n";
    std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
    const auto dot_file = scratch("c.dot");
    std::ofstream(dot_file) << "digraph {}\n";
    numgap::svg_options options;
    options.dot_program = fake.string();
    options.time_limit = std::chrono::milliseconds(200);
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH_AS(numgap::render_svg(dot_file, scratch("c.svg"), options),
                         doctest::Contains("did not finish within 0.2"), numgap::error);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    std::filesystem::remove(fake);
    std::filesystem::remove(dot_file);
}

TEST_CASE("svg: Graphviz renders the report's DOT (skipped visibly without graphviz)") {
    if (std::system("dot -V > /dev/null 2>&1") != 0) {
        MESSAGE("SKIPPED: Graphviz 'dot' is not installed; the real-rendering check did not run");
        return;
    }
    auto report = numgap::test::make_report({{"conv1", numgap::group_status::fail}});
    numgap::analyze_report(report);
    const auto dot_file = scratch("d.dot");
    const auto svg_file = scratch("d.svg");
    numgap::write_dot(report, dot_file);
    numgap::render_svg(dot_file, svg_file);
    std::ifstream svg(svg_file);
    const std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
    CHECK(text.find("<svg") != std::string::npos);
    CHECK(text.find("conv1") != std::string::npos);
    std::filesystem::remove(dot_file);
    std::filesystem::remove(svg_file);
}
