#pragma once
// evaluation: everything evaluate() found for one tensor pair: each metric's
// result in the order requested, per-side statistics, the element count.
// passed() is true when every metric passed (NaN always fails).
// metrics is a small_vector (core/small_vector.hpp): a range of
// metric_result like a std::vector, holding up to inline_metric_results of
// them without a heap block; std::vector(r.metrics.begin(), r.metrics.end())
// makes a std::vector of them.
// Complexity: find and passed O(metrics). Throws: nothing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <numgap/core/small_vector.hpp>
#include <numgap/metric/metric_result.hpp>
#include <numgap/metric/side_stats.hpp>

namespace numgap {

// Results of up to this many metrics are kept inside the evaluation: a call
// on a usual metric set allocates nothing (see evaluate.hpp).
inline constexpr std::size_t inline_metric_results = 8;

struct evaluation {
    small_vector<metric_result, inline_metric_results> metrics;
    side_stats reference{};
    side_stats target{};
    std::int64_t count = 0;

    // User-provided, so GCC 12 initialises the members with vector moves
    // (as an aggregate it cleared the object with `rep stosq` first: 17 ns
    // per evaluate() call on AMD Zen 5).
    evaluation() noexcept {}

    bool passed() const noexcept {
        for (const metric_result& result : metrics)
            if (!result.passed) return false;
        return true;
    }
    const metric_result* find(std::string_view name) const noexcept {
        for (const metric_result& result : metrics)
            if (result.name == name) return &result;
        return nullptr;
    }
};

} // namespace numgap
