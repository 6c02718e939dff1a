#pragma once
// numgap::io::polygraphy_source: one runner's outputs of one iteration of a
// Polygraphy RunResults JSON (`polygraphy run --save-outputs out.json`;
// encodings in polygraphy_json.hpp) as a run.
//
// Selection: `out.json#RUNNER` reads runner RUNNER (the first of that name),
// `out.json#RUNNER@N` its iteration N (0-based; `out.json#@N` the first
// runner's), `out.json` alone the first runner's iteration 0. The choice is
// always stated in notes() ("read runner 'x', iteration 0 of 1 ..."), which
// the CLI prints on stderr. An unknown runner or iteration is an error listing
// what the file holds.
//
// Keys are the output names, sorted; there is no graph of its own (each
// output is a node of its own unless an overlay graph.json gives one). Each
// output is a .npy file encoded in base64, decoded through the .npy parser
// (npy.hpp: dtypes, limits, errors).
//
// Memory: open() maps the file and records where each encoded array lies
// (the pages are the kernel's page cache, read once and reclaimable; nothing
// is copied); load() decodes one array into a buffer of its decoded size
// (3/4 of its base64 text) that the returned loaded_tensor owns. So the
// resident memory numgap adds is the decoded size of the tensors alive at
// once - during compare_runs one reference/target pair per worker thread -
// never the whole file twice. A string with JSON escapes (the oldest,
// latin-1 files) is first unescaped into a temporary copy of that string.
// stored_shape() decodes only the first characters (the .npy header).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/io/base64.hpp>
#include <numgap/io/loaded_tensor.hpp>
#include <numgap/io/mapped_file.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/polygraphy_json.hpp>
#include <numgap/io/run_source.hpp>
#include <numgap/io/selector_index.hpp>

namespace numgap::io {

class polygraphy_source final : public run_source {
public:
    polygraphy_source(std::shared_ptr<const mapped_file> mapping, std::string file, std::string runner,
                      std::vector<polygraphy_output> outputs)
        : mapping_(std::move(mapping)), file_(std::move(file)), runner_(std::move(runner)), outputs_(std::move(outputs)) {
        std::sort(outputs_.begin(), outputs_.end(),
                  [](const polygraphy_output& a, const polygraphy_output& b) { return a.name < b.name; });
    }

    loaded_tensor load(const tensor_spec& spec) const override {
        const polygraphy_output& output = *find(spec.key);
        std::unique_ptr<detail::loaded_tensor_state> state = detail::start_loading(spec, file_);
        const std::string where = describe(output);
        const std::span<const std::byte> bytes =
            decode_polygraphy_array(mapping_->bytes(), output, file_, where, state->buffer);
        mapping_->check_intact(); // what was decoded was the file's
        state->view = npy_view(bytes, parse_npy_header(bytes, where, spec.type));
        detail::finish_loaded_tensor(spec, *state, where);
        return loaded_tensor(std::move(state));
    }

    // Decodes the first characters only: enough for the .npy header.
    std::optional<std::vector<std::int64_t>> stored_shape(const tensor_spec& spec) const override {
        const polygraphy_output* output = find(spec.key);
        if (output == nullptr || output->encoded.escaped) return std::nullopt;
        const std::span<const std::byte> text =
            mapping_->bytes().subspan(output->encoded.begin, output->encoded.end - output->encoded.begin);
        const std::optional<std::size_t> total = base64_decoded_size(text);
        if (!total) return std::nullopt;
        try {
            const std::optional<npy_header> header = detail::read_npy_header(
                [&](std::span<std::byte> prefix) {
                    // Whole groups of 4 characters (3 bytes) covering the prefix, decoded into a scratch buffer.
                    const std::size_t groups = std::min(text.size() / 4, (prefix.size() + 2) / 3);
                    std::vector<std::byte> scratch(groups * 3);
                    const std::span<const std::byte> characters = text.first(groups * 4);
                    const std::size_t decoded = *base64_decoded_size(characters);
                    if (base64_decode(characters, {scratch.data(), decoded})) return std::span<const std::byte>();
                    const std::size_t got = std::min(decoded, prefix.size());
                    std::copy_n(scratch.begin(), got, prefix.begin());
                    return std::span<const std::byte>(prefix.data(), got);
                },
                *total, describe(*output), spec.type);
            if (!header) return std::nullopt;
            return header->shape;
        } catch (const error&) {
            return std::nullopt;
        }
    }

