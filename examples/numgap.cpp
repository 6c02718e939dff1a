// numgap: compare two runs of a neural network and report where the target
// first diverges from the reference.
//
//   numgap compare REF TARGET [--metric NAME[:OP VALUE]]... [--match auto|name|handle|structure]
//                  [--csv F] [--json F] [--dot F] [--svg F] [--model-explorer F]
//                  [--dump-failing DIR] [--threads N]
//                  [--map FILE] [--name-rule RULE]... [--repair on|warn|off]
//                  [--allow-outside-run DIR]... [--max-inflated-mib N] [--overlay FILE]
//                  [--debug-buffer FILE] [--reference-debug-buffer FILE]
//   numgap demo [DIR]
//
// REF and TARGET are run directories, .npz files, safetensors runs, Polygraphy JSON
// files (FILE#RUNNER@N) or ExecuTorch ETDumps (FILE#run=N, with --debug-buffer /
// --reference-debug-buffer); see the README for the formats.
// Exit status: 0 when at least one group was compared, every
// compared group passes and at least half of the reference nodes with dumped
// tensors were compared; 1 when any fails, when nothing was compared (every
// row unmatched or missing: a CI gate must not pass vacuously) or when more
// than half of the dumped reference nodes are unmatched (a "pass" after
// comparing 1 of 70 nodes would mislead; stderr says how many and which
// options pair them); 2 when the
// input is unusable (bad arguments, unreadable or malformed files,
// tensors that cannot be compared); messages name the file, key or node.
// The summary table goes to stdout; progress goes to stderr only when stderr
// is a terminal and the comparison takes more than a second. Everything
// printed that may hold a name, a path or a message built from them goes
// through numgap::terminal_text, so a hostile run cannot drive the terminal.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <numgap/compare.hpp>
#include <numgap/core.hpp>
#include <numgap/graph.hpp>
#include <numgap/io.hpp>
#include <numgap/match.hpp>
#include <numgap/metric.hpp>
#include <numgap/report.hpp>

namespace {

constexpr int exit_pass = 0;
constexpr int exit_fail = 1;
constexpr int exit_unusable = 2;

constexpr std::string_view usage_text =
    "usage:\n"
    "  numgap compare REF TARGET [--metric NAME[:OP VALUE]]... [--match auto|name|handle|structure]\n"
    "                 [--csv FILE] [--json FILE] [--dot FILE] [--svg FILE] [--model-explorer FILE]\n"
    "                 [--dump-failing DIR] [--threads N]\n"
    "                 [--map FILE] [--name-rule RULE]... [--repair on|warn|off]\n"
    "                 [--allow-outside-run DIR]... [--max-inflated-mib N] [--overlay FILE]\n"
    "                 [--debug-buffer FILE] [--reference-debug-buffer FILE]\n"
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
    "A run that is a file (.npz, safetensors, Polygraphy JSON) takes its graph and tensor\n"
    "  metadata (dtype, scale, zero point, axis order) from a graph.json next to it, or from\n"
    "  --overlay FILE (used for every run that is a file; keys are the file's own keys).\n"
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
    std::string csv, json, dot, svg, model_explorer, dump_failing;
    std::size_t threads = 0;
    std::string map;
    std::vector<std::string> name_rules;
    numgap::repair_mode repair = numgap::repair_mode::on;
    numgap::io::read_policy reading; // --allow-outside-run, --max-inflated-mib
    std::string reference_debug_buffer, target_debug_buffer; // ETDump runs' --*debug-buffer
    std::optional<std::filesystem::path> overlay; // --overlay: graph.json for container runs
};

std::size_t parse_count(std::string_view flag, std::string_view text) {
    std::size_t value = 0;
    const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
    if (result.ec != std::errc() || result.ptr != text.data() + text.size() || value > 4096)
        throw usage_error{std::string(flag) + " expects a whole number from 0 to 4096, got '" +
                          std::string(text) + "'"};
    return value;
}

