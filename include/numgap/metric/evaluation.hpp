#pragma once
// evaluation: everything evaluate() found for one tensor pair: each metric's
// result in the order requested, per-side statistics, the element count.
// passed() is true when every metric passed (NaN always fails).
// Complexity: find and passed O(metrics). Throws: nothing.
#include <cstdint>
#include <string_view>
#include <vector>

#include <numgap/metric/metric_result.hpp>
#include <numgap/metric/side_stats.hpp>

namespace numgap {

struct evaluation {
    std::vector<metric_result> metrics;
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