    void release_cached_pages() const noexcept override {
        if (mapping_) mapping_->release_all_pages();
    }
    std::string missing_reason(std::string_view, const run_manifest&) const override {
        return "no such output of runner '" + runner_ + "'";
    }

    const std::vector<polygraphy_output>& outputs() const noexcept { return outputs_; }

private:
    const polygraphy_output* find(std::string_view name) const {
        const auto found = std::lower_bound(outputs_.begin(), outputs_.end(), name,
                                            [](const polygraphy_output& o, std::string_view n) { return o.name < n; });
        return found != outputs_.end() && found->name == name ? &*found : nullptr;
    }
    std::string describe(const polygraphy_output& output) const {
        return "'" + file_ + "', runner '" + runner_ + "', output '" + output.name + "'";
    }

    std::shared_ptr<const mapped_file> mapping_;
    std::string file_, runner_;
    std::vector<polygraphy_output> outputs_; // sorted by name
};

namespace detail {
inline std::string polygraphy_runner_list(const polygraphy_results& results) {
    std::string list;
    for (const polygraphy_runner& runner : results.runners)
        list += (list.empty() ? "'" : ", '") + runner.name + "' (" + std::to_string(runner.iterations.size()) +
                (runner.iterations.size() == 1 ? " iteration)" : " iterations)");
    return list;
}
} // namespace detail

// `selector` is what followed '#' in the run path ("RUNNER", "RUNNER@N", "@N"), if anything.
inline opened_run_source open_polygraphy_json(const std::filesystem::path& path, const std::optional<std::string>& selector) {
    const std::string file = path.string();
    auto mapping = std::make_shared<const mapped_file>(mapped_file::map(detail::open_run_file(path), path));
    polygraphy_results results = parse_polygraphy_results(mapping->bytes(), file);
    mapping->check_intact();

    std::string wanted_runner;
    std::optional<std::size_t> wanted_iteration;
    if (selector) {
        wanted_runner = *selector;
        const std::size_t at = selector->rfind('@');
        // A runner name may hold '@': only a trailing "@<digits>" is an iteration.
        if (at != std::string::npos) wanted_iteration = detail::selector_index(std::string_view(*selector).substr(at + 1));
        if (wanted_iteration) wanted_runner = selector->substr(0, at);
    }
    const auto runner = wanted_runner.empty()
                            ? results.runners.begin()
                            : std::find_if(results.runners.begin(), results.runners.end(),
                                           [&](const polygraphy_runner& r) { return r.name == wanted_runner; });
    if (runner == results.runners.end())
        throw error(error_kind::usage,
                    "'" + file + "' has no runner '" + wanted_runner + "'; it holds " +
                        detail::polygraphy_runner_list(results),
                    error_location::at_item(file, wanted_runner));
    const std::size_t iteration = wanted_iteration.value_or(0);
    if (iteration >= runner->iterations.size())
        throw error(error_kind::usage,
                    "'" + file + "': runner '" + runner->name + "' has no iteration " + std::to_string(iteration) +
                        "; it holds " + std::to_string(runner->iterations.size()),
                    error_location::at_item(file, runner->name));

    opened_run_source opened;
    opened.notes.push_back("'" + file + "': read runner '" + runner->name + "', iteration " + std::to_string(iteration) +
                           " (the file holds " + detail::polygraphy_runner_list(results) +
                           "); pick another with '" + file + "#RUNNER' or '" + file + "#RUNNER@ITERATION'");
    std::vector<tensor_spec> discovered;
    for (const polygraphy_output& output : runner->iterations[iteration].outputs) {
        tensor_spec spec;
        spec.key = output.name;
        spec.file = file;
        discovered.push_back(std::move(spec));
        opened.total_bytes += (output.encoded.end - output.encoded.begin) / 4 * 3;
    }
    detail::merge_specs(opened.manifest, std::move(discovered));
    opened.source = std::make_shared<const polygraphy_source>(std::move(mapping), file, runner->name,
                                                              std::move(runner->iterations[iteration].outputs));
    return opened;
}

} // namespace numgap::io
