// Pins down io/atomic_file.hpp: a written file is complete or absent, an
// existing one keeps its old content when writing fails (provoked for real
// with RLIMIT_FSIZE in a child process), no temporary is left behind, and
// temporary_file::keep() never replaces a file.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <numgap/io/atomic_file.hpp>

#include "temp_directory.hpp"

namespace {
std::vector<std::string> names_in(const std::filesystem::path& directory) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(directory))
        names.push_back(entry.path().filename().string());
    return names;
}

std::string text_of(const std::filesystem::path& path) {
    const std::vector<std::byte> bytes = numgap_test::read_bytes(path);
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// Runs `action` in a child whose files may not grow past `limit` bytes
// (SIGXFSZ ignored, so write() fails with EFBIG as on a full disk); returns
// the child's exit status.
template <class Action>
int with_file_size_limit(rlim_t limit, Action&& action) {
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        signal(SIGXFSZ, SIG_IGN);
        const rlimit small{limit, limit};
        if (setrlimit(RLIMIT_FSIZE, &small) != 0) _exit(90);
        _exit(action());
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
} // namespace

TEST_SUITE("io") {
TEST_CASE("write_file_atomically: writes the text, replaces an old file whole, leaves no temporary") {
    numgap_test::temp_directory directory;
    const auto path = directory / "report.csv";
    numgap::io::write_file_atomically(path, "first", "CSV report");
    CHECK(text_of(path) == "first");
    numgap::io::write_file_atomically(path, "second, longer", "CSV report");
    CHECK(text_of(path) == "second, longer");
    numgap::io::write_file_atomically(path, "", "CSV report");
    CHECK(text_of(path).empty());
    CHECK(names_in(directory.path()) == std::vector<std::string>{"report.csv"});
    // A name at the file-system limit still leaves room for the temporary's.
    const std::string longest(251, 'n');
    numgap::io::write_file_atomically(directory / (longest + ".csv"), "long", "CSV report");
    CHECK(text_of(directory / (longest + ".csv")) == "long");
}

TEST_CASE("write_file_atomically: a write that fails half-way leaves the old file and no temporary") {
    numgap_test::temp_directory directory;
    const auto path = directory / "report.json";
    numgap::io::write_file_atomically(path, "old report", "JSON report");
    const std::string big(1 << 20, 'x');
    const int status = with_file_size_limit(64 * 1024, [&] {
        const std::string message = numgap_test::error_of(
            [&] { numgap::io::write_file_atomically(path, big, "JSON report"); });
        if (!numgap_test::contains(message, "JSON report '" + path.string() + "'")) return 1;
        if (!numgap_test::contains(message, "too large")) return 2; // EFBIG: "File too large"
        return 0;
    });
    CHECK(status == 0);
    CHECK(text_of(path) == "old report");
    CHECK(names_in(directory.path()) == std::vector<std::string>{"report.json"});
    // And a new file that cannot be written completely is absent.
    const auto fresh = directory / "fresh.json";
    CHECK(with_file_size_limit(64 * 1024, [&] {
              return numgap_test::error_of([&] { numgap::io::write_file_atomically(fresh, big, "JSON report"); }) ==
                             "<no numgap::error>"
                         ? 1
                         : 0;
          }) == 0);
    CHECK_FALSE(std::filesystem::exists(fresh));
    CHECK(names_in(directory.path()) == std::vector<std::string>{"report.json"});
}

TEST_CASE("write_file_atomically: a directory that does not exist is named in the error") {
    const std::string message = numgap_test::error_of(
        [] { numgap::io::write_file_atomically("/nonexistent_dir_numgap/r.csv", "x", "CSV report"); });
    CHECK(numgap_test::contains(message, "cannot write CSV report '/nonexistent_dir_numgap/r.csv'"));
    CHECK(numgap_test::contains(message, "No such file or directory"));
    const auto failure = numgap_test::caught_error(
        [] { numgap::io::write_file_atomically("/nonexistent_dir_numgap/r.csv", "x", "CSV report"); });
    REQUIRE(failure.has_value());
    CHECK(failure->kind() == numgap::error_kind::io);
    CHECK(failure->where().file == "/nonexistent_dir_numgap/r.csv");
}

TEST_CASE("temporary_file: removed unless committed; keep() never replaces an existing file") {
    numgap_test::temp_directory directory;
    const auto target = directory / "graph.svg.dot";
    std::filesystem::path where;
    {
        numgap::io::temporary_file temporary(target, "DOT graph");
        where = temporary.path();
        CHECK(where.parent_path() == directory.path());
        CHECK(std::filesystem::exists(where));
    }
    CHECK_FALSE(std::filesystem::exists(where));
    {
        numgap::io::temporary_file temporary(target, "DOT graph");
        numgap::io::write_file_atomically(temporary.path(), "digraph {}", "DOT graph");
        CHECK(temporary.keep() == target); // no file had the name: it takes it
    }
    CHECK(text_of(target) == "digraph {}");
    {
        numgap::io::temporary_file temporary(target, "DOT graph");
        numgap::io::write_file_atomically(temporary.path(), "new", "DOT graph");
        where = temporary.keep();
        CHECK(where != target); // the user's file is left alone
    }
    CHECK(text_of(target) == "digraph {}");
    CHECK(text_of(where) == "new");
    // Two temporaries for one target do not collide.
    numgap::io::temporary_file first(target, "DOT graph"), second(target, "DOT graph");
    CHECK(first.path() != second.path());
}
} // TEST_SUITE("io")