std::uint64_t parse_mebibytes(std::string_view flag, std::string_view text) {
    constexpr std::uint64_t most = std::uint64_t(1) << 30; // 1 PiB: far beyond any memory
    std::uint64_t value = 0;
    const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
    if (result.ec != std::errc() || result.ptr != text.data() + text.size() || value == 0 || value > most)
        throw usage_error{std::string(flag) + " expects a whole number of MiB from 1 to " + std::to_string(most) +
                          ", got '" + std::string(text) + "'"};
    return value << 20;
}

compare_arguments parse_compare(std::span<char*> args) {
    compare_arguments parsed;
    std::vector<std::string> positional;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string_view arg = args[i];
        if (arg.size() < 2 || arg.substr(0, 2) != "--") {
            positional.emplace_back(arg);
            continue;
        }
        std::string_view flag = arg;
        std::optional<std::string_view> value;
        if (const std::size_t equals = arg.find('='); equals != std::string_view::npos) {
            flag = arg.substr(0, equals);
            value = arg.substr(equals + 1);
        }
        auto take_value = [&]() -> std::string {
            if (value) return std::string(*value);
            if (i + 1 >= args.size()) throw usage_error{std::string(flag) + " needs a value"};
            return args[++i];
        };
        if (flag == "--metric")
            parsed.metrics.push_back(take_value());
        else if (flag == "--match")
            parsed.match = take_value();
        else if (flag == "--csv")
            parsed.csv = take_value();
        else if (flag == "--json")
            parsed.json = take_value();
        else if (flag == "--dot")
            parsed.dot = take_value();
        else if (flag == "--svg")
            parsed.svg = take_value();
        else if (flag == "--model-explorer")
            parsed.model_explorer = take_value();
        else if (flag == "--dump-failing")
            parsed.dump_failing = take_value();
        else if (flag == "--threads")
            parsed.threads = parse_count("--threads", take_value());
        else if (flag == "--map")
            parsed.map = take_value();
        else if (flag == "--name-rule")
            parsed.name_rules.push_back(take_value());
        else if (flag == "--repair") {
            const std::string mode = take_value();
            if (mode == "on") parsed.repair = numgap::repair_mode::on;
            else if (mode == "warn") parsed.repair = numgap::repair_mode::warn;
            else if (mode == "off") parsed.repair = numgap::repair_mode::off;
            else throw usage_error{"--repair must be on, warn or off, not '" + mode + "'"};
        }
        else if (flag == "--allow-outside-run")
            parsed.reading.allowed_roots.emplace_back(take_value());
        else if (flag == "--debug-buffer")
            parsed.target_debug_buffer = take_value();
        else if (flag == "--reference-debug-buffer")
            parsed.reference_debug_buffer = take_value();
        else if (flag == "--max-inflated-mib")
            parsed.reading.max_inflated_bytes = parse_mebibytes("--max-inflated-mib", take_value());
        else if (flag == "--overlay")
            parsed.overlay = std::filesystem::path(take_value());
        else
            throw usage_error{"unknown option '" + std::string(flag) + "'"};
    }
    if (positional.size() != 2)
        throw usage_error{"compare needs exactly two runs, REF and TARGET (got " +
                          std::to_string(positional.size()) + " positional arguments)"};
    parsed.reference = positional[0];
    parsed.target = positional[1];
    if (parsed.match != "auto" && parsed.match != "name" && parsed.match != "handle" &&
        parsed.match != "structure")
        throw usage_error{"--match must be auto, name, handle or structure, not '" + parsed.match + "'"};
    for (const std::string& rule : parsed.name_rules)
        if (rule != "output-suffix" && rule != "separators" && rule != "case" && rule != "common")
            throw usage_error{"--name-rule must be output-suffix, separators, case or common, not '" + rule + "'"};
    return parsed;
}

