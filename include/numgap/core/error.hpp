#pragma once
// numgap::error: the one exception type numgap throws for bad data. what() is
// the sentence a person reads (it names the file, tensor or node and the
// reason); kind() and where() are what a program acts on without parsing
// English, and the report's error rows carry both.
//
// Kinds (pick the first that fits):
//   io      the operating system refused: a file is missing, unreadable,
//           outside its run, or a write or mapping failed;
//   format  the bytes are not what the format says: bad magic, truncated
//           file, malformed JSON or .npy header, corrupt archive member;
//   schema  well-formed, but the content is wrong: a missing or mistyped
//           key in graph.json, a duplicate name, an inconsistent index;
//   shape   shapes or element counts disagree or are impossible;
//   dtype   an unknown, unsupported or incompatible element type;
//   graph   the graph itself is invalid: a cycle, a dangling producer,
//           a node index out of range, an inconsistent match;
//   limit   a size or resource bound was hit: a decompression bomb, an
//           absurd declared size, nesting too deep, memory exhausted;
//   usage   the caller asked for something impossible: an unknown metric
//           name, a bad option value, k out of range;
//   other   errors made by user code through the message-only constructor
//           (numgap itself always names a kind).
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace numgap {

enum class error_kind : unsigned char { io, format, schema, shape, dtype, graph, limit, usage, other };

constexpr std::string_view name_of(error_kind kind) noexcept {
    switch (kind) {
    case error_kind::io: return "io";
    case error_kind::format: return "format";
    case error_kind::schema: return "schema";
    case error_kind::shape: return "shape";
    case error_kind::dtype: return "dtype";
    case error_kind::graph: return "graph";
    case error_kind::limit: return "limit";
    case error_kind::usage: return "usage";
    case error_kind::other: return "other";
    }
    return "other";
}

// Where an error happened, as far as the thrower knows; every part is
// optional. `item` is the key, tensor or node name (or a JSON path such as
// `nodes[3].outputs`); offset is a byte offset into `file`; line and column
// are 1-based positions in a text file.
struct error_location {
    static constexpr std::uint64_t no_offset = std::numeric_limits<std::uint64_t>::max();

    std::string file;
    std::string item;
    std::uint64_t offset = no_offset;
    std::uint32_t line = 0;   // 0: unknown
    std::uint32_t column = 0; // 0: unknown

    bool has_offset() const noexcept { return offset != no_offset; }
    bool empty() const noexcept { return file.empty() && item.empty() && !has_offset() && line == 0; }

    // Convenience builders, so throw sites read as one line.
    static error_location in_file(std::string file) { return error_location{std::move(file), {}}; }
    static error_location at_item(std::string file, std::string item) {
        return error_location{std::move(file), std::move(item)};
    }
    static error_location at_offset(std::string file, std::uint64_t offset, std::string item = {}) {
        return error_location{std::move(file), std::move(item), offset};
    }
    static error_location at_line(std::string file, std::uint32_t line, std::uint32_t column, std::string item = {}) {
        return error_location{std::move(file), std::move(item), no_offset, line, column};
    }
    static error_location of_item(std::string item) { return error_location{{}, std::move(item)}; }
};

class error : public std::runtime_error {
public:
    error(error_kind kind, const std::string& message, error_location where = {})
        : std::runtime_error(message), kind_(kind), where_(std::move(where)) {}

    // For user code (custom metrics, graph adapters): kind() is `other`.
    explicit error(const std::string& message) : std::runtime_error(message) {}

    error_kind kind() const noexcept { return kind_; }
    const error_location& where() const noexcept { return where_; }

private:
    error_kind kind_ = error_kind::other;
    error_location where_;
};

} // namespace numgap
