#pragma once
// The command line of the numgap tool: exit statuses, the usage text, and the
// parsed form of `numgap compare`'s arguments. Parsing checks every flag and
// value up front and throws usage_error (exit status 2, usage printed), so the
// commands only ever see arguments that make sense.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/compare/compare_options.hpp>
#include <numgap/compare/compare_shard.hpp>
#include <numgap/io/read_policy.hpp>

#include "report_outputs.hpp"

namespace numgap_cli {

constexpr int exit_pass = 0;
constexpr int exit_fail = 1;
constexpr int exit_unusable = 2;

inline constexpr std::string_view usage_text =
    "usage:\n"
    "  numgap compare REF TARGET [--metric NAME[:OP VALUE]]... [--match auto|name|handle|structure]\n"
    "                 [--csv FILE] [--json FILE] [--dot FILE] [--svg FILE] [--model-explorer FILE]\n"
    "                 [--dump-failing DIR] [--threads N] [--quiet]\n"
    "                 [--map FILE] [--name-rule RULE]... [--repair on|warn|off]\n"
    "                 [--allow-outside-run DIR]... [--max-inflated-mib N]\n"
    "                 [--overlay FILE | --reference-overlay FILE --target-overlay FILE]\n"
    "                 [--debug-buffer FILE] [--reference-debug-buffer FILE]\n"
    "                 [--qnn-net-json FILE] [--raw-dtype DTYPE] [--raw-layout nhwc|nchw|as-reference]\n"
    "                 [--shard I/N --json PARTIAL]\n"
    "  numgap merge PARTIAL... [--csv FILE] [--json FILE] [--dot FILE] [--svg FILE] [--model-explorer FILE]\n"
    "  numgap demo [DIR]\n"
    "  numgap --help | --version\n"
    "\n"
    "REF and TARGET are run directories (.npy files and/or *.safetensors, optional graph.json),\n"
    "  .npz files, safetensors files, a sharded safetensors *.index.json, or a Polygraphy\n"
    "  --save-outputs JSON (FILE#RUNNER picks a runner, FILE#RUNNER@N its iteration N; without\n"
    "  it the first runner's iteration 0, said on stderr). The kind is read from the content.\n"
    "  An ExecuTorch ETDump is a run too (FILE#run=N picks one of several runs, 0-based):\n"
    "  --debug-buffer FILE            the debug buffer holding the target ETDump's tensors\n"
    "  --reference-debug-buffer FILE  the same for a reference ETDump\n"
    "  or a JSON manifest naming both: {\"etdump\": \"run.etdp\", \"debug_buffer\": \"debug.bin\"}\n"
    "  (paths relative to the manifest, inside its folder).\n"
    "  A qnn-net-run output folder (*.raw files or Result_N folders, no graph.json) is a run\n"
    "  too (DIR#N picks Result_N; default Result_0). Its headerless files take dtype and shape\n"
    "  from an overlay (below), else from the converter's model JSON, else from the matched reference:\n"
    "  --qnn-net-json FILE     the QNN converter's <model>_net.json (dims, data type, NHWC, scale/offset)\n"
    "  --raw-dtype DTYPE       dtype of undescribed .raw files (default float32)\n"
    "  --raw-layout L          nhwc (default): the reference's NCHW shape stored channels-last;\n"
    "                          nchw or as-reference: the reference's own shape\n"
    "Progress (groups and bytes compared, rate, time left) is shown on stderr when it is a\n"
    "  terminal and the comparison takes over a second; --quiet turns it off.\n"
    "Without --metric: cosine, atol and mse with numgap's default thresholds.\n"
    "  --metric cosine:'>=0.999'   a metric with its own pass rule (OP is >=, >, <=, < or ==)\n"
    "  --metric snr_db             a metric with its default rule\n"
    "Matching:\n"
    "  --map FILE          reference -> target node pairs that override every strategy: a JSON\n"
    "                      object {\"ref\": \"tgt\", \"ref2\": [\"t1\", \"t2\"]} or a two-column CSV\n"
    "                      (reference,target; optional header line)\n"
    "  --name-rule RULE    normalise names before name matching (repeatable):\n"
    "                        output-suffix  drop one output-index suffix: QNN '@0', '_output_0',\n"
    "                                       ':0', '.out0', '_out0'\n"
    "                        separators     '/', '.', ':', '-', ' ' and '_' are one separator,\n"
    "                                       runs collapse, leading/trailing ones are dropped\n"
    "                        case           ignore letter case\n"
    "                        common         output-suffix and separators\n"
    "  --repair MODE       when a structurally matched, ambiguous pair fails: 'on' (default)\n"
    "                      compares the candidate whose pairing scores better, pass over fail\n"
    "                      ('repaired by values'; the message says what each showed),\n"
    "                      'warn' keeps the matcher's pick and marks 'repair possible', 'off'\n"
    "                      tries nothing. At most two extra comparisons per candidate.\n"
    "The table's match column: strategy, confidence (when below 1), '?' for an ambiguous\n"
    "pairing; a failing ambiguous pair is 'suspect' (never named as first divergence or\n"
    "error origin) unless it fails against every candidate of its ambiguity class, repaired\n"
    "or not: then the values settled it and it is named.\n"
    "A run may only name files inside its own directory; --allow-outside-run DIR lets its\n"
    "  entries also resolve into DIR (repeatable). --max-inflated-mib N raises the 4096 MiB\n"
    "  limit on one compressed (.npz) tensor.\n"
    "A run that is a file (.npz, safetensors, Polygraphy JSON, ETDump) or a QNN raw folder takes\n"
    "  its graph and tensor metadata (dtype, scale, zero point, axis order; keys are the run's\n"
    "  own keys) from an overlay graph.json:\n"
    "  --reference-overlay FILE  the reference's overlay\n"
    "  --target-overlay FILE     the target's overlay\n"
    "  --overlay FILE            one overlay for every run that takes one (both, when both do;\n"
    "                            stderr says so); not with the two flags above\n"
    "  Without a flag, a file run uses a graph.json next to it; when that one file would serve\n"
    "  both runs, a warning says so (name each side's overlay if it describes only one).\n"
    "Many machines: --shard I/N (0 <= I < N <= 4096) compares shard I of N (the groups split\n"
    "  by their tensors' bytes, the same way on every machine) and writes a partial report to\n"
    "  --json (exit 0 once written, whatever the groups showed); `numgap merge` reads all N\n"
    "  partials and prints, writes and exits exactly as the unsharded compare would. Every\n"
    "  shard must see the same runs and options; merge refuses partials of another\n"
    "  comparison and missing or repeated shards.\n"
    "Exit status: 0 at least one group was compared, every compared group passes and at\n"
    "  least half of the reference nodes with dumped tensors were compared;\n"
    "  1 some group fails, nothing was compared (every row unmatched or missing), or more\n"
    "  than half of the dumped reference nodes are unmatched (a warning on stderr says how\n"
    "  many; pair them with --match, --map or --name-rule);\n"
    "  2 unusable input.\n";

// A usage error: reported with the usage text, exit status 2.
struct usage_error {
    std::string message;
};

struct compare_arguments {
    std::string reference, target;
    std::vector<std::string> metrics; // as typed: NAME or NAME:RULE
    std::string match = "auto";
    report_outputs outputs; // --csv, --json, --dot, --svg, --model-explorer
    std::string dump_failing;
    // --shard I/N: compare shard I (0-based) of N and write a partial report to --json.
    std::optional<numgap::shard_spec> shard;
    std::size_t threads = 0;
    bool quiet = false; // --quiet: no progress display on stderr
    std::string map;
    std::vector<std::string> name_rules;
    numgap::repair_mode repair = numgap::repair_mode::on;
    numgap::io::read_policy reading; // --allow-outside-run, --max-inflated-mib, --qnn-net-json, --raw-*
    std::string reference_debug_buffer, target_debug_buffer; // ETDump runs' --*debug-buffer
    std::optional<std::filesystem::path> overlay; // --overlay: graph.json for every container run
    std::optional<std::filesystem::path> reference_overlay, target_overlay; // --reference-overlay, --target-overlay
};

// Parses the arguments after `compare`.
compare_arguments parse_compare(std::span<char*> args);

struct merge_arguments {
    std::vector<std::string> partials;
    report_outputs outputs;
};

// Parses the arguments after `merge`.
merge_arguments parse_merge(std::span<char*> args);

} // namespace numgap_cli
