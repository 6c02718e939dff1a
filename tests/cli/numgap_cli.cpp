// Pins down the numgap command-line tool end to end: exit status 0/1/2, the
// messages for every kind of unusable input (each names the file, key or
// node), partial dumps reported as missing, the written reports, and the demo
// pinpointing its injected fault. Runs the built binary named by the
// NUMGAP_CLI environment variable (CTest sets it); without it the cases are
// skipped with a visible message.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <numgap/core/error.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/run_directory.hpp>
#include <numgap/metric/metric_set.hpp>

#include "../core/caught_error.hpp"
#include "../io/safetensors_builder.hpp"
#include "cli_support.hpp"

namespace {
using namespace numgap_cli_test;

void write_file(const fs::path& path, const std::string& bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
}

void write_floats(const fs::path& path, const std::vector<float>& values) {
    fs::create_directories(path.parent_path());
    const std::vector<std::int64_t> shape = {std::int64_t(values.size())};
    numgap::io::write_npy(path, values.data(), shape);
}

// A valid .npy header for `descr` and `shape_text`, padded like NumPy's.
std::string npy_header(const std::string& descr, const std::string& shape_text) {
    std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_text + ", }";
    while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
    dict += '\n';
    std::string header = "\x93NUMPY";
    header += '\x01';
    header += '\x00';
    header += char(dict.size() & 0xff);
    header += char(dict.size() >> 8);
    return header + dict;
}

// reference/ and target/ with three chained tensors a -> b -> c; the target's
// `faulty` tensor (if any) is scaled so its cosine stays 1 but its error is large.
void write_pair(const fs::path& dir, const std::string& faulty = "") {
    const std::string graph = R"({"nodes": [{"name": "a"}, {"name": "b", "inputs": ["a"]},
                                            {"name": "c", "inputs": ["b"]}]})";
    for (const char* side : {"reference", "target"}) {
        write_file(dir / side / "graph.json", graph);
        for (const char* key : {"a", "b", "c"}) {
            std::vector<float> values = {1.0f, -2.0f, 3.0f, 0.5f, 4.0f, -1.0f};
            if (std::string(side) == "target" && faulty == key)
                for (float& v : values) v = -v;
            write_floats(dir / side / (std::string(key) + ".npy"), values);
        }
    }
}
} // namespace

TEST_SUITE("cli") {
TEST_CASE("cli: identical runs pass with exit 0; a fault gives exit 1 and names the first divergence") {
    REQUIRE_CLI();
    const fs::path dir = scratch("pass_fail");
    write_pair(dir);
    cli_result result = run_cli({"compare", (dir / "reference").string(), (dir / "target").string()}, dir);
    CHECK(result.status == 0);
    CHECK(result.out.find("3 groups: 3 passed, 0 failed") != std::string::npos);
    CHECK(result.out.find("first divergence: none") != std::string::npos);

    write_pair(dir, "b");
    result = run_cli({"compare", (dir / "reference").string(), (dir / "target").string()}, dir);
    CHECK(result.status == 1);
    CHECK(result.out.find("first divergence: b") != std::string::npos);
    CHECK(result.out.find("error origins: b") != std::string::npos);
    CHECK(result.err.empty()); // stderr is not a terminal: no progress output
}

TEST_CASE("cli: a tensor that was not dumped is 'missing', not an error") {
    REQUIRE_CLI();
    const fs::path dir = scratch("missing");
    write_pair(dir);
    fs::remove(dir / "target" / "b.npy");
    const cli_result result = run_cli({"compare", (dir / "reference").string(), (dir / "target").string(),
                                       "--csv", (dir / "r.csv").string()},
                                      dir);
    CHECK(result.status == 0);
    CHECK(result.out.find("1 missing") != std::string::npos);
    CHECK(slurp(dir / "r.csv").find(",missing,") != std::string::npos);
    CHECK(slurp(dir / "r.csv").find("target tensor 'b' was not dumped") != std::string::npos);
}

TEST_CASE("cli: a run that compared less than half of the dumped reference nodes warns and exits 1") {
    // Mismatched vocabularies once gave "1 groups: 1 passed" and exit 0 after
    // comparing 1 of 70 nodes; now the gap is on stderr and in the table.
    REQUIRE_CLI();
    const fs::path dir = scratch("mostly_unmatched");
    write_pair(dir);
    const auto write_target = [&](const std::string& name, std::vector<std::string> keys) {
        std::string graph = R"({"nodes": [)";
        for (std::size_t i = 0; i < keys.size(); ++i)
            graph += (i ? ", " : "") + std::string(R"({"name": ")") + keys[i] + "\"" +
                     (i ? R"(, "inputs": [")" + keys[i - 1] + "\"]" : std::string()) + "}";
        write_file(dir / name / "graph.json", graph + "]}");
        for (const std::string& key : keys)
            write_floats(dir / name / (key + ".npy"), {1.0f, -2.0f, 3.0f, 0.5f, 4.0f, -1.0f});
    };
    write_target("renamed", {"a", "y", "z"}); // only a matches: 1 of 3 compared
    cli_result result = run_cli(
        {"compare", (dir / "reference").string(), (dir / "renamed").string(), "--match", "name", "--csv",
         (dir / "r.csv").string()},
        dir);
    CHECK(result.status == 1);
    // An unmatched row has no pairing: its confidence cell is empty, a matched row's is 1;
    // neither is an error row, so the six error_* cells are empty.
    CHECK(slurp(dir / "r.csv").find(",unmatched,0,no target node matches this reference node,,0,,none,0,,,,,,\r\n") !=
          std::string::npos);
    CHECK(slurp(dir / "r.csv").find(",pass,0,,1,0,,none,0,,,,,,\r\n") != std::string::npos);
    CHECK_MESSAGE(result.out.find("1 groups: 1 passed, 0 failed") != std::string::npos, result.out);
    CHECK_MESSAGE(result.err.find("numgap: warning: only 1 of 3 reference nodes with dumped tensors were "
                                  "compared; 2 are unmatched") != std::string::npos,
                  result.err);
    CHECK(result.err.find("--name-rule") != std::string::npos);
    CHECK(result.out.find("warning: only 1 of 3") != std::string::npos);
    CHECK(result.out.find("unmatched reference nodes (not compared): b, c\n") != std::string::npos);

    write_target("mostly", {"a", "b", "z"}); // 2 of 3 compared: a pass
    result = run_cli({"compare", (dir / "reference").string(), (dir / "mostly").string(), "--match", "name"}, dir);
    CHECK_MESSAGE(result.status == 0, result.err);
    CHECK(result.err.empty());
    CHECK(result.out.find("warning:") == std::string::npos);
    CHECK(result.out.find("unmatched reference nodes (not compared): c\n") != std::string::npos);
}