numgap::metric_set build_metrics(const std::vector<std::string>& specs) {
    if (specs.empty()) return numgap::metric_set::defaults();
    numgap::metric_set metrics;
    for (const std::string& spec : specs) {
        const std::size_t colon = spec.find(':');
        const std::string name = spec.substr(0, colon);
        if (name.empty()) throw usage_error{"--metric '" + spec + "' has no metric name"};
        std::optional<numgap::pass_rule> rule;
        if (colon != std::string::npos) {
            rule = numgap::parse_pass_rule(spec.substr(colon + 1));
            if (!rule)
                throw usage_error{"--metric '" + spec + "': '" + spec.substr(colon + 1) +
                                  "' is not a rule; write an operator (>=, >, <=, <, ==) and a number, "
                                  "e.g. cosine:>=0.999"};
        }
        metrics.add_builtin(name, rule);
    }
    return metrics;
}

numgap::match_options build_match_options(const compare_arguments& arguments) {
    numgap::match_options options;
    if (!arguments.map.empty()) options.explicit_mapping = numgap::io::read_mapping_file(arguments.map);
    if (!arguments.name_rules.empty()) {
        numgap::common_name_normalizer normalizer{true, false, false};
        for (const std::string& rule : arguments.name_rules) {
            if (rule == "output-suffix" || rule == "common") normalizer.strip_output_suffixes = true;
            if (rule == "separators" || rule == "common") normalizer.unify_separators = true;
            if (rule == "case") normalizer.case_sensitive = false;
        }
        options.normalize_name = normalizer;
    }
    return options;
}

// The explicit mapping (--map) comes first whatever the strategy: it overrides every other.
numgap::match_result run_matcher(const std::string& strategy, const numgap::basic_graph& reference,
                                 const numgap::basic_graph& target, const numgap::match_options& options) {
    if (strategy == "name") return numgap::match_by_name(reference, target, options); // applies it itself
    const numgap::match_result explicit_pairs = numgap::match_explicit(reference, target, options);
    if (strategy == "handle") return numgap::match_by_handle(reference, target, options, explicit_pairs);
    if (strategy == "structure") return numgap::match_by_structure(reference, target, options, explicit_pairs);
    return numgap::match_auto(reference, target, options);
}

// Progress on stderr, only for a terminal and only once the run has taken a second.
class progress_line {
public:
    progress_line() : enabled_(isatty(STDERR_FILENO) == 1), start_(clock::now()) {}
    void operator()(std::size_t done, std::size_t total) {
        if (!enabled_ || clock::now() - start_ < std::chrono::seconds(1)) return;
        if (clock::now() - last_ < std::chrono::milliseconds(100) && done != total) return;
        last_ = clock::now();
        std::fprintf(stderr, "\rnumgap: compared %zu of %zu groups", done, total);
        std::fflush(stderr);
        shown_ = true;
    }
    ~progress_line() {
        if (shown_) std::fprintf(stderr, "\r\033[K");
    }

private:
    using clock = std::chrono::steady_clock;
    bool enabled_;
    bool shown_ = false;
    clock::time_point start_;
    clock::time_point last_{};
};

// Opens one run; its debug buffer (an ETDump's tensor data) is given by `flag`.
numgap::io::run_directory open_run(const std::string& path, const std::string& debug_buffer, std::string_view flag,
                                   numgap::io::read_policy policy,
                                   const std::optional<std::filesystem::path>& overlay) {
    if (!debug_buffer.empty() && !numgap::io::is_etdump_run(path))
        throw usage_error{std::string(flag) + " names a debug buffer, but run '" + path + "' is not an ETDump"};
    policy.debug_buffer = debug_buffer;
    return numgap::io::run_directory::open(path, policy, overlay);
}

