#pragma once
// numgap::io::parse_mapping / read_mapping_file: an explicit reference ->
// target node mapping (match_options::explicit_mapping) from a file the user
// writes by hand.
//
// Two formats, chosen by the first non-blank character ('{' means JSON):
//   JSON: an object {"ref_node": "target_node", "ref2": ["t_a", "t_b"]}; an
//         array value maps one reference node to several target nodes (one
//         group, e.g. a decomposed op); an empty array is an error.
//   CSV:  two columns per line, reference then target (RFC 4180 quoting for
//         names holding ',' or '"'); blank lines are skipped; a first line
//         whose two cells are a header ("reference,target", "ref,target",
//         "ref_node,target_node", any case) is skipped. A reference node on
//         several lines maps to all of their targets.
// Pairs come out in file order; repeated pairs are kept (match_explicit
// unites them). Errors name the file and the line (CSV) or line:column and
// key (JSON), and say what was expected; where() holds the same file, line
// (and column) and key. Kinds: io when the file cannot be read, format for a
// malformed CSV line, schema for content that is not a mapping.
// Complexity: O(text). Throws: numgap::error; std::bad_alloc.
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/io/json.hpp>

namespace numgap::io {

using node_mapping = std::vector<std::pair<std::string, std::string>>;

namespace detail {

inline node_mapping parse_json_mapping(std::string_view text, std::string_view source) {
    const json_value root = parse_json(text, source);
    const auto where = [&](const json_value& value) {
        return std::string(source) + ":" + std::to_string(value.line()) + ":" + std::to_string(value.column()) + ": ";
    };
    const auto at = [&](const json_value& value, const std::string& key) {
        return error_location::at_line(std::string(source), std::uint32_t(value.line()), std::uint32_t(value.column()),
                                       key);
    };
    if (!root.is_object())
        throw error(error_kind::schema,
                    where(root) + "a mapping must be a JSON object {\"reference node\": \"target node\", ...}",
                    at(root, {}));
    node_mapping mapping;
    for (const json_member& member : root.as_object()) {
        const json_value& value = member.value;
        if (value.is_string()) {
            mapping.emplace_back(member.key, value.as_string());
            continue;
        }
        if (!value.is_array())
            throw error(error_kind::schema,
                        where(value) + "key \"" + member.key + "\": expected a target node name or an array of them",
                        at(value, member.key));
        if (value.as_array().empty())
            throw error(error_kind::schema,
                        where(value) + "key \"" + member.key + "\": the array of target nodes is empty",
                        at(value, member.key));
        for (const json_value& item : value.as_array()) {
            if (!item.is_string())
                throw error(error_kind::schema,
                            where(item) + "key \"" + member.key + "\": every target node must be a string",
                            at(item, member.key));
            mapping.emplace_back(member.key, item.as_string());
        }
    }
    return mapping;
}

// The cells of one CSV line (RFC 4180 quoting); `line_number` for errors.
inline std::vector<std::string> csv_cells(std::string_view line, std::string_view source, std::size_t line_number) {
    std::vector<std::string> cells(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                cells.back() += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                cells.back() += c;
            }
        } else if (c == '"' && cells.back().empty()) {
            quoted = true;
        } else if (c == ',') {
            cells.emplace_back();
        } else {
            cells.back() += c;
        }
    }
    if (quoted)
        throw error(error_kind::format,
                    std::string(source) + ":" + std::to_string(line_number) + ": a quoted name is not closed",
                    error_location::at_line(std::string(source), std::uint32_t(line_number), 0));
    return cells;
}

inline bool is_header_cell(std::string text, bool reference_side) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return reference_side ? text == "reference" || text == "ref" || text == "ref_node" || text == "reference_node"
                          : text == "target" || text == "tgt" || text == "target_node";
}

inline node_mapping parse_csv_mapping(std::string_view text, std::string_view source) {
    node_mapping mapping;
    std::size_t line_number = 0, start = 0;
    bool first_content_line = true;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        start = end + 1;
        ++line_number;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
        const std::vector<std::string> cells = csv_cells(line, source, line_number);
        if (cells.size() != 2)
            throw error(error_kind::format,
                        std::string(source) + ":" + std::to_string(line_number) +
                            ": expected two columns, reference node and target node, found " +
                            std::to_string(cells.size()),
                        error_location::at_line(std::string(source), std::uint32_t(line_number), 0));
        const bool header = first_content_line && is_header_cell(cells[0], true) && is_header_cell(cells[1], false);
        first_content_line = false;
        if (header) continue;
        if (cells[0].empty() || cells[1].empty())
            throw error(error_kind::schema,
                        std::string(source) + ":" + std::to_string(line_number) + ": the " +
                            (cells[0].empty() ? "reference" : "target") + " node name is empty",
                        error_location::at_line(std::string(source), std::uint32_t(line_number), 0));
        mapping.emplace_back(cells[0], cells[1]);
    }
    return mapping;
}

} // namespace detail

// The mapping in `text`; `source` names it in errors.
inline node_mapping parse_mapping(std::string_view text, std::string_view source) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && text[first] == '{') return detail::parse_json_mapping(text, source);
    return detail::parse_csv_mapping(text, source);
}

inline node_mapping read_mapping_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw error(error_kind::io, "cannot read the mapping file '" + path.string() + "'",
                    error_location::in_file(path.string()));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad())
        throw error(error_kind::io, "reading the mapping file '" + path.string() + "' failed",
                    error_location::in_file(path.string()));
    node_mapping mapping = parse_mapping(text.str(), path.string());
    if (mapping.empty())
        throw error(error_kind::schema, "the mapping file '" + path.string() + "' maps no node",
                    error_location::in_file(path.string()));
    return mapping;
}

} // namespace numgap::io
