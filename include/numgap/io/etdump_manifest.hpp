#pragma once
// numgap::io ETDump manifests: a small JSON file naming an ETDump and its
// debug buffer, so that one path is the whole run:
//   {"etdump": "run.etdp", "debug_buffer": "debug.bin"}
//
// Rules:
//  - Detected by content (open_run_source.hpp): a file shorter than
//    run_sniff_bytes (4 KiB) whose text is a JSON object with a string member
//    "etdump". Anything else is not a manifest (a Polygraphy JSON, which may
//    well mention "etdump" as a runner name, is far longer or has no such
//    member).
//  - Members: "etdump" (required) and "debug_buffer" (optional; without it the
//    run takes read_policy::debug_buffer, CLI --debug-buffer, as for a bare
//    ETDump), both non-empty strings. Any other member is an error naming it,
//    as a misspelt "debug_bufer" would otherwise silently drop the buffer.
//    Naming a debug buffer in both the manifest and the policy is an error.
//  - Paths are relative to the manifest's folder and confined to it (and to
//    read_policy::allowed_roots, CLI --allow-outside-run), like every file a
//    run directory names (confined_open.hpp): "../x", an absolute path or a
//    link leading elsewhere is refused, naming the manifest, the member and
//    the path.
//  - `MANIFEST#run=N` selects a run of the ETDump; a graph.json beside the
//    manifest is its overlay (run_overlay.hpp), as for any run file.
// Errors: numgap::error naming the manifest (schema, with line:column; io for
// a file that cannot be opened; usage for two debug buffers).
#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <numgap/core/error.hpp>
#include <numgap/io/confined_open.hpp>
#include <numgap/io/etdump_source.hpp>
#include <numgap/io/json.hpp>
#include <numgap/io/mapped_file.hpp>
#include <numgap/io/read_policy.hpp>
#include <numgap/io/run_source.hpp>

namespace numgap::io {

struct etdump_manifest {
    std::string etdump;
    std::optional<std::string> debug_buffer;
};

namespace detail {
inline constexpr int etdump_manifest_max_depth = 8;
} // namespace detail

// Whether `text` (a whole file) is an ETDump manifest by the rule above; never throws.
inline bool is_etdump_manifest(std::string_view text) noexcept {
    try {
        const json_value root = parse_json(text, "manifest", detail::etdump_manifest_max_depth);
        const json_value* etdump = root.is_object() ? root.find("etdump") : nullptr;
        return etdump != nullptr && etdump->is_string();
    } catch (...) {
        return false;
    }
}

// The manifest `text`, read from `file` (named in errors); validated strictly.
inline etdump_manifest parse_etdump_manifest(std::string_view text, const std::string& file) {
    const json_value root = parse_json(text, file, detail::etdump_manifest_max_depth);
    const auto fail = [&](const json_value& at, const std::string& reason) {
        throw error(error_kind::schema,
                    "ETDump manifest '" + file + "' line " + std::to_string(at.line()) + ":" +
                        std::to_string(at.column()) + ": " + reason,
                    error_location::at_line(file, std::uint32_t(at.line()), std::uint32_t(at.column())));
    };
    if (!root.is_object()) fail(root, "a manifest must be a JSON object");
    etdump_manifest manifest;
    bool has_etdump = false;
    for (const json_member& member : root.as_object()) {
        if (member.key != "etdump" && member.key != "debug_buffer")
            fail(member.value, "unknown member \"" + member.key + "\" (a manifest has \"etdump\" and \"debug_buffer\")");
        if (!member.value.is_string() || member.value.as_string().empty())
            fail(member.value, "\"" + member.key + "\" must be a non-empty path (a string)");
        if (member.key == "etdump") {
            manifest.etdump = member.value.as_string();
            has_etdump = true;
        } else {
            manifest.debug_buffer = member.value.as_string();
        }
    }
    if (!has_etdump) fail(root, "a manifest needs \"etdump\", the path of the ETDump file");
    return manifest;
}

// Opens the run the manifest file `path` describes; `selector` as for an ETDump ("run=N").
inline opened_run_source open_etdump_manifest(const std::filesystem::path& path, const std::optional<std::string>& selector,
                                              const read_policy& policy) {
    const mapped_file text = mapped_file::map(detail::open_run_file(path), path);
    const etdump_manifest manifest =
        parse_etdump_manifest(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()), path.string());
    text.check_intact();
    if (manifest.debug_buffer && !policy.debug_buffer.empty())
        throw error(error_kind::usage,
                    "ETDump manifest '" + path.string() + "' names the debug buffer '" + *manifest.debug_buffer +
                        "' and so does the command (--debug-buffer '" + policy.debug_buffer.string() +
                        "'): give it in one place",
                    error_location::in_file(path.string()));
    const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : ".";
    const auto roots = detail::run_roots(folder, policy);
    const auto open_named = [&](std::string_view member, const std::string& entry) {
        try {
            return open_confined(*roots, entry, confined_target::file);
        } catch (const confined_open_error& failure) {
            throw error(error_kind::io,
                        "ETDump manifest '" + path.string() + "': \"" + std::string(member) + "\" '" + entry +
                            "': " + failure.what(),
                        error_location::at_item(path.string(), entry));
        }
    };
    file_descriptor etdump = open_named("etdump", manifest.etdump);
    std::optional<file_descriptor> buffer;
    std::filesystem::path buffer_shown = policy.debug_buffer;
    if (manifest.debug_buffer) {
        buffer.emplace(open_named("debug_buffer", *manifest.debug_buffer));
        buffer_shown = folder / *manifest.debug_buffer;
    } else if (!policy.debug_buffer.empty()) {
        buffer.emplace(detail::open_run_file(policy.debug_buffer, "debug buffer"));
    }
    opened_run_source opened =
        open_etdump_files(std::move(etdump), folder / manifest.etdump, std::move(buffer), buffer_shown, selector);
    opened.notes.insert(opened.notes.begin(), "ETDump manifest '" + path.string() + "': ETDump '" + manifest.etdump + "'" +
                                                  (buffer_shown.empty() ? std::string(", no debug buffer")
                                                                        : ", debug buffer '" + buffer_shown.string() + "'"));
    return opened;
}

} // namespace numgap::io