TEST_CASE("cli: nothing compared (every row unmatched or missing) exits 1 with a message saying why") {
    // A CI gate must not pass vacuously: failed == 0 alone used to give exit 0.
    REQUIRE_CLI();
    const fs::path dir = scratch("nothing_compared");
    write_pair(dir);
    // Target keys that never match the reference's: every row is unmatched.
    for (const char* key : {"x", "y", "z"}) write_floats(dir / "renamed" / (std::string(key) + ".npy"), {1, 2, 3});
    cli_result result = run_cli(
        {"compare", (dir / "reference").string(), (dir / "renamed").string(), "--match", "name"}, dir);
    CHECK(result.status == 1);
    CHECK_MESSAGE(result.err.find("nothing was compared") != std::string::npos, result.err);
    CHECK_MESSAGE(result.err.find("3 unmatched reference nodes, 3 unmatched target nodes, 0 missing groups") !=
                      std::string::npos,
                  result.err);

    // A target whose graph lists every node but dumped none: every group is missing.
    write_file(dir / "empty_dump" / "graph.json", slurp(dir / "target" / "graph.json"));
    result = run_cli({"compare", (dir / "reference").string(), (dir / "empty_dump").string()}, dir);
    CHECK(result.status == 1);
    CHECK_MESSAGE(result.err.find("nothing was compared") != std::string::npos, result.err);
    CHECK_MESSAGE(result.err.find("3 missing groups") != std::string::npos, result.err);

    // One compared, passing group among missing ones still passes (exit 0, no message).
    write_floats(dir / "empty_dump" / "b.npy", {1.0f, -2.0f, 3.0f, 0.5f, 4.0f, -1.0f});
    result = run_cli({"compare", (dir / "reference").string(), (dir / "empty_dump").string()}, dir);
    CHECK(result.status == 0);
    CHECK(result.err.find("nothing was compared") == std::string::npos);
}

