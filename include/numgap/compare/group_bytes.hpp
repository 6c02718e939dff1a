#pragma once
// estimate_group_bytes: how many tensor bytes each match group will read, on
// both sides, known without reading any tensor data — the weights
// plan_shards (shard_plan.hpp) balances `numgap compare --shard I/N` by.
//
// A tensor's bytes are its element count (io::run_directory::stored_shape:
// graph.json's shape, else the file's header) times the size of its dtype
// when graph.json states one, else 4 (float32, the common dump). A tensor
// whose shape is not known that cheaply, or that the run does not hold,
// counts 0. It is an estimate for balancing, not a promise: every machine
// computes the same one from the same files, which is what the plan needs.
// Complexity: O(groups) plus one small header read per tensor without a
// declared shape (run_directory::stored_shape).
// Throws: std::bad_alloc; never for a bad file (load reports it later).
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include <numgap/core/dtype.hpp>
#include <numgap/io/run_directory.hpp>
#include <numgap/match/match_result.hpp>

namespace numgap {

namespace detail {
// Estimates saturate here: partial reports store them as JSON integers (int64).
inline constexpr auto most_bytes = std::uint64_t(std::numeric_limits<std::int64_t>::max());
} // namespace detail

inline std::uint64_t estimate_tensor_bytes(const io::run_directory& run, std::string_view key) {
    const std::optional<std::vector<std::int64_t>> shape = run.stored_shape(key);
    if (!shape) return 0;
    const io::tensor_spec* spec = run.find_tensor(key);
    const dtype type = spec && spec->type ? *spec->type : dtype::float32;
    constexpr std::uint64_t most = detail::most_bytes;
    std::uint64_t count = 1;
    for (std::int64_t dimension : *shape) {
        if (dimension <= 0) return 0;
        // Saturating: a hostile header must not wrap the estimate around.
        if (count > most / 8 / std::uint64_t(dimension)) return most;
        count *= std::uint64_t(dimension);
    }
    return storage_bytes(type, count); // count < 2^61: at most 8 bytes an element fits
}

inline std::vector<std::uint64_t> estimate_group_bytes(const match_result& matches, const io::run_directory& reference,
                                                       const io::run_directory& target) {
    std::vector<std::uint64_t> bytes;
    bytes.reserve(matches.groups.size());
    for (const match_group& group : matches.groups) {
        const std::uint64_t reference_bytes =
            group.reference_tensor.empty() ? 0 : estimate_tensor_bytes(reference, group.reference_tensor);
        const std::uint64_t target_bytes =
            group.target_tensor.empty() ? 0 : estimate_tensor_bytes(target, group.target_tensor);
        bytes.push_back(reference_bytes > detail::most_bytes - target_bytes
                            ? detail::most_bytes
                            : reference_bytes + target_bytes);
    }
    return bytes;
}

} // namespace numgap