int run_compare(const compare_arguments& arguments) {
    const numgap::metric_set metrics = build_metrics(arguments.metrics);
    // --overlay describes the runs that are files; a directory has its own graph.json.
    const auto overlay_for = [&](const std::string& run) {
        return std::filesystem::is_directory(run) ? std::nullopt : arguments.overlay;
    };
    auto reference_run = open_run(arguments.reference, arguments.reference_debug_buffer, "--reference-debug-buffer",
                                  arguments.reading, overlay_for(arguments.reference));
    auto target_run = open_run(arguments.target, arguments.target_debug_buffer, "--debug-buffer", arguments.reading,
                               overlay_for(arguments.target));
    for (const auto* run : {&reference_run, &target_run})
        for (const std::string& note : run->notes()) std::cerr << "numgap: " << numgap::terminal_text(note) << "\n";
    // Shapes from the .npy headers only help structural matching; reading them
    // costs one small read per file, so only when it may run.
    const bool structure_may_run = arguments.match == "auto" || arguments.match == "structure";
    const numgap::basic_graph reference_graph = numgap::run_graph(reference_run, structure_may_run);
    const numgap::basic_graph target_graph = numgap::run_graph(target_run, structure_may_run);
    const numgap::match_result matches =
        run_matcher(arguments.match, reference_graph, target_graph, build_match_options(arguments));

    numgap::compare_options options;
    options.threads = arguments.threads;
    options.repair = arguments.repair;
    numgap::comparison_report report;
    {
        progress_line progress;
        options.progress = [&progress](std::size_t done, std::size_t total) { progress(done, total); };
        report = numgap::compare_runs(reference_graph, target_graph, matches, reference_run, target_run,
                                      metrics, options);
    }

    std::cout << numgap::format_summary_table(report);
    std::cout.flush();

    if (!arguments.csv.empty()) numgap::write_csv(report, arguments.csv);
    if (!arguments.json.empty()) numgap::write_json(report, arguments.json);
    if (!arguments.model_explorer.empty()) numgap::write_model_explorer(report, arguments.model_explorer);
    if (!arguments.dot.empty()) numgap::write_dot(report, arguments.dot);
    if (!arguments.svg.empty()) {
        // Graphviz reads the --dot file, else a temporary next to the SVG:
        // no file the user did not name is written, replaced or removed.
        std::optional<numgap::io::temporary_file> temporary_dot;
        std::filesystem::path dot_path = arguments.dot;
        if (dot_path.empty()) {
            temporary_dot.emplace(arguments.svg + ".dot", "DOT graph");
            dot_path = temporary_dot->path();
            numgap::write_dot(report, dot_path);
        }
        try {
            numgap::render_svg(dot_path, arguments.svg);
        } catch (const numgap::error& failure) {
            if (!temporary_dot) throw;
            // Keep the graph so it can be rendered elsewhere, without replacing a file.
            throw numgap::error(std::string(failure.what()) + "; the DOT graph was kept as '" +
                                temporary_dot->keep().string() + "'");
        }
    }
    if (!arguments.dump_failing.empty()) {
        const std::size_t written = numgap::dump_failing_pairs(report, reference_run, target_run,
                                                               arguments.dump_failing);
        std::cout << "wrote " << written << " failing pairs to "
                  << numgap::terminal_text(arguments.dump_failing) << "\n";
    }

    if (report.summary.errors != 0) {
        for (const numgap::group_report& group : report.groups)
            if (group.status == numgap::group_status::error)
                std::cerr << "numgap: error: group '"
                          << numgap::terminal_text(group.reference_nodes.empty() ? std::string("?")
                                                                                 : group.reference_nodes.back())
                          << "': " << numgap::terminal_text(group.message) << "\n";
        return exit_unusable;
    }
    if (report.summary.passed + report.summary.failed == 0) {
        // Every row is unmatched or missing: passing here would let a CI gate
        // succeed without a single comparison (e.g. target keys that never match).
        std::cerr << "numgap: nothing was compared: no group has both tensors ("
                  << report.summary.unmatched_reference << " unmatched reference nodes, "
                  << report.summary.unmatched_target << " unmatched target nodes, "
                  << report.summary.missing << " missing groups); check that the runs' keys match\n";
        return exit_fail;
    }
    if (const std::string warning = numgap::coverage_warning(report.summary); !warning.empty()) {
        // Mirrors "nothing compared": a pass over a small fraction of the
        // model is not a pass a CI gate may accept.
        std::cerr << "numgap: " << warning << "\n";
        return exit_fail;
    }
    return report.summary.failed == 0 ? exit_pass : exit_fail;
}