TEST_CASE("cli: every report file is written") {
    REQUIRE_CLI();
    const fs::path dir = scratch("outputs");
    write_pair(dir, "c");
    const cli_result result =
        run_cli({"compare", (dir / "reference").string(), (dir / "target").string(), "--csv",
                 (dir / "r.csv").string(), "--json", (dir / "r.json").string(), "--dot",
                 (dir / "r.dot").string(), "--model-explorer", (dir / "me.json").string(),
                 "--dump-failing", (dir / "failing").string(), "--threads", "2"},
                dir);
    CHECK(result.status == 1);
    CHECK(slurp(dir / "r.csv").rfind("ref_node,target_node,", 0) == 0);
    CHECK(slurp(dir / "r.json").find("\"first_divergence\":\"c\"") != std::string::npos);
    CHECK(slurp(dir / "r.dot").find("digraph") != std::string::npos);
    CHECK(slurp(dir / "me.json").find("\"results\"") != std::string::npos);
    CHECK(fs::exists(dir / "failing" / "002_c.reference.npy"));
    CHECK(fs::exists(dir / "failing" / "002_c.target.npy"));
}

TEST_CASE("cli: bad arguments exit 2 with the usage text") {
    REQUIRE_CLI();
    const fs::path dir = scratch("usage");
    write_pair(dir);
    const std::string reference = (dir / "reference").string(), target = (dir / "target").string();
    struct bad_case {
        std::vector<std::string> args;
        const char* message;
    };
    const bad_case cases[] = {
        {{}, "missing command"},
        {{"frobnicate"}, "unknown command 'frobnicate'"},
        {{"compare", reference}, "exactly two runs"},
        {{"compare", reference, target, "--bogus"}, "unknown option '--bogus'"},
        {{"compare", reference, target, "--match", "fuzzy"}, "--match must be auto, name, handle or structure"},
        {{"compare", reference, target, "--threads", "many"}, "--threads expects a whole number"},
        {{"compare", reference, target, "--csv"}, "--csv needs a value"},
    };
    for (const bad_case& bad : cases) {
        const cli_result result = run_cli(bad.args, dir);
        CHECK_MESSAGE(result.status == 2, bad.message);
        CHECK_MESSAGE(result.err.find(bad.message) != std::string::npos, result.err);
        CHECK(result.err.find("usage:") != std::string::npos);
    }
}

TEST_CASE("cli: an unknown metric or a malformed rule exits 2 naming it") {
    REQUIRE_CLI();
    const fs::path dir = scratch("metric");
    write_pair(dir);
    const std::string reference = (dir / "reference").string(), target = (dir / "target").string();
    cli_result result = run_cli({"compare", reference, target, "--metric", "nosuchmetric"}, dir);
    CHECK(result.status == 2);
    CHECK(result.err.find("nosuchmetric") != std::string::npos);
    result = run_cli({"compare", reference, target, "--metric", "cosine:=>abc"}, dir);
    CHECK(result.status == 2);
    CHECK(result.err.find("=>abc") != std::string::npos);
    result = run_cli({"compare", reference, target, "--metric", "cosine:>=0.5"}, dir);
    CHECK(result.status == 0);
}

TEST_CASE("cli: unusable input exits 2 with a message naming the file and the reason") {
    REQUIRE_CLI();
    struct bad_input {
        const char* what;
        void (*damage)(const fs::path& target);
        std::vector<std::string> expected; // all must appear in stderr
    };
    const bad_input cases[] = {
        {"a run that does not exist", [](const fs::path& t) { fs::remove_all(t); }, {"target"}},
        {"malformed .npy header",
         [](const fs::path& t) { write_file(t / "b.npy", npy_header("<f4", "(6,") + std::string(24, '\0')); },
         {"b.npy"}},
        {"truncated data",
         [](const fs::path& t) { write_file(t / "b.npy", npy_header("<f4", "(6,)") + std::string(10, '\0')); },
         {"b.npy"}},
        {"unknown dtype",
         [](const fs::path& t) { write_file(t / "b.npy", npy_header("<c8", "(6,)") + std::string(48, '\0')); },
         {"b.npy", "<c8"}},
        {"graph.json syntax error (line and column)",
         [](const fs::path& t) { write_file(t / "graph.json", "{\"nodes\": [\n  {\"name\": \"a\",}\n]}"); },
         {"graph.json:2:"}},
        {"tensors entry naming a file that does not exist",
         [](const fs::path& t) {
             write_file(t / "graph.json", R"({"nodes": [{"name": "a"}, {"name": "b", "inputs": ["a"]},
                 {"name": "c", "inputs": ["b"]}], "tensors": {"b": {"file": "out/b.raw", "dtype": "float32",
                 "shape": [6]}}})");
         },
         {"out/b.raw"}},
        {"raw file whose size disagrees with its shape",
         [](const fs::path& t) {
             write_file(t / "out" / "b.raw", std::string(20, '\0'));
             write_file(t / "graph.json", R"({"nodes": [{"name": "a"}, {"name": "b", "inputs": ["a"]},
                 {"name": "c", "inputs": ["b"]}], "tensors": {"b": {"file": "out/b.raw", "dtype": "float32",
                 "shape": [6]}}})");
         },
         {"out/b.raw"}},
        {"a cycle in graph.json",
         [](const fs::path& t) {
             write_file(t / "graph.json", R"({"nodes": [{"name": "a", "inputs": ["c"]},
                 {"name": "b", "inputs": ["a"]}, {"name": "c", "inputs": ["b"]}]})");
         },
         {"graph.json", "'a'"}},
        {"shapes that disagree between the runs",
         [](const fs::path& t) { write_floats(t / "b.npy", {1, 2, 3}); },
         {"'b'"}},
    };
    for (const bad_input& bad : cases) {
        CAPTURE(bad.what);
        const fs::path dir = scratch("bad_input");
        write_pair(dir);
        bad.damage(dir / "target");
        const cli_result result = run_cli({"compare", (dir / "reference").string(), (dir / "target").string()}, dir);
        CHECK(result.status == 2);
        for (const std::string& expected : bad.expected)
            CHECK_MESSAGE(result.err.find(expected) != std::string::npos, "stderr: " << result.err);
        CHECK(result.err.find("numgap: error: ") != std::string::npos);
    }
}

