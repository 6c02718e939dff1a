#pragma once
// Test support for tests/cli: runs the numgap binary named by NUMGAP_CLI
// (CTest sets it) in a scratch directory and captures its exit status,
// stdout and stderr; REQUIRE_CLI() skips a case visibly without it.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

namespace numgap_cli_test {
namespace fs = std::filesystem;

struct cli_result {
    int status = -1;
    std::string out, err;
};

inline const char* cli_path() { return std::getenv("NUMGAP_CLI"); }

inline std::string slurp(const fs::path& path) {
    std::ifstream file(path, std::ios::binary);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

inline std::string quote(const std::string& text) {
    std::string quoted = "'";
    for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

// A fresh scratch directory per test case.
inline fs::path scratch(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("numgap_cli_test_" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

// `shell_prefix` runs first in the same subshell (e.g. "ulimit -f 1; ") and
// affects the CLI only.
inline cli_result run_cli(const std::vector<std::string>& args, const fs::path& work,
                          const std::string& shell_prefix = "") {
    std::string command = shell_prefix + "exec " + quote(cli_path());
    for (const std::string& arg : args) command += " " + quote(arg);
    command += " >" + quote((work / "stdout.txt").string()) + " 2>" + quote((work / "stderr.txt").string());
    const int raw = std::system(("(" + command + ")").c_str());
    cli_result result;
    result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    result.out = slurp(work / "stdout.txt");
    result.err = slurp(work / "stderr.txt");
    return result;
}

} // namespace numgap_cli_test

#define REQUIRE_CLI()                                                                        \
    if (!cli_path()) {                                                                       \
        MESSAGE("SKIPPED: set NUMGAP_CLI to the numgap binary to run the CLI tests");        \
        return;                                                                              \
    }