// ---- demo: a small convolutional model, its float32 reference run and a
// quantized/fp16 target run with one broken normalisation node -------------

struct tensor {
    std::vector<float> values;
    std::vector<std::int64_t> shape; // NCHW, batch 1
};

std::vector<float> random_values(std::mt19937& generator, std::size_t count, float low, float high) {
    std::uniform_real_distribution<float> distribution(low, high);
    std::vector<float> values(count);
    for (float& value : values) value = distribution(generator);
    return values;
}

tensor convolution3x3(const tensor& input, const std::vector<float>& weights, const std::vector<float>& bias) {
    const std::int64_t channels = input.shape[1], height = input.shape[2], width = input.shape[3];
    const std::int64_t outputs = std::int64_t(bias.size());
    tensor output{std::vector<float>(std::size_t(outputs * height * width)), {1, outputs, height, width}};
    for (std::int64_t o = 0; o < outputs; ++o)
        for (std::int64_t y = 0; y < height; ++y)
            for (std::int64_t x = 0; x < width; ++x) {
                float sum = bias[std::size_t(o)];
                for (std::int64_t c = 0; c < channels; ++c)
                    for (std::int64_t dy = -1; dy <= 1; ++dy)
                        for (std::int64_t dx = -1; dx <= 1; ++dx) {
                            const std::int64_t sy = y + dy, sx = x + dx;
                            if (sy < 0 || sy >= height || sx < 0 || sx >= width) continue;
                            sum += weights[std::size_t(((o * channels + c) * 3 + dy + 1) * 3 + dx + 1)] *
                                   input.values[std::size_t((c * height + sy) * width + sx)];
                        }
                output.values[std::size_t((o * height + y) * width + x)] = sum;
            }
    return output;
}

// Group normalisation; `groups` == 1 is the injected fault (statistics over
// the whole tensor, as when a converter drops the num_groups attribute).
tensor group_norm(const tensor& input, std::int64_t groups, float epsilon) {
    tensor output = input;
    const std::int64_t channels = input.shape[1];
    const std::int64_t per_group = channels / groups * input.shape[2] * input.shape[3];
    for (std::int64_t g = 0; g < groups; ++g) {
        double sum = 0, sum_squares = 0;
        for (std::int64_t i = 0; i < per_group; ++i) {
            const double value = input.values[std::size_t(g * per_group + i)];
            sum += value;
            sum_squares += value * value;
        }
        const double mean = sum / double(per_group);
        const double variance = std::max(0.0, sum_squares / double(per_group) - mean * mean);
        const double inverse = 1.0 / std::sqrt(variance + epsilon);
        for (std::int64_t i = 0; i < per_group; ++i) {
            float& value = output.values[std::size_t(g * per_group + i)];
            value = float((value - mean) * inverse);
        }
    }
    return output;
}

tensor relu(tensor input) {
    for (float& value : input.values) value = std::max(value, 0.0f);
    return input;
}

tensor global_average_pool(const tensor& input) {
    const std::int64_t channels = input.shape[1], area = input.shape[2] * input.shape[3];
    tensor output{std::vector<float>(std::size_t(channels)), {1, channels}};
    for (std::int64_t c = 0; c < channels; ++c) {
        double sum = 0;
        for (std::int64_t i = 0; i < area; ++i) sum += input.values[std::size_t(c * area + i)];
        output.values[std::size_t(c)] = float(sum / double(area));
    }
    return output;
}

tensor linear(const tensor& input, const std::vector<float>& weights, const std::vector<float>& bias) {
    const std::size_t inputs = input.values.size(), outputs = bias.size();
    tensor output{std::vector<float>(outputs), {1, std::int64_t(outputs)}};
    for (std::size_t o = 0; o < outputs; ++o) {
        float sum = bias[o];
        for (std::size_t i = 0; i < inputs; ++i) sum += weights[o * inputs + i] * input.values[i];
        output.values[o] = sum;
    }
    return output;
}