TEST_CASE("cli: when both runs are unusable the reference's error is the one reported, whatever the threads") {
    // The runs are opened and their graphs built on two threads when allowed;
    // the message must still be the one opening them in turn gives.
    REQUIRE_CLI();
    for (const char* threads : {"1", "2", "0"}) {
        for (int repeat = 0; repeat < 3; ++repeat) {
            CAPTURE(threads);
            const fs::path dir = scratch("both_unusable");
            write_pair(dir);
            write_file(dir / "reference" / "graph.json", "{\"nodes\": [\n  {\"name\": \"a\",}\n]}");
            write_file(dir / "target" / "graph.json", "{\"nodes\": [\n\n  {\"name\": \"a\",}\n]}");
            const cli_result result = run_cli(
                {"compare", (dir / "reference").string(), (dir / "target").string(), "--threads", threads}, dir);
            CHECK(result.status == 2);
            CHECK_MESSAGE(result.err.find("graph.json:2:") != std::string::npos, "stderr: " << result.err);
            CHECK_MESSAGE(result.err.find("graph.json:3:") == std::string::npos, "stderr: " << result.err);
        }
    }
}

TEST_CASE("cli: exit 2 prints the library's message; the library's error carries the kind a program acts on") {
    REQUIRE_CLI();
    const fs::path dir = scratch("typed_errors");
    write_pair(dir);
    const std::string reference = (dir / "reference").string(), target = (dir / "target").string();

    // A graph.json listing a consumer before its producer: a graph error at a line:column of graph.json.
    write_file(dir / "target" / "graph.json", R"({"nodes": [{"name": "a", "inputs": ["c"]},
        {"name": "b", "inputs": ["a"]}, {"name": "c", "inputs": ["b"]}]})");
    const auto graph_failure = numgap_test::caught_error([&] { (void)numgap::io::run_directory::open(target); });
    REQUIRE(graph_failure.has_value());
    CHECK(graph_failure->kind() == numgap::error_kind::graph);
    CHECK(graph_failure->where().file == (dir / "target" / "graph.json").string());
    CHECK(graph_failure->where().item == "a");
    CHECK(graph_failure->where().line == 1);
    cli_result result = run_cli({"compare", reference, target}, dir);
    CHECK(result.status == 2);
    CHECK_MESSAGE(result.err == "numgap: error: " + std::string(graph_failure->what()) + "\n", result.err);

    // An unknown metric name: a usage error naming it.
    write_pair(dir);
    const auto usage_failure = numgap_test::caught_error([] { numgap::metric_set().add_builtin("nosuchmetric"); });
    REQUIRE(usage_failure.has_value());
    CHECK(usage_failure->kind() == numgap::error_kind::usage);
    CHECK(usage_failure->where().item == "nosuchmetric");
    result = run_cli({"compare", reference, target, "--metric", "nosuchmetric"}, dir);
    CHECK(result.status == 2);
    CHECK_MESSAGE(result.err.find(usage_failure->what()) != std::string::npos, result.err);
}

TEST_CASE("cli: the demo pinpoints its injected group-norm fault") {
    REQUIRE_CLI();
    const fs::path dir = scratch("demo");
    const cli_result result = run_cli({"demo", (dir / "runs").string()}, dir);
    CHECK(result.status == 1);
    CHECK(result.out.find("first divergence: gn2 (aten.native_group_norm.default)") != std::string::npos);
    CHECK(result.out.find("error origins: gn2\n") != std::string::npos);
    CHECK(fs::exists(dir / "runs" / "reference" / "graph.json"));
    CHECK(fs::exists(dir / "runs" / "target" / "out" / "_block_conv2_Conv.raw"));
}

