// Pins down the tool's SVG rendering (examples/numgap/render_svg.hpp): a missing Graphviz program gives a clear error
// naming it, a failing dot run quotes its diagnostics, the time limit stops a
// hung renderer, and (only where graphviz is installed) a real SVG is produced.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <numgap/core/error.hpp>
#include <numgap/io/json/utf8.hpp>
#include <numgap/report/analyze_report.hpp>
#include <numgap/report/dot.hpp>

#include "../../examples/numgap/render_svg.hpp"
#include "../report/sample_report.hpp"

TEST_SUITE("cli") {

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
    numgap_cli::svg_options options;
    options.dot_program = "numgap-no-such-dot-program";
    CHECK_THROWS_WITH_AS(numgap_cli::render_svg(dot_file, scratch("a.svg"), options),
                         doctest::Contains("'numgap-no-such-dot-program' is not installed"),
                         numgap::error);
    std::filesystem::remove(dot_file);
}

TEST_CASE("svg: a renderer that exits with an error has its message quoted") {
    const auto dot_file = scratch("b.dot");
    std::ofstream(dot_file) << "x\n";
    numgap_cli::svg_options options;
    options.dot_program = "false"; // exits 1 with no output; proves the exit status is checked
    CHECK_THROWS_WITH_AS(numgap_cli::render_svg(dot_file, scratch("b.svg"), options),
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
    numgap_cli::svg_options options;
    options.dot_program = fake.string();
    options.time_limit = std::chrono::milliseconds(200);
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH_AS(numgap_cli::render_svg(dot_file, scratch("c.svg"), options),
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
    numgap_cli::render_svg(dot_file, svg_file);
    std::ifstream svg(svg_file);
    const std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
    CHECK(text.find("<svg") != std::string::npos);
    CHECK(text.find("conv1") != std::string::npos);
    std::filesystem::remove(dot_file);
    std::filesystem::remove(svg_file);
}

namespace {
// The XML 1.0 rules Graphviz's output can break: valid UTF-8, no control
// character but TAB, LF and CR, and every '&' a predefined entity or a
// character reference to a character XML allows. Returns what is wrong, or "".
std::string xml_text_problem(const std::string& text) {
    const auto allowed = [](std::uint32_t c) {
        return c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) ||
               (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);
    };
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t length = numgap::io::detail::utf8_sequence_length(bytes + i, text.size() - i);
        if (length == 0) return "invalid UTF-8 at byte " + std::to_string(i);
        if (length == 1 && !allowed(bytes[i])) return "control byte " + std::to_string(bytes[i]) + " at " + std::to_string(i);
        if (bytes[i] == '&') {
            const std::size_t end = text.find(';', i);
            if (end == std::string::npos) return "unterminated '&' at " + std::to_string(i);
            const std::string entity = text.substr(i + 1, end - i - 1);
            if (entity.size() > 1 && entity[0] == '#') {
                const bool hex = entity[1] == 'x';
                const std::uint32_t c = std::uint32_t(std::stoul(entity.substr(hex ? 2 : 1), nullptr, hex ? 16 : 10));
                if (!allowed(c)) return "reference to a forbidden character: &" + entity + ";";
            } else if (entity != "amp" && entity != "lt" && entity != "gt" && entity != "quot" && entity != "apos") {
                return "unknown entity &" + entity + ";";
            }
        }
        i += length;
    }
    return "";
}
} // namespace

TEST_CASE("svg: names holding every byte, markup and entities still give well-formed XML") {
    if (std::system("dot -V > /dev/null 2>&1") != 0) {
        MESSAGE("SKIPPED: Graphviz 'dot' is not installed; the hostile-name rendering check did not run");
        return;
    }
    auto report = numgap::test::hostile_report();
    numgap::analyze_report(report);
    const auto dot_file = scratch("hostile.dot");
    const auto svg_file = scratch("hostile.svg");
    numgap::write_dot(report, dot_file);
    numgap_cli::render_svg(dot_file, svg_file); // throws if Graphviz rejects the DOT
    std::ifstream svg(svg_file, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
    CHECK(text.find("</svg>") != std::string::npos);
    CHECK_MESSAGE(xml_text_problem(text) == "", xml_text_problem(text));
    CHECK(text.find("\\x1b") != std::string::npos);       // escapes are visible
    CHECK(text.find("&amp;#1;") != std::string::npos);    // the reference stays text
    CHECK(text.find("]]&gt;") != std::string::npos);
    // The checker itself catches what Graphviz produced before labels were escaped.
    CHECK_FALSE(xml_text_problem("<t>x\x01y</t>").empty());
    CHECK_FALSE(xml_text_problem("<t>&#1;</t>").empty());
    CHECK_FALSE(xml_text_problem("<t>\xed\xa0\x80</t>").empty());
    if (std::system("python3 -c 'import xml.etree.ElementTree' > /dev/null 2>&1") == 0) {
        const std::string parse = "python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' '" +
                                  svg_file.string() + "'";
        CHECK(std::system(parse.c_str()) == 0);
    } else {
        MESSAGE("SKIPPED: python3 not found; the SVG was checked only by the built-in XML text check");
    }
    std::filesystem::remove(dot_file);
    std::filesystem::remove(svg_file);
}

TEST_CASE("svg: a renderer that crashes is reported with its signal, and leaves no SVG behind") {
    const auto fake = scratch("crash.sh");
    std::ofstream(fake) << "#!/bin/sh\necho 'half an svg' > \"${3#-o}\"\nkill -SEGV $$\n";
    std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
    const auto dot_file = scratch("e.dot");
    std::ofstream(dot_file) << "digraph {}\n";
    const auto svg_file = scratch("e.svg");
    std::ofstream(svg_file) << "previous svg";
    numgap_cli::svg_options options;
    options.dot_program = fake.string();
    CHECK_THROWS_WITH_AS(numgap_cli::render_svg(dot_file, svg_file, options),
                         doctest::Contains(("crashed (signal 11, Segmentation fault) on '" + dot_file.string() + "'").c_str()),
                         numgap::error);
    std::ifstream svg(svg_file);
    CHECK(std::string((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>()) == "previous svg");
    CHECK(std::filesystem::exists(dot_file)); // only read, never removed
    for (const auto& entry : std::filesystem::directory_iterator(svg_file.parent_path()))
        CHECK_MESSAGE(entry.path().filename().string().find(".e.svg.") != 0, entry.path().string());
    std::filesystem::remove(fake);
    std::filesystem::remove(dot_file);
    std::filesystem::remove(svg_file);
}

} // TEST_SUITE