tensor softmax(tensor input) {
    const float largest = *std::max_element(input.values.begin(), input.values.end());
    double total = 0;
    for (float& value : input.values) total += (value = std::exp(value - largest));
    for (float& value : input.values) value = float(value / total);
    return input;
}

// What the target backend stores for one tensor, and what it reads back.
enum class storage { float32, float16, uint8_per_tensor, int8_per_channel_nhwc_raw };

struct stored_tensor {
    tensor dequantized; // what the next target op consumes
    storage kind;
    std::vector<std::uint8_t> bytes;
    float scale = 1;
    std::int32_t zero_point = 0;
    std::vector<float> channel_scales;
};

stored_tensor store(const tensor& value, storage kind) {
    stored_tensor stored{value, kind, {}, 1, 0, {}};
    if (kind == storage::float16) {
        for (float& v : stored.dequantized.values) {
            const numgap::float16 half = numgap::to_float16(v);
            v = numgap::to_float(half);
            stored.bytes.push_back(std::uint8_t(half.bits & 0xff));
            stored.bytes.push_back(std::uint8_t(half.bits >> 8));
        }
    } else if (kind == storage::uint8_per_tensor) {
        const auto [low_it, high_it] = std::minmax_element(value.values.begin(), value.values.end());
        const float low = std::min(*low_it, 0.0f), high = std::max(*high_it, 0.0f);
        stored.scale = std::max(high - low, 1e-6f) / 255.0f;
        stored.zero_point = std::int32_t(std::lround(-low / stored.scale));
        for (float& v : stored.dequantized.values) {
            const long q = std::clamp(std::lround(v / stored.scale) + stored.zero_point, 0L, 255L);
            stored.bytes.push_back(std::uint8_t(q));
            v = stored.scale * float(q - stored.zero_point);
        }
    } else if (kind == storage::int8_per_channel_nhwc_raw) {
        const std::int64_t channels = value.shape[1], area = value.shape[2] * value.shape[3];
        stored.channel_scales.resize(std::size_t(channels));
        for (std::int64_t c = 0; c < channels; ++c) {
            float largest = 1e-6f;
            for (std::int64_t i = 0; i < area; ++i)
                largest = std::max(largest, std::abs(value.values[std::size_t(c * area + i)]));
            stored.channel_scales[std::size_t(c)] = largest / 127.0f;
        }
        stored.bytes.resize(value.values.size());
        for (std::int64_t c = 0; c < channels; ++c)
            for (std::int64_t i = 0; i < area; ++i) {
                const float scale = stored.channel_scales[std::size_t(c)];
                float& v = stored.dequantized.values[std::size_t(c * area + i)];
                const long q = std::clamp(std::lround(v / scale), -127L, 127L);
                stored.bytes[std::size_t(i * channels + c)] = std::uint8_t(std::int8_t(q)); // NHWC
                v = scale * float(q);
            }
    } else {
        const auto* raw = reinterpret_cast<const std::uint8_t*>(value.values.data());
        stored.bytes.assign(raw, raw + value.values.size() * sizeof(float));
    }
    return stored;
}

struct demo_node {
    std::string reference_name, target_name, op;
    std::vector<std::size_t> inputs; // indices of earlier demo nodes
    storage target_storage;
};

void write_bytes(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (!file) throw numgap::error("cannot write '" + path.string() + "'");
    const std::size_t written = std::fwrite(bytes.data(), 1, bytes.size(), file);
    const bool closed = std::fclose(file) == 0;
    if (written != bytes.size() || !closed) throw numgap::error("writing '" + path.string() + "' failed");
}