TEST_CASE("cli: the committed demo fixture still reads and gives the same answer") {
    REQUIRE_CLI();
#ifdef NUMGAP_TEST_DATA_DIR
    const fs::path fixture = fs::path(NUMGAP_TEST_DATA_DIR) / "cli" / "demo";
#else
    const fs::path fixture = fs::path("tests/data/cli/demo");
#endif
    if (!fs::exists(fixture / "reference")) {
        MESSAGE("SKIPPED: fixture " << fixture.string() << " not found");
        return;
    }
    const fs::path dir = scratch("fixture");
    const cli_result result = run_cli(
        {"compare", (fixture / "reference").string(), (fixture / "target").string(), "--threads", "1"}, dir);
    CHECK(result.status == 1);
    CHECK(result.out.find("first divergence: gn2") != std::string::npos);
    CHECK(result.out.find("error origins: gn2\n") != std::string::npos);
}

TEST_CASE("cli: --svg renders through Graphviz (skipped visibly without it); --help exits 0") {
    REQUIRE_CLI();
    const fs::path dir = scratch("svg");
    cli_result result = run_cli({"--help"}, dir);
    CHECK(result.status == 0);
    CHECK(result.out.find("numgap compare REF TARGET") != std::string::npos);
    CHECK(result.out.find("nothing was compared") != std::string::npos); // the exit rule is stated
    {
        // Every `--metric VALUE` example in the help must work as written (the
        // help once said `snr` for the metric named `snr_db`); the shell's
        // single quotes are removed as a shell would.
        const std::string help = result.out;
        const fs::path runs = scratch("help_examples");
        write_pair(runs);
        std::size_t examples = 0;
        for (std::size_t at = help.find("--metric "); at != std::string::npos; at = help.find("--metric ", at + 1)) {
            const std::size_t start = at + 9;
            std::string value = help.substr(start, help.find_first_of(" \n", start) - start);
            if (value.rfind("NAME", 0) == 0) continue; // the synopsis placeholder
            std::erase(value, '\'');
            CAPTURE(value);
            ++examples;
            const cli_result example = run_cli(
                {"compare", (runs / "reference").string(), (runs / "target").string(), "--metric", value}, runs);
            CHECK_MESSAGE(example.status == 0, example.err);
        }
        CHECK(examples >= 2);
        const cli_result snr = run_cli(
            {"compare", (runs / "reference").string(), (runs / "target").string(), "--metric", "snr_db"}, runs);
        CHECK(snr.status == 0);
        CHECK(snr.out.find("snr_db") != std::string::npos);
    }
    if (std::system("dot -V > /dev/null 2>&1") != 0) {
        MESSAGE("SKIPPED: Graphviz 'dot' is not installed; --svg was not exercised");
        return;
    }
    write_pair(dir, "b");
    result = run_cli({"compare", (dir / "reference").string(), (dir / "target").string(), "--svg",
                      (dir / "graph.svg").string()},
                     dir);
    CHECK(result.status == 1);
    CHECK(slurp(dir / "graph.svg").find("<svg") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "graph.svg.dot")); // the intermediate DOT is removed
}

namespace {
// True when `text` holds nothing a terminal interprets besides LF: no C0
// control, DEL, C1 control (as UTF-8 or as a raw byte) or bidi override.
bool inert_on_terminal(const std::string& text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if ((byte < 0x20 && byte != '\n') || byte == 0x7f) return false;
        if (byte == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9f) return false;
    }
    return text.find("\xe2\x80\xae") == std::string::npos && text.find('\xff') == std::string::npos;
}

// reference/ and target/ whose node names hold ESC sequences, CR, a bidi
// override, an invalid byte and a leading '='; the target's "b" has the wrong
// shape, so the group is an error whose message names the node.
void write_hostile_pair(const fs::path& dir) {
    const std::string hostile = R"(=HYPERLINK(\"x\")\u001b]0;pwned\u0007\r\u202e)";
    const std::string graph = R"({"nodes": [{"name": "a)" + hostile + R"(", "outputs": ["a"]},
        {"name": "-b)" + hostile + R"(", "inputs": ["a"], "outputs": ["b"]}]})";
    for (const char* side : {"reference", "target"}) {
        write_file(dir / side / "graph.json", graph);
        write_floats(dir / side / "a.npy", {1, 2, 3});
        write_floats(dir / side / "b.npy", std::string(side) == "target" ? std::vector<float>{1, 2}
                                                                          : std::vector<float>{1, 2, 3});
    }
}
} // namespace

