// Pins down io/open_run_source.hpp: what a run path is comes from its content
// (an .npz renamed to .bin is still an archive, a safetensors or Polygraphy
// file under any name is read as one), '#' selectors split off only when the
// whole path does not exist, and a file that is none of the kinds is refused
// with a typed error naming it; a file that cannot be read is an io error.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <system_error>

#include <numgap/core/error.hpp>
#include <numgap/io/open_run_source.hpp>

#include "polygraphy_builder.hpp"
#include "safetensors_builder.hpp"
#include "temp_directory.hpp"

using numgap::io::detect_run_source;
using numgap::io::run_source_kind;

TEST_SUITE("io") {
TEST_CASE("open_run_source: the kind of a run comes from its content, not its name") {
    numgap_test::temp_directory dir;
    std::filesystem::copy_file(numgap_test::fixture("npz/stored.npz"), dir / "archive.bin");
    dir.write("weights.dat", numgap_test::safetensors_file({{"x", "F32", "[1]", numgap_test::bytes_of<float>({1.0f})}}));
    dir.write("results.txt", numgap_test::run_results({{"r", {numgap_test::iteration_result({}, "r")}}}));
    dir.write("model.index.json", R"({"weight_map": {}})");
    dir.write("graph.json", R"({"nodes": []})");
    dir.write("empty.npz.txt", "");

    CHECK(detect_run_source(dir.path()) == run_source_kind::directory);
    CHECK(detect_run_source(dir / "archive.bin") == run_source_kind::npz);
    CHECK(detect_run_source(dir / "weights.dat") == run_source_kind::safetensors_file);
    CHECK(detect_run_source(dir / "results.txt") == run_source_kind::polygraphy_json);
    CHECK(detect_run_source(dir / "model.index.json") == run_source_kind::safetensors_index);
    CHECK(numgap::io::open_run_source(dir / "archive.bin").manifest.tensors.size() > 0);

    for (const char* refused : {"graph.json", "empty.npz.txt"}) {
        CAPTURE(refused);
        numgap::error_kind kind = numgap::error_kind::other;
        std::string file;
        try {
            (void)detect_run_source(dir / refused);
        } catch (const numgap::error& failure) {
            kind = failure.kind();
            file = failure.where().file;
        }
        CHECK(kind == numgap::error_kind::format);
        CHECK(file == (dir / refused).string());
    }
    CHECK(numgap_test::contains(numgap_test::error_of([&] { (void)detect_run_source(dir / "absent"); }), "does not exist"));
}

TEST_CASE("open_run_source: a '#' selector is split off only when the whole path does not exist") {
    numgap_test::temp_directory dir;
    dir.write("out.json", "{}");
    dir.write("odd#name.json", "{}");
    const auto split = numgap::io::split_run_selector(dir / "out.json#trt@2");
    CHECK(split.file == dir / "out.json");
    CHECK(split.selector == "trt@2");
    CHECK(numgap::io::split_run_selector(dir / "odd#name.json").selector == std::nullopt);
    CHECK(numgap::io::split_run_selector(dir / "absent.json#trt").selector == std::nullopt);
    CHECK(numgap::io::split_run_selector(dir.path()).selector == std::nullopt);
}

TEST_CASE("open_run_source: a run file that cannot be read is an io error naming it, not 'no run'") {
    // /proc/self/mem is a regular file that opens (as root too, as in CI) but
    // whose offset 0 cannot be read (EIO): the read while sniffing fails.
    const std::filesystem::path unreadable = "/proc/self/mem";
    std::error_code failure;
    if (!std::filesystem::is_regular_file(unreadable, failure)) {
        MESSAGE("skipped: no /proc/self/mem here");
        return;
    }
    numgap::error_kind kind = numgap::error_kind::other;
    std::string message, file;
    try {
        (void)detect_run_source(unreadable);
    } catch (const numgap::error& caught) {
        kind = caught.kind();
        message = caught.what();
        file = caught.where().file;
    }
    CHECK(kind == numgap::error_kind::io);
    CHECK(file == unreadable.string());
    CHECK(numgap_test::contains(message, "cannot read run '/proc/self/mem' to tell what it is: "));
    CHECK(!numgap::io::is_etdump_run(unreadable)); // never throws
}
}