void write_demo_run(const std::filesystem::path& directory, const std::vector<demo_node>& nodes,
                    const std::vector<tensor>& values, const std::vector<stored_tensor>* stored) {
    std::filesystem::create_directories(directory);
    const bool target = stored != nullptr;
    std::string graph = "{\"version\":1,\"nodes\":[\n";
    std::string tensors;
    for (std::size_t n = 0; n < nodes.size(); ++n) {
        const demo_node& node = nodes[n];
        const std::string& name = target ? node.target_name : node.reference_name;
        std::string key = name;
        std::replace(key.begin(), key.end(), '/', '_');
        graph += n ? ",\n" : "";
        graph += "{\"name\":";
        numgap::io::write_json_string(graph, name);
        graph += ",\"op\":";
        numgap::io::write_json_string(graph, node.op);
        graph += ",\"inputs\":[";
        for (std::size_t i = 0; i < node.inputs.size(); ++i) {
            std::string input = target ? nodes[node.inputs[i]].target_name : nodes[node.inputs[i]].reference_name;
            std::replace(input.begin(), input.end(), '/', '_');
            graph += i ? "," : "";
            numgap::io::write_json_string(graph, input);
        }
        graph += "],\"outputs\":[";
        numgap::io::write_json_string(graph, key);
        graph += "],\"debug_handles\":[" + std::to_string(n + 1) + "]}";

        if (!target) {
            numgap::io::write_npy(directory / (key + ".npy"), values[n].values.data(), values[n].shape);
            continue;
        }
        const stored_tensor& s = (*stored)[n];
        const std::vector<std::int64_t>& shape = values[n].shape;
        std::string entry;
        numgap::io::write_json_string(entry, key);
        entry += ":{";
        const std::filesystem::path file = directory / "out" / (key + (s.kind == storage::int8_per_channel_nhwc_raw ? ".raw" : ".npy"));
        std::filesystem::create_directories(file.parent_path());
        entry += "\"file\":";
        numgap::io::write_json_string(entry, "out/" + file.filename().string());
        switch (s.kind) {
        case storage::float32:
            numgap::io::write_npy(file, numgap::tensor_view(s.bytes.data(), numgap::dtype::float32, shape));
            break;
        case storage::float16:
            numgap::io::write_npy(file, numgap::tensor_view(s.bytes.data(), numgap::dtype::float16, shape));
            break;
        case storage::uint8_per_tensor:
            numgap::io::write_npy(file, numgap::tensor_view(s.bytes.data(), numgap::dtype::uint8, shape));
            entry += ",\"scale\":";
            numgap::io::write_json_number(entry, s.scale);
            entry += ",\"zero_point\":" + std::to_string(s.zero_point);
            break;
        case storage::int8_per_channel_nhwc_raw: {
            write_bytes(file, s.bytes);
            entry += ",\"dtype\":\"int8\",\"shape\":[" + std::to_string(shape[0]) + "," +
                     std::to_string(shape[2]) + "," + std::to_string(shape[3]) + "," +
                     std::to_string(shape[1]) + "],\"axis_order\":[0,2,3,1],\"quant_axis\":3,\"scale\":[";
            for (std::size_t c = 0; c < s.channel_scales.size(); ++c) {
                entry += c ? "," : "";
                numgap::io::write_json_number(entry, s.channel_scales[c]);
            }
            entry += "],\"zero_point\":0";
            break;
        }
        }
        entry += "}";
        tensors += (tensors.empty() ? "" : ",\n") + entry;
    }
    graph += "\n]";
    if (target) graph += ",\n\"tensors\":{\n" + tensors + "\n}";
    graph += "}\n";
    std::vector<std::uint8_t> bytes(graph.begin(), graph.end());
    write_bytes(directory / "graph.json", bytes);
}