TEST_CASE("cli: hostile node names reach neither the terminal nor the spreadsheet raw") {
    REQUIRE_CLI();
    const fs::path dir = scratch("hostile_names");
    write_hostile_pair(dir);
    const cli_result result = run_cli({"compare", (dir / "reference").string(), (dir / "target").string(),
                                       "--csv", (dir / "r.csv").string()},
                                      dir);
    CHECK(result.status == 2);
    CHECK_MESSAGE(inert_on_terminal(result.out), result.out);
    CHECK_MESSAGE(inert_on_terminal(result.err), result.err);
    CHECK(result.out.find("-b=HYPERLINK(\"x\")\\x1b]0;pwned\\x07") != std::string::npos); // clipped after
    CHECK(result.err.find("numgap: error: group '-b=HYPERLINK(\"x\")\\x1b]0;pwned") != std::string::npos);
    const std::string csv = slurp(dir / "r.csv");
    CHECK(csv.find("\r\n\"'-b=HYPERLINK(\"\"x\"\")\x1b]0;pwned") != std::string::npos);
    // A file name with controls in an error message is escaped too.
    const cli_result missing = run_cli({"compare", (dir / "no\x1b[2Jsuch").string(), (dir / "target").string()}, dir);
    CHECK(missing.status == 2);
    CHECK(missing.err.find("no\\x1b[2Jsuch") != std::string::npos);
    CHECK(inert_on_terminal(missing.err));
}

namespace {
// Names in `directory` that start with '.': numgap's temporaries.
std::vector<std::string> hidden_files(const fs::path& directory) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(directory))
        if (entry.path().filename().string().front() == '.') names.push_back(entry.path().filename().string());
    return names;
}
} // namespace

TEST_CASE("cli: a report that cannot be written completely is absent, not truncated") {
    REQUIRE_CLI();
    const fs::path dir = scratch("full_disk");
    // 40 chained nodes with long names: every report is well over 1 KiB.
    std::string graph = R"({"nodes": [)";
    for (int n = 0; n < 40; ++n) {
        const std::string name = "layer_" + std::to_string(n) + "_with_a_name_long_enough_to_fill_the_reports";
        graph += (n ? R"(, {"name": ")" : R"({"name": ")") + name + "\"" +
                 (n ? R"(, "inputs": ["layer_)" + std::to_string(n - 1) + R"(_with_a_name_long_enough_to_fill_the_reports"])" : "") + "}";
        for (const char* side : {"reference", "target"})
            write_floats(dir / side / (name + ".npy"), {1, float(n), 3});
    }
    graph += "]}";
    for (const char* side : {"reference", "target"}) write_file(dir / side / "graph.json", graph);
    fs::create_directories(dir / "out");
    // A file-size limit of 512 bytes (SIGXFSZ ignored) fails write() with
    // EFBIG part-way through each report, as a full disk fails it with ENOSPC.
    // The size-limited CLI writes stdout and stderr to files too, so its
    // messages are checked only for the file's name.
    const std::string limit = "ulimit -f 1; trap '' XFSZ; ";
    for (const std::string flag : {"--csv", "--json", "--dot", "--model-explorer"}) {
        CAPTURE(flag);
        const fs::path report = dir / "out" / "report.txt";
        const cli_result result = run_cli({"compare", (dir / "reference").string(), (dir / "target").string(), flag,
                                           report.string(), "--threads", "1"},
                                          dir, limit);
        CHECK(result.status == 2);
        CHECK_MESSAGE(result.err.find("report.txt") != std::string::npos, result.err);
        CHECK_FALSE(fs::exists(report));
        fs::remove(report);
        CHECK(hidden_files(dir / "out").empty());
    }
}

TEST_CASE("cli: --svg never touches X.dot; a crashing Graphviz is named with its signal and the graph kept") {
    REQUIRE_CLI();
    const fs::path dir = scratch("svg_dot");
    write_pair(dir, "b");
    fs::create_directories(dir / "bin");
    const fs::path fake = dir / "bin" / "dot";
    write_file(fake, "#!/bin/sh\nkill -SEGV $$\n");
    fs::permissions(fake, fs::perms::owner_all);
    const std::string crashing_path = "PATH=" + quote((dir / "bin").string()) + ":\"$PATH\"; export PATH; ";
    const std::vector<std::string> compare = {"compare", (dir / "reference").string(), (dir / "target").string(),
                                              "--svg", (dir / "graph.svg").string()};
    cli_result result = run_cli(compare, dir, crashing_path);
    CHECK(result.status == 2);
    CHECK(result.err.find("crashed (signal 11, Segmentation fault)") != std::string::npos);
    CHECK_MESSAGE(result.err.find("the DOT graph was kept as '" + (dir / "graph.svg.dot").string() + "'") !=
                      std::string::npos,
                  result.err);
    CHECK(slurp(dir / "graph.svg.dot").rfind("digraph", 0) == 0);
    CHECK_FALSE(fs::exists(dir / "graph.svg"));
    // Now graph.svg.dot exists: it is neither overwritten nor removed, and the
    // kept graph goes elsewhere.
    write_file(dir / "graph.svg.dot", "the user's own file");
    result = run_cli(compare, dir, crashing_path);
    CHECK(result.status == 2);
    CHECK(slurp(dir / "graph.svg.dot") == "the user's own file");
    CHECK(result.err.find("the DOT graph was kept as '" + (dir / ".graph.svg.dot.numgap-").string()) != std::string::npos);
    for (const std::string& name : hidden_files(dir)) fs::remove(dir / name);
    if (std::system("dot -V > /dev/null 2>&1") != 0) {
        MESSAGE("SKIPPED: Graphviz 'dot' is not installed; --svg with a real Graphviz was not exercised");
        return;
    }
    result = run_cli(compare, dir);
    CHECK(result.status == 1);
    CHECK(slurp(dir / "graph.svg").find("</svg>") != std::string::npos);
    CHECK(slurp(dir / "graph.svg.dot") == "the user's own file");
    CHECK(hidden_files(dir).empty());
}

TEST_CASE("cli: a graph.json with a node named 'input:x' and an unproduced key 'x' compares fine") {
    REQUIRE_CLI();
    const fs::path dir = scratch("input_clash");
    const std::string graph = R"({"nodes": [{"name": "x", "outputs": ["y"]},
        {"name": "input:x", "inputs": ["x"], "outputs": ["z"]}, {"name": "w", "inputs": ["x"], "outputs": ["w"]}]})";
    for (const char* side : {"reference", "target"}) {
        write_file(dir / side / "graph.json", graph);
        for (const char* key : {"x", "y", "z", "w"}) write_floats(dir / side / (std::string(key) + ".npy"), {1, 2, 3});
    }
    const cli_result result = run_cli({"compare", (dir / "reference").string(), (dir / "target").string()}, dir);
    CHECK_MESSAGE(result.status == 0, result.err);
    CHECK(result.out.find("input:x#2") != std::string::npos);
}

