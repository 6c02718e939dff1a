#pragma once
// numgap::io::choose_qnn_result_folder: which folder of a `qnn-net-run`
// output folder holds the run (qnn_raw_source.hpp): with `Result_<N>`
// subfolders, `RUN#N` or `RUN#Result_N` picks one; without a selector
// Result_0 is read (the lowest N when there is no Result_0) and a note says
// so. Without such subfolders the folder itself holds the files and takes no
// selector. Errors (kind usage or io) name the run and what it holds.
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/io/selector_index.hpp>

namespace numgap::io {

namespace detail {

// N of a folder named "Result_<N>" (digits only, no sign), else nullopt.
inline std::optional<std::size_t> qnn_result_index(std::string_view name) {
    constexpr std::string_view prefix = "Result_";
    if (!name.starts_with(prefix)) return std::nullopt;
    return selector_index(name.substr(prefix.size()));
}

} // namespace detail

inline std::filesystem::path choose_qnn_result_folder(const std::filesystem::path& path,
                                                     const std::optional<std::string>& selector,
                                                     std::vector<std::string>& notes) {
    std::map<std::size_t, std::string> results;
    std::error_code failure;
    for (std::filesystem::directory_iterator entry(path, failure), end; !failure && entry != end;
         entry.increment(failure)) {
        std::error_code type_failure;
        const std::string name = entry->path().filename().string();
        if (const auto index = detail::qnn_result_index(name); index && entry->is_directory(type_failure))
            results.emplace(*index, name);
    }
    if (failure)
        throw error(error_kind::io, "cannot list run '" + path.string() + "': " + failure.message(),
                    error_location::in_file(path.string()));
    if (results.empty()) {
        if (selector)
            throw error(error_kind::usage,
                        "run '" + path.string() + "#" + *selector + "': '" + path.string() +
                            "' has no Result_<N> folders to select from",
                        error_location::in_file(path.string()));
        return path;
    }
    if (selector) {
        const std::string wanted = selector->starts_with("Result_") ? *selector : "Result_" + *selector;
        const auto index = detail::qnn_result_index(wanted);
        if (!index || results.count(*index) == 0 || results.at(*index) != wanted) {
            std::string available;
            for (const auto& [_, name] : results) available += (available.empty() ? "" : ", ") + name;
            throw error(error_kind::usage,
                        "run '" + path.string() + "' has no folder '" + wanted + "' (it has " + available + ")",
                        error_location::in_file(path.string()));
        }
        return path / wanted;
    }
    const std::string& chosen = results.count(0) != 0 ? results.at(0) : results.begin()->second;
    if (results.size() > 1 || chosen != "Result_0")
        notes.push_back("'" + path.string() + "': read " + chosen + " of " + std::to_string(results.size()) +
                        " Result_<N> folders (select another with '#N')");
    return path / chosen;
}

} // namespace numgap::io