int run_demo(const std::filesystem::path& directory) {
    std::mt19937 generator(20240607);
    // x -> conv1 -> gn1 -> relu1 -> conv2 -> gn2 -> relu2 -> pool -> fc -> softmax
    const std::vector<demo_node> nodes = {
        {"x", "input_0", "input", {}, storage::float16},
        {"conv1", "/stem/conv1/Conv", "aten.convolution.default", {0}, storage::uint8_per_tensor},
        {"gn1", "/stem/gn1/GroupNorm", "aten.native_group_norm.default", {1}, storage::float16},
        {"relu1", "/stem/relu1/Relu", "aten.relu.default", {2}, storage::uint8_per_tensor},
        {"conv2", "/block/conv2/Conv", "aten.convolution.default", {3}, storage::int8_per_channel_nhwc_raw},
        {"gn2", "/block/gn2/GroupNorm", "aten.native_group_norm.default", {4}, storage::float16},
        {"relu2", "/block/relu2/Relu", "aten.relu.default", {5}, storage::uint8_per_tensor},
        {"pool", "/head/pool/GlobalAveragePool", "aten.mean.dim", {6}, storage::float16},
        {"fc", "/head/fc/Gemm", "aten.linear.default", {7}, storage::float16},
        {"softmax", "/head/softmax/Softmax", "aten._softmax.default", {8}, storage::uint8_per_tensor},
    };
    const std::int64_t size = 16, in_channels = 3, mid = 8, out = 16, classes = 10, groups = 4;
    tensor input{random_values(generator, std::size_t(in_channels * size * size), -1, 1), {1, in_channels, size, size}};
    const auto w1 = random_values(generator, std::size_t(mid * in_channels * 9), -0.4f, 0.4f);
    const auto b1 = random_values(generator, std::size_t(mid), -0.1f, 0.1f);
    const auto w2 = random_values(generator, std::size_t(out * mid * 9), -0.2f, 0.2f);
    // Strongly different biases per channel group give each group its own
    // mean, which is exactly what the broken normalisation gets wrong.
    std::vector<float> b2(static_cast<std::size_t>(out));
    for (std::size_t c = 0; c < b2.size(); ++c) b2[c] = -1.5f + float(c / 4) * 1.0f;
    const auto w3 = random_values(generator, std::size_t(classes * out), -0.5f, 0.5f);
    const auto b3 = random_values(generator, std::size_t(classes), -0.1f, 0.1f);

    auto forward = [&](const tensor& x, std::int64_t gn2_groups, const std::vector<storage>* stores,
                       std::vector<stored_tensor>* stored) {
        std::vector<tensor> values;
        auto keep = [&](tensor value) {
            if (stores) {
                stored->push_back(store(value, (*stores)[values.size()]));
                value = stored->back().dequantized; // the target consumes what it stored
            }
            values.push_back(value);
            return value;
        };
        tensor h = keep(x);
        h = keep(convolution3x3(h, w1, b1));
        h = keep(group_norm(h, groups, 1e-5f));
        h = keep(relu(h));
        h = keep(convolution3x3(h, w2, b2));
        h = keep(group_norm(h, gn2_groups, 1e-5f));
        h = keep(relu(h));
        h = keep(global_average_pool(h));
        h = keep(linear(h, w3, b3));
        keep(softmax(h));
        return values;
    };
    const std::vector<tensor> reference = forward(input, groups, nullptr, nullptr);
    std::vector<storage> stores;
    for (const demo_node& node : nodes) stores.push_back(node.target_storage);
    std::vector<stored_tensor> stored;
    const std::vector<tensor> target = forward(input, 1, &stores, &stored);

    const std::filesystem::path reference_dir = directory / "reference";
    const std::filesystem::path target_dir = directory / "target";
    write_demo_run(reference_dir, nodes, reference, nullptr);
    write_demo_run(target_dir, nodes, target, &stored);

    std::cout << "numgap demo: wrote a float32 reference run to " << numgap::terminal_text(reference_dir.string())
              << "\nand a quantized/fp16 target run to " << numgap::terminal_text(target_dir.string())
              << "\nwhose node /block/gn2/GroupNorm normalises over the whole tensor instead of "
                 "4 groups.\n\n$ numgap compare "
              << numgap::terminal_text(reference_dir.string()) << " "
              << numgap::terminal_text(target_dir.string()) << "\n\n";
    compare_arguments arguments;
    arguments.reference = reference_dir.string();
    arguments.target = target_dir.string();
    const int status = run_compare(arguments);
    std::cout << "\nThe report names gn2 as the first divergence and the only error origin: the\n"
                 "quantized convolutions before it pass, and everything after it fails only\n"
                 "because gn2 does.\n";
    return status;
}

} // namespace

int main(int argc, char** argv) {
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
