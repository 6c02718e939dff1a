// numgap: the command-line tool. Compare two runs of a neural network and report where the target
// first diverges from the reference.
//
//   numgap compare REF TARGET [--metric NAME[:OP VALUE]]... [--match auto|name|handle|structure]
//                  [--csv F] [--json F] [--dot F] [--svg F] [--model-explorer F]
//                  [--dump-failing DIR] [--threads N] [--quiet]
//                  [--map FILE] [--name-rule RULE]... [--repair on|warn|off]
//                  [--allow-outside-run DIR]... [--max-inflated-mib N] [--overlay FILE]
//                  [--debug-buffer FILE] [--reference-debug-buffer FILE]
//                  [--shard I/N --json PARTIAL]
//   numgap merge PARTIAL... [--csv F] [--json F] [--dot F] [--svg F] [--model-explorer F]
//   numgap demo [DIR]
//
// REF and TARGET are run directories, .npz files or safetensors runs; see the README for the
// format. Exit status: 0 when at least one group was compared, every
// compared group passes and at least half of the reference nodes with dumped
// tensors were compared; 1 when any fails, when nothing was compared (every
// row unmatched or missing: a CI gate must not pass vacuously) or when more
// than half of the dumped reference nodes are unmatched (a "pass" after
// comparing 1 of 70 nodes would mislead; stderr says how many and which
// options pair them); 2 when the
// input is unusable (bad arguments, unreadable or malformed files,
// tensors that cannot be compared); messages name the file, key or node.
// The summary table goes to stdout; progress goes to stderr only when stderr
// is a terminal, --quiet is not given and the comparison takes more than a
// second (progress_display.hpp). NUMGAP_TIMINGS=1 prints each phase's time
// and peak memory on stderr (phase_timings.hpp). Everything
// printed that may hold a name, a path or a message built from them goes
// through numgap::terminal_text, so a hostile run cannot drive the terminal.
//
// One job per file: arguments.* parses the command line, compare_command.*
// runs `compare`, demo_model.* and demo_command.* make and compare the demo's
// runs, render_svg.hpp runs Graphviz (the only process spawning in numgap,
// kept out of the library), and this file dispatches and maps errors to exit
// statuses. merge_command.* runs `merge`; report_outputs.* prints, writes and
// judges a finished report for both compare and merge, so they agree byte for
// byte. With --shard, compare exits 0 once the partial report is written
// (whatever its groups showed: a Slurm afterok dependency must still start
// the merge) and merge's exit status is the unsharded compare's.
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <span>
#include <string>
#include <string_view>

#include <numgap/core/error.hpp>
#include <numgap/core/version.hpp>
#include <numgap/io/truncation_guard.hpp>
#include <numgap/report/terminal_text.hpp>

#include "arguments.hpp"
#include "compare_command.hpp"
#include "demo_command.hpp"
#include "merge_command.hpp"

int main(int argc, char** argv) {
    using namespace numgap_cli;
    const std::span<char*> args(argv, std::size_t(argc));
    // A dump truncated by another process while mapped: an error row naming the file, not SIGBUS.
    (void)numgap::io::install_truncation_guard();
    try {
        if (args.size() < 2) throw usage_error{"missing command"};
        const std::string_view command = args[1];
        if (command == "--help" || command == "-h" || command == "help") {
            std::cout << usage_text;
            return exit_pass;
        }
        if (command == "--version") {
            std::cout << "numgap " << numgap::version_major << "." << numgap::version_minor << "."
                      << numgap::version_patch << "\n";
            return exit_pass;
        }
        if (command == "compare") return run_compare(parse_compare(args.subspan(2)));
        if (command == "merge") return run_merge(parse_merge(args.subspan(2)));
        if (command == "demo") {
            if (args.size() > 3) throw usage_error{"demo takes at most one argument, the output directory"};
            return run_demo(args.size() == 3 ? std::filesystem::path(args[2])
                                             : std::filesystem::path("numgap_demo"));
        }
        throw usage_error{"unknown command '" + std::string(command) + "'"};
    } catch (const usage_error& failure) {
        std::cerr << "numgap: " << numgap::terminal_text(failure.message) << "\n\n" << usage_text;
        return exit_unusable;
    } catch (const numgap::error& failure) {
        std::cerr << "numgap: error: " << numgap::terminal_text(failure.what()) << "\n";
        return exit_unusable;
    } catch (const std::filesystem::filesystem_error& failure) {
        std::cerr << "numgap: error: " << numgap::terminal_text(failure.what()) << "\n";
        return exit_unusable;
    } catch (const std::bad_alloc&) {
        std::cerr << "numgap: error: out of memory\n";
        return exit_unusable;
    } catch (const std::exception& failure) {
        std::cerr << "numgap: error: " << numgap::terminal_text(failure.what()) << "\n";
        return exit_unusable;
    }
}
