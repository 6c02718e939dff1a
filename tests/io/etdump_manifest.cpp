// Pins down io/etdump_manifest.hpp: a small JSON file naming an ETDump and its
// debug buffer is a run, detected by content (not a Polygraphy JSON that
// mentions "etdump", not a large JSON); paths relative to the manifest and
// confined to its folder ("../", absolute and linked escapes refused, missing
// files named); strict members; #run=N; the debug buffer from the manifest or
// the policy, not both.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/io/etdump_manifest.hpp>
#include <numgap/io/open_run_source.hpp>
#include <numgap/io/run_directory.hpp>

#include "etdump_builder.hpp"
#include "polygraphy_builder.hpp"
#include "temp_directory.hpp"

using numgap::io::run_directory;
using numgap::io::run_source_kind;
using numgap_test::contains;
using numgap_test::error_of;
namespace et = numgap_test::etdump;

namespace {

// dumps/run.etdp (runs "warmup": x = {1, 2}; "measured": x = {3}) and dumps/debug.bin.
void write_dump(const numgap_test::temp_directory& directory) {
    et::debug_buffer buffer;
    const auto first = buffer.add(std::vector<float>{1.0f, 2.0f});
    const auto second = buffer.add(std::vector<float>{3.0f});
    directory.write("dumps/run.etdp",
                    et::file({et::run_data("warmup", {et::debug_event({.name = "x"}, et::tensor_value(et::tensor(et::float32, {2}, first)))}),
                              et::run_data("measured", {et::debug_event({.name = "x"}, et::tensor_value(et::tensor(et::float32, {1}, second)))})}));
    directory.write("dumps/debug.bin", buffer.bytes());
}

// The error `action` throws; one of kind other (which no check expects) when none.
numgap::error error_from(auto&& action) {
    return numgap_test::caught_error(action).value_or(numgap::error(numgap::error_kind::other, "<no numgap::error>"));
}

} // namespace

TEST_SUITE("io") {
TEST_CASE("etdump manifest: one JSON file names the ETDump and its debug buffer, detected by content") {
    numgap_test::temp_directory directory;
    write_dump(directory);
    const auto manifest = directory.write("dumps/target.json", R"({"etdump": "run.etdp", "debug_buffer": "./debug.bin"})");
    CHECK(numgap::io::detect_run_source(manifest) == run_source_kind::etdump_manifest);
    CHECK(numgap::io::is_etdump_run(manifest.string() + "#run=1"));

    CHECK(contains(error_of([&] { (void)run_directory::open(manifest); }), "holds 2 runs; choose one by appending #run=N"));
    const run_directory measured = run_directory::open(manifest.string() + "#run=1");
    CHECK(measured.keys() == std::vector<std::string>{"x"});
    const numgap::io::loaded_tensor x = measured.load("x");
    REQUIRE(x.view().size() == 1);
    CHECK(*static_cast<const float*>(x.view().data()) == 3.0f);
    REQUIRE(measured.notes().size() == 2);
    CHECK(contains(measured.notes()[0], "ETDump manifest '" + manifest.string() + "': ETDump 'run.etdp', debug buffer '"));
    CHECK(contains(measured.notes()[1], "read run #run=1 'measured'"));

    // Without "debug_buffer" the policy's is used; both at once is refused.
    const auto bare = directory.write("dumps/bare.json", R"({"etdump": "run.etdp"})");
    numgap::io::read_policy policy;
    policy.debug_buffer = directory / "dumps/debug.bin";
    CHECK(run_directory::open(bare.string() + "#run=0", policy).load("x").view().size() == 2);
    CHECK(contains(error_of([&] { (void)run_directory::open(bare.string() + "#run=0"); }), "--debug-buffer FILE"));
    const numgap::error twice = error_from([&] { (void)run_directory::open(manifest.string() + "#run=0", policy); });
    CHECK(twice.kind() == numgap::error_kind::usage);
    CHECK(contains(twice.what(), "names the debug buffer './debug.bin' and so does the command"));

    // Not manifests: a Polygraphy JSON whose runner is called "etdump"; a JSON of 4 KiB or more.
    const auto polygraphy = directory.write("results.json", numgap_test::run_results({{"etdump", {numgap_test::iteration_result({}, "etdump")}}}));
    CHECK(numgap::io::detect_run_source(polygraphy) == run_source_kind::polygraphy_json);
    const auto padded = directory.write("dumps/padded.json", R"({"etdump": "run.etdp")" + std::string(4096, ' ') + "}");
    CHECK(error_from([&] { (void)numgap::io::detect_run_source(padded); }).kind() == numgap::error_kind::format);
    const auto not_string = directory.write("dumps/number.json", R"({"etdump": 3})");
    CHECK(error_from([&] { (void)numgap::io::detect_run_source(not_string); }).kind() == numgap::error_kind::format);
}

TEST_CASE("etdump manifest: paths stay inside the manifest's folder; missing files and odd members are named") {
    numgap_test::temp_directory directory;
    write_dump(directory);
    directory.write("outside.bin", "x");
    const auto refused = [&](const std::string& name, const std::string& text) {
        const auto manifest = directory.write("dumps/" + name, text);
        return error_from([&] { (void)run_directory::open(manifest.string() + "#run=0"); });
    };
    const numgap::error up = refused("up.json", R"({"etdump": "run.etdp", "debug_buffer": "../outside.bin"})");
    CHECK(up.kind() == numgap::error_kind::io);
    CHECK(contains(up.what(), "up.json': \"debug_buffer\" '../outside.bin': "));
    const std::string absolute = (directory / "outside.bin").string();
    CHECK(contains(refused("absolute.json", R"({"etdump": ")" + absolute + R"("})").what(), "\"etdump\" '" + absolute + "': "));
    std::filesystem::create_symlink(directory / "outside.bin", directory / "dumps/link.bin");
    CHECK(contains(refused("link.json", R"({"etdump": "run.etdp", "debug_buffer": "link.bin"})").what(),
                   "\"debug_buffer\" 'link.bin': "));
    const numgap::error missing = refused("missing.json", R"({"etdump": "gone.etdp", "debug_buffer": "debug.bin"})");
    CHECK(missing.kind() == numgap::error_kind::io);
    CHECK(contains(missing.what(), "missing.json': \"etdump\" 'gone.etdp': "));
    // Allowed roots extend the folder, as for run directories.
    numgap::io::read_policy allowed;
    allowed.allowed_roots.push_back(directory.path());
    const auto up_allowed = directory.write("dumps/up_allowed.json", R"({"etdump": "run.etdp", "debug_buffer": "../dumps/debug.bin"})");
    CHECK(run_directory::open(up_allowed.string() + "#run=0", allowed).load("x").view().size() == 2);

    const auto schema = [](const std::string& text) {
        return error_of([&] { (void)numgap::io::parse_etdump_manifest(text, "m.json"); });
    };
    CHECK(contains(schema(R"({"etdump": "a", "debug_bufer": "b"})"), "m.json' line 1:32: unknown member \"debug_bufer\""));
    CHECK(contains(schema(R"({"etdump": ""})"), "\"etdump\" must be a non-empty path"));
    CHECK(contains(schema(R"({"etdump": "a", "debug_buffer": 1})"), "\"debug_buffer\" must be a non-empty path"));
    CHECK(contains(schema(R"({"debug_buffer": "b"})"), "needs \"etdump\""));
    CHECK(contains(schema("[]"), "a manifest must be a JSON object"));
    CHECK(contains(schema("{"), "m.json"));
}
}