TEST_CASE("cli: a run naming a file outside it exits 2 unless --allow-outside-run names that directory") {
    REQUIRE_CLI();
    const fs::path dir = scratch("confined");
    write_pair(dir);
    write_floats(dir / "shared" / "b.npy", {1.0f, -2.0f, 3.0f, 0.5f, 4.0f, -1.0f});
    write_file(dir / "target" / "graph.json", R"({"nodes": [{"name": "a"}, {"name": "b", "inputs": ["a"]},
        {"name": "c", "inputs": ["b"]}], "tensors": {"b": {"file": "../shared/b.npy"}}})");
    fs::remove(dir / "target" / "b.npy");
    const std::vector<std::string> compare = {"compare", (dir / "reference").string(), (dir / "target").string(),
                                              "--dump-failing", (dir / "dump").string()};
    cli_result result = run_cli(compare, dir);
    CHECK(result.status == 2);
    CHECK(result.err.find("tensor 'b': file '../shared/b.npy' is refused") != std::string::npos);
    CHECK(result.err.find("outside the run directory") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "dump"));

    std::vector<std::string> allowed = compare;
    allowed.insert(allowed.end(), {"--allow-outside-run", (dir / "shared").string()});
    result = run_cli(allowed, dir);
    CHECK_MESSAGE(result.status == 0, result.err);
    CHECK(result.out.find("3 groups: 3 passed, 0 failed") != std::string::npos);

    result = run_cli({"compare", (dir / "reference").string(), (dir / "target").string(), "--max-inflated-mib", "0"},
                     dir);
    CHECK(result.status == 2);
    CHECK(result.err.find("--max-inflated-mib expects a whole number of MiB") != std::string::npos);
}

