#pragma once
// render_svg: runs Graphviz `dot -Tsvg` on a DOT file, with a time limit.
// Part of the command-line tool, not of the library: the library writes DOT
// (report/dot.hpp) and never starts a process, so code that embeds numgap
// gets no <spawn.h>, signals or `environ` from it.
//
// Why a child process with a deadline instead of std::system: Graphviz layout
// is super-linear and a graph of tens of thousands of nodes can run for hours;
// the caller must get a clear error after `time_limit`, not a hung CLI. The
// child is started with posix_spawnp (no shell, so paths need no quoting),
// polled with waitpid(WNOHANG) and killed with SIGKILL on timeout. It writes
// into a temporary file next to `svg_file` that is renamed onto it only when
// dot succeeded (io/atomic_file.hpp), so a failed or stopped run leaves no
// partial SVG and an existing one untouched; its stderr goes to another such
// temporary, read back into the error message when dot fails, then removed.
// The DOT file is only read, never removed or rewritten.
// Complexity: that of Graphviz, bounded by time_limit. Throws: numgap::error
// (kind `io`; `limit` for the time limit; the SVG path as location) when `dot` is not installed (the message says so and suggests --dot), when it
// exits with an error (its first stderr line is quoted), when it crashes (the
// signal is named), when it is killed by the time limit, or when it cannot be
// started. POSIX only; elsewhere it
// throws a numgap::error saying SVG rendering is unsupported.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <numgap/core/error.hpp>
#include <numgap/io/atomic_file.hpp>
#include <numgap/report/format_double.hpp>

#if defined(__unix__) || defined(__APPLE__)
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
extern char** environ;
#endif

namespace numgap_cli {

using numgap::error;
using numgap::error_kind;
using numgap::error_location;

struct svg_options {
    std::string dot_program = "dot"; // looked up in PATH when it has no '/'
    std::chrono::milliseconds time_limit{std::chrono::seconds(60)};
};

inline void render_svg(const std::filesystem::path& dot_file, const std::filesystem::path& svg_file,
                       const svg_options& options = {}) {
#if defined(__unix__) || defined(__APPLE__)
    if (!std::filesystem::exists(dot_file))
        throw error(error_kind::io, "cannot render SVG: DOT file '" + dot_file.string() + "' does not exist",
                    error_location::in_file(dot_file.string()));
    numgap::io::temporary_file svg_temporary(svg_file, "SVG graph");
    numgap::io::temporary_file stderr_temporary(svg_file.string() + ".dot-stderr", "Graphviz messages");
    const std::filesystem::path& stderr_file = stderr_temporary.path();
    const std::string program = options.dot_program;
    std::string output_flag = "-o" + svg_temporary.path().string();
    std::string input = dot_file.string();
    char type_flag[] = "-Tsvg";
    char* argv[] = {const_cast<char*>(program.c_str()), type_flag, output_flag.data(), input.data(),
                    nullptr};

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_file.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t child = -1;
    const int spawn_status = posix_spawnp(&child, program.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    auto read_first_stderr_line = [&] {
        std::ifstream file(stderr_file);
        std::string line;
        std::getline(file, line);
        return line;
    };
    if (spawn_status != 0) {
        if (spawn_status == ENOENT)
            throw error(error_kind::io, "cannot render SVG '" + svg_file.string() + "': the Graphviz program '" +
                        program +
                        "' is not installed or not in PATH; install graphviz, or write the "
                        "graph with --dot and render it elsewhere",
                    error_location::in_file(svg_file.string()));
        throw error(error_kind::io, "cannot render SVG '" + svg_file.string() + "': starting '" + program +
                    "' failed: " + std::strerror(spawn_status),
                    error_location::in_file(svg_file.string()));
    }

    const auto deadline = std::chrono::steady_clock::now() + options.time_limit;
    int wait_status = 0;
    for (auto pause = std::chrono::milliseconds(1);;) {
        const pid_t done = waitpid(child, &wait_status, WNOHANG);
        if (done == child) break;
        if (done < 0 && errno != EINTR) {
            throw error(error_kind::io, "cannot render SVG '" + svg_file.string() + "': waiting for '" + program +
                        "' failed: " + std::strerror(errno),
                    error_location::in_file(svg_file.string()));
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            kill(child, SIGKILL);
            waitpid(child, &wait_status, 0);
            throw error(error_kind::limit, "rendering SVG '" + svg_file.string() + "' with '" + program +
                        "' did not finish within " +
                        numgap::format_double_short(double(options.time_limit.count()) / 1000.0, 4) +
                        " s and was stopped; the graph is probably too large for Graphviz — "
                        "use the DOT file or the Model Explorer overlay instead",
                    error_location::in_file(svg_file.string()));
        }
        std::this_thread::sleep_for(pause);
        if (pause < std::chrono::milliseconds(50)) pause *= 2;
    }
    const std::string diagnostics = read_first_stderr_line();
    if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 127)
        throw error(error_kind::io, "cannot render SVG '" + svg_file.string() + "': the Graphviz program '" +
                    program + "' is not installed or could not be executed; install graphviz, or "
                    "write the graph with --dot and render it elsewhere",
                    error_location::in_file(svg_file.string()));
    if (WIFSIGNALED(wait_status)) {
        const int signal_number = WTERMSIG(wait_status);
        const char* signal_name = strsignal(signal_number);
        throw error(error_kind::io, "rendering SVG '" + svg_file.string() + "': the Graphviz program '" + program +
                    "' crashed (signal " + std::to_string(signal_number) +
                    (signal_name ? std::string(", ") + signal_name : std::string()) + ") on '" +
                    dot_file.string() + "'" +
                    (diagnostics.empty() ? std::string() : " after printing: " + diagnostics),
                    error_location::in_file(svg_file.string()));
    }
    if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0)
        throw error(error_kind::io, "rendering SVG '" + svg_file.string() + "' with '" + program + "' failed (exit status " +
                    std::to_string(WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1) + ")" +
                    (diagnostics.empty() ? std::string() : ": " + diagnostics),
                    error_location::in_file(svg_file.string()));
    svg_temporary.commit();
#else
    (void)dot_file;
    (void)options;
    throw error(error_kind::io, "cannot render SVG '" + svg_file.string() +
                "': running Graphviz is only supported on POSIX systems; write the graph with "
                "--dot and render it with dot -Tsvg",
                    error_location::in_file(svg_file.string()));
#endif
}

} // namespace numgap_cli
