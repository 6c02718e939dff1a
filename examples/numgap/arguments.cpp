// Parsing `numgap compare`'s arguments (arguments.hpp).
#include "arguments.hpp"

#include <charconv>
#include <cstdint>
#include <optional>
#include <system_error>

namespace numgap_cli {

namespace {
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

// "I/N": shard I (0-based) of N.
numgap::shard_spec parse_shard(std::string_view text) {
    const std::size_t slash = text.find('/');
    numgap::shard_spec shard;
    bool valid = slash != std::string_view::npos;
    if (valid) {
        const std::string_view index = text.substr(0, slash), count = text.substr(slash + 1);
        const auto parsed_index = std::from_chars(index.data(), index.data() + index.size(), shard.index);
        const auto parsed_count = std::from_chars(count.data(), count.data() + count.size(), shard.count);
        valid = !index.empty() && !count.empty() && parsed_index.ec == std::errc() &&
                parsed_index.ptr == index.data() + index.size() && parsed_count.ec == std::errc() &&
                parsed_count.ptr == count.data() + count.size() && shard.count >= 1 && shard.count <= 4096 &&
                shard.index < shard.count;
    }
    if (!valid)
        throw usage_error{"--shard expects I/N with 0 <= I < N <= 4096 (shard I of N, numbered from 0), got '" +
                          std::string(text) + "'"};
    return shard;
}

} // namespace

compare_arguments parse_compare(std::span<char*> args) {
    compare_arguments parsed;
    std::vector<std::string> positional;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string_view arg = args[i];
        if (arg.size() < 2 || arg.substr(0, 2) != "--") {
            positional.emplace_back(arg);
            continue;
        }
        if (arg == "--quiet") {
            parsed.quiet = true;
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
            parsed.outputs.csv = take_value();
        else if (flag == "--json")
            parsed.outputs.json = take_value();
        else if (flag == "--dot")
            parsed.outputs.dot = take_value();
        else if (flag == "--svg")
            parsed.outputs.svg = take_value();
        else if (flag == "--model-explorer")
            parsed.outputs.model_explorer = take_value();
        else if (flag == "--dump-failing")
            parsed.dump_failing = take_value();
        else if (flag == "--shard")
            parsed.shard = parse_shard(take_value());
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
        else if (flag == "--reference-overlay")
            parsed.reference_overlay = std::filesystem::path(take_value());
        else if (flag == "--target-overlay")
            parsed.target_overlay = std::filesystem::path(take_value());
        else if (flag == "--qnn-net-json")
            parsed.reading.qnn_net_json = take_value();
        else if (flag == "--raw-dtype") {
            const std::string name = take_value();
            parsed.reading.raw_dtype = numgap::parse_dtype(name);
            if (!parsed.reading.raw_dtype)
                throw usage_error{"--raw-dtype must be a numgap dtype (float32, float16, bfloat16, uint8, ...), not '" +
                                  name + "'"};
        }
        else if (flag == "--raw-layout") {
            const std::string layout = take_value();
            if (layout == "nhwc") parsed.reading.raw_tensor_layout = numgap::io::raw_layout::nhwc;
            else if (layout == "nchw") parsed.reading.raw_tensor_layout = numgap::io::raw_layout::nchw;
            else if (layout == "as-reference") parsed.reading.raw_tensor_layout = numgap::io::raw_layout::as_reference;
            else throw usage_error{"--raw-layout must be nhwc, nchw or as-reference, not '" + layout + "'"};
        }
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
    // One overlay for both and one per side would leave a side with two.
    if (parsed.overlay && (parsed.reference_overlay || parsed.target_overlay))
        throw usage_error{"--overlay gives every run the same overlay; it cannot be combined with "
                          "--reference-overlay or --target-overlay (give each side its own instead)"};
    for (const std::string& rule : parsed.name_rules)
        if (rule != "output-suffix" && rule != "separators" && rule != "case" && rule != "common")
            throw usage_error{"--name-rule must be output-suffix, separators, case or common, not '" + rule + "'"};
    if (parsed.shard) {
        // A shard's rows are only a part: the whole report exists after `numgap merge`.
        if (parsed.outputs.json.empty())
            throw usage_error{"--shard writes a partial report, so it needs --json FILE"};
        const report_outputs& outputs = parsed.outputs;
        if (!outputs.csv.empty() || !outputs.dot.empty() || !outputs.svg.empty() || !outputs.model_explorer.empty() ||
            !parsed.dump_failing.empty())
            throw usage_error{"with --shard, ask `numgap merge` for --csv, --dot, --svg and --model-explorer; "
                              "--dump-failing is not available per shard"};
    }
    return parsed;
}

merge_arguments parse_merge(std::span<char*> args) {
    merge_arguments parsed;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string_view arg = args[i];
        if (arg.size() < 2 || arg.substr(0, 2) != "--") {
            parsed.partials.emplace_back(arg);
            continue;
        }
        std::string_view flag = arg;
        std::optional<std::string> value;
        if (const std::size_t equals = arg.find('='); equals != std::string_view::npos) {
            flag = arg.substr(0, equals);
            value = std::string(arg.substr(equals + 1));
        } else if (i + 1 < args.size()) {
            value = std::string(args[i + 1]);
            ++i;
        }
        std::string* output = flag == "--csv"              ? &parsed.outputs.csv
                              : flag == "--json"           ? &parsed.outputs.json
                              : flag == "--dot"            ? &parsed.outputs.dot
                              : flag == "--svg"            ? &parsed.outputs.svg
                              : flag == "--model-explorer" ? &parsed.outputs.model_explorer
                                                           : nullptr;
        if (output == nullptr) throw usage_error{"unknown option '" + std::string(flag) + "' for merge"};
        if (!value) throw usage_error{std::string(flag) + " needs a value"};
        *output = *value;
    }
    if (parsed.partials.empty())
        throw usage_error{"merge needs the partial reports of every shard (numgap compare --shard I/N --json F)"};
    return parsed;
}

} // namespace numgap_cli