TEST_CASE("cli: a .npy reference against bf16, f16 and float8 safetensors targets (a file, a folder) names the first divergence") {
    REQUIRE_CLI();
    using numgap_test::bytes_of;
    const fs::path dir = scratch("safetensors");
    write_pair(dir);
    // The reference's a, b, c are {1, -2, 3, 0.5, 4, -1}; the targets store a
    // with its first value one unit in the last place above 1 and b negated.
    const auto target = [](const char* type, std::vector<std::uint16_t> a, std::vector<std::uint16_t> b,
                           std::vector<std::uint16_t> c) {
        return numgap_test::safetensors_file({{"a", type, "[6]", bytes_of(a)},
                                              {"b", type, "[6]", bytes_of(b)},
                                              {"c", type, "[6]", bytes_of(c)}});
    };
    write_file(dir / "bf16.st", target("BF16", {0x3F81, 0xC000, 0x4040, 0x3F00, 0x4080, 0xBF80},
                                       {0xBF80, 0x4000, 0xC040, 0xBF00, 0xC080, 0x3F80},
                                       {0x3F80, 0xC000, 0x4040, 0x3F00, 0x4080, 0xBF80}));
    write_file(dir / "f16" / "all.safetensors", target("F16", {0x3C01, 0xC000, 0x4200, 0x3800, 0x4400, 0xBC00},
                                                       {0xBC00, 0x4000, 0xC200, 0xB800, 0xC400, 0x3C00},
                                                       {0x3C00, 0xC000, 0x4200, 0x3800, 0x4400, 0xBC00}));
    // Not a structured binding: CAPTURE captures `run` in a lambda, which clang 14 refuses for bindings.
    for (const auto& target_run : {std::pair{dir / "bf16.st", std::string("0.0078125")},
                                   std::pair{dir / "f16", std::string("0.0009765625")}}) {
        const fs::path& run = target_run.first;
        const std::string& ulp = target_run.second;
        CAPTURE(run);
        const cli_result result = run_cli({"compare", (dir / "reference").string(), run.string(), "--metric",
                                           "max_abs:<0.01", "--json", (dir / "r.json").string()},
                                          dir);
        CHECK_MESSAGE(result.status == 1, result.err);
        CHECK(result.out.find("first divergence: b") != std::string::npos);
        const std::string json = slurp(dir / "r.json");
        CHECK(json.find("\"first_divergence\":\"b\"") != std::string::npos);
        CHECK(json.find("\"max_abs\":{\"value\":" + ulp + ",") != std::string::npos);
        CHECK(json.find("\"max_abs\":{\"value\":8,") != std::string::npos);
    }
    // float8 e4m3fn: 1 + 2^-3 is one unit in the last place above 1.
    write_file(dir / "fp8.safetensors",
               numgap_test::safetensors_file({{"a", "F8_E4M3", "[6]", bytes_of<std::uint8_t>({0x39, 0xc0, 0x44, 0x30, 0x48, 0xb8})},
                                              {"b", "F8_E4M3", "[6]", bytes_of<std::uint8_t>({0xb8, 0x40, 0xc4, 0xb0, 0xc8, 0x38})},
                                              {"c", "F8_E4M3", "[6]", bytes_of<std::uint8_t>({0x38, 0xc0, 0x44, 0x30, 0x48, 0xb8})}}));
    const cli_result fp8 = run_cli({"compare", (dir / "reference").string(), (dir / "fp8.safetensors").string(), "--metric",
                                    "max_abs:<0.2", "--json", (dir / "fp8.json").string()},
                                   dir);
    CHECK_MESSAGE(fp8.status == 1, fp8.err);
    CHECK(fp8.out.find("first divergence: b") != std::string::npos);
    const std::string fp8_json = slurp(dir / "fp8.json");
    CHECK(fp8_json.find("\"max_abs\":{\"value\":0.125,") != std::string::npos);
    CHECK(fp8_json.find("\"max_abs\":{\"value\":8,") != std::string::npos);

    // F6 (6-bit codes packed across bytes) is a dtype numgap does not read;
    // F4 is read since the MX formats (tests/io/safetensors.cpp).
    write_file(dir / "fp6.safetensors", numgap_test::safetensors_file({{"a", "F6_E2M3", "[4]", std::vector<std::byte>(3)},
                                                                       {"b", "F32", "[1]", bytes_of<float>({1})}}));
    const cli_result fp6 = run_cli({"compare", (dir / "reference").string(), (dir / "fp6.safetensors").string()}, dir);
    // Listing the run does not fail on the exotic key: it is that group's error.
    CHECK(fp6.err.find("group 'a': run '" + (dir / "fp6.safetensors").string() +
                       "', tensor 'a': unsupported dtype F6_E2M3 in key 'a'") != std::string::npos);
    CHECK(fp6.out.find("2 groups: 0 passed, 0 failed, 0 missing, 2 errors") != std::string::npos);
}
} // TEST_SUITE("cli")
