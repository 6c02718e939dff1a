#pragma once
// side_moments: the per-side statistics accumulator (one tensor of a pair):
// counts of finite values, NaN, +Inf and -Inf, and min, max, mean and the sum
// of squared deviations (M2) of the finite values.
// Why M2 and not a sum of squares: sum-of-squares variance cancels
// catastrophically when |mean| >> std; chunks are merged with Chan et al.'s
// pairwise update, which stays accurate. Complexity: O(1) merge. Throws: nothing.
#include <cstdint>
#include <limits>

#include <numgap/core/isa_namespace.hpp>

namespace numgap::kernels {

struct side_moments {
    std::int64_t finite_count = 0;
    std::int64_t nan_count = 0;
    std::int64_t positive_inf_count = 0;
    std::int64_t negative_inf_count = 0;
    double min = std::numeric_limits<double>::infinity();
    double max = -std::numeric_limits<double>::infinity();
    double mean = 0.0;
    double m2 = 0.0;

    // User-provided, so GCC 12 stores the members with vector moves: as an
    // aggregate, a pair_moments holding two of these was cleared with
    // `rep stosq` (18 ns per evaluate() call on AMD Zen 5, 8% of it at 2^10).
    // Only baseline code constructs one: nothing under kernels/dispatch/ may
    // (the dispatch_odr test).
    side_moments() noexcept {}

    // Adds a chunk summarised as (count, mean, M2) of its finite values.
    void add_finite(std::int64_t count, double chunk_mean, double chunk_m2) noexcept;

    void merge(const side_moments& other) noexcept;
};

namespace detail {
// The chunk merge itself, per instruction set (core/isa_namespace.hpp): the
// fused kernel calls it from the dispatch units, baseline code through the
// member functions.
inline namespace NUMGAP_ISA_NAMESPACE {
inline void add_finite(side_moments& side, std::int64_t count, double chunk_mean, double chunk_m2) noexcept {
    if (count == 0) return;
    if (side.finite_count == 0) {
        // The first chunk (a small tensor's only one): the update below with
        // nothing before it, without its two divisions (+ 0.0 as there: -0 is
        // 0), and without its 0 * delta^2, NaN once delta^2 overflows.
        side.mean = chunk_mean + 0.0;
        side.m2 = chunk_m2 + 0.0;
        side.finite_count = count;
        return;
    }
    const double total = double(side.finite_count + count);
    const double delta = chunk_mean - side.mean;
    const double weight = double(count) / total;
    // Means of opposite signs near the largest float64 overflow delta; the
    // weighted sum of the two then gives the mean (and M2 is +Inf below).
    side.mean = delta - delta == 0 ? side.mean + delta * weight : side.mean * (1 - weight) + chunk_mean * weight;
    side.m2 += chunk_m2 + delta * delta * (double(side.finite_count) * double(count) / total);
    side.finite_count += count;
}
} // namespace NUMGAP_ISA_NAMESPACE
} // namespace detail

inline void side_moments::add_finite(std::int64_t count, double chunk_mean, double chunk_m2) noexcept {
    detail::add_finite(*this, count, chunk_mean, chunk_m2);
}

inline void side_moments::merge(const side_moments& other) noexcept {
    nan_count += other.nan_count;
    positive_inf_count += other.positive_inf_count;
    negative_inf_count += other.negative_inf_count;
    min = other.min < min ? other.min : min;
    max = other.max > max ? other.max : max;
    detail::add_finite(*this, other.finite_count, other.mean, other.m2);
}

} // namespace numgap::kernels
