#pragma once
// The per-side statistics of one chunk (side_moments.hpp) of the fused
// kernel (fused_kernel.hpp), in three forms.
//   side_chunk: on its own, two passes over a chunk that is in L1: counts of
//     NaN / +-Inf, min and max of the finite values, and their mean and M2
//     from sums shifted by the chunk's first finite value (accurate whatever
//     mean / std); float64 values so large that even those sums overflow get
//     their mean from a scaled sum and M2 = +Inf. The scalar path runs it
//     after the moments loop.
//   add_fused_side: on every vector ISA (fuses_side_statistics) the moments
//     loop itself gathers each side's plain sum (its sum of squares is the
//     moments' own), two more vector operations (eleven in all) instead of
//     ~twenty more. A chunk is summarised from those when every value is
//     finite (the sum of squares is finite) and mean^2 <= variance / 4
//     (M2 = sum x^2 - (sum x)^2 / n cancels as the offset grows: there std
//     stays within ~6e-8 relative, tests/kernels/fused_kernel.cpp). An
//     offset chunk re-reads only its sums, shifted by the rounded mean (one
//     pass of three operations); a chunk holding a non-finite value, or whose
//     shifted sums overflow, takes side_chunk. min and max, when asked for,
//     are gathered in the same loop (four more operations).
//   count_non_finite: the NaN / +-Inf counts alone (kernel_feature::
//     side_counts), for a chunk whose sum of squares was not finite.
// Complexity: O(n) per chunk, no allocation. Throws: nothing.
#include <cstddef>
#include <cstdint>
#include <limits>

#include <numgap/kernels/fused/side_moments.hpp>
#include <numgap/kernels/source/scalar_math.hpp>
#include <numgap/kernels/source/simd_lanes.hpp>

namespace numgap::kernels::detail {

// Per-side statistics of one chunk, on its own: two passes over data in L1.
// min_max: whether side.min / side.max take the chunk's (else they are left).
template <class Arch, class T, class Source>
void side_chunk(const Source& values, std::size_t n, bool min_max, side_moments& side) noexcept {
    using ops = lanes<Arch, T>;
    using batch = typename ops::batch;
    constexpr std::size_t width = ops::width;
    constexpr T largest = largest_finite<T>;
    constexpr T infinity = std::numeric_limits<T>::infinity();
    const batch zero = ops::splat(0), one = ops::splat(1);
    batch minimum = ops::splat(infinity), maximum = ops::splat(-infinity);
    batch finite_count = zero, nan_count = zero, positive_inf_count = zero;
    // Shift by the chunk's first finite value so the sums are of small
    // deviations; the exact mean and M2 follow from the two shifted sums.
    // Each lane sums at most steps_per_flush deviations in T before they are
    // added into float64: a chunk's 2048 elements on one chain would cost
    // ~1e-6 relative in std on narrow vectors (NEON, scalar).
    T shift = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (magnitude(values.at(i)) <= largest) {
            shift = values.at(i);
            break;
        }
    const batch shift_batch = ops::splat(shift);
    constexpr std::size_t steps_per_flush = 32;
    double sum = 0, squares = 0;
    std::size_t i = 0;
    while (i + width <= n) {
        batch shift_sum = zero, shift_squares = zero;
        for (std::size_t step = 0; step < steps_per_flush && i + width <= n; ++step, i += width) {
            const batch x = values.load(i);
            const auto finite = ops::abs(x) <= ops::splat(largest);
            minimum = ops::min(minimum, ops::select(finite, x, ops::splat(infinity)));
            maximum = ops::max(maximum, ops::select(finite, x, ops::splat(-infinity)));
            finite_count = finite_count + ops::select(finite, one, zero);
            nan_count = nan_count + ops::select(ops::is_nan(x), one, zero);
            positive_inf_count = positive_inf_count + ops::select(x == ops::splat(infinity), one, zero);
            const batch deviation = ops::select(finite, x - shift_batch, zero);
            shift_sum = shift_sum + deviation;
            shift_squares = ops::fma(deviation, deviation, shift_squares);
        }
        sum += ops::sum(shift_sum);
        squares += ops::sum(shift_squares);
    }
    double chunk_min = double(ops::minimum(minimum)), chunk_max = double(ops::maximum(maximum));
    // Counts per lane stay below 2^24, so float lanes hold them exactly.
    auto chunk_finite = std::int64_t(ops::sum(finite_count));
    auto chunk_nan = std::int64_t(ops::sum(nan_count));
    auto chunk_positive_inf = std::int64_t(ops::sum(positive_inf_count));
    // The scalar path has no tail (width 1); skipping it spares GCC a bogus
    // -Waggressive-loop-optimizations on the dead loop.
    if constexpr (width > 1) for (; i < n; ++i) {
        const T x = values.at(i);
        if (magnitude(x) <= largest) {
            chunk_min = smaller(chunk_min, double(x));
            chunk_max = larger(chunk_max, double(x));
            ++chunk_finite;
            const double deviation = double(T(x - shift));
            sum += deviation;
            squares += deviation * deviation;
        } else if (is_nan(x)) {
            ++chunk_nan;
        } else if (x > 0) {
            ++chunk_positive_inf;
        }
    }
    if (!(magnitude(sum) <= double(largest) && squares <= double(largest))) {
        sum = 0;
        squares = 0;
        for (std::size_t j = 0; j < n; ++j)
            if (magnitude(values.at(j)) <= largest) {
                const double deviation = double(values.at(j)) - double(shift);
                sum += deviation;
                squares += deviation * deviation;
            }
    }
    side.nan_count += chunk_nan;
    side.positive_inf_count += chunk_positive_inf;
    side.negative_inf_count += std::int64_t(n) - chunk_finite - chunk_nan - chunk_positive_inf;
    if (min_max) {
        side.min = smaller(side.min, chunk_min);
        side.max = larger(side.max, chunk_max);
    }
    if (chunk_finite > 0 && !(magnitude(sum) <= largest_finite<double>)) {
        // float64 values near the largest finite, of both signs: even their
        // deviations from the shift overflow a double sum. The mean then
        // comes from the values scaled by a power of two no larger than
        // 1 / count, so that no partial sum can overflow (the scaling is
        // exact but for subnormals, which cannot matter next to such a sum);
        // M2 is +Inf as the squared deviations are. Plain arithmetic, no
        // library call: this header is compiled once per instruction set.
        double scale = 1;
        for (std::int64_t covered = 1; covered <= chunk_finite; covered *= 2) scale *= 0.5;
        double scaled = 0;
        for (std::size_t j = 0; j < n; ++j)
            if (magnitude(values.at(j)) <= largest) scaled += double(values.at(j)) * scale;
        constexpr double infinite_m2 = std::numeric_limits<double>::infinity();
        add_finite(side, chunk_finite, scaled / double(chunk_finite) / scale, infinite_m2);
    } else if (chunk_finite > 0) {
        const double mean_offset = sum / double(chunk_finite);
        // The squared deviations (float64 sides spread over ~1e152 and
        // more) overflow: M2 is then +Inf (so is std), not inf - inf
        // clamped to 0.
        const double m2 = squares <= largest_finite<double> ? larger(0.0, squares - sum * mean_offset) : squares;
        add_finite(side, chunk_finite, double(shift) + mean_offset, m2);
    }
}

// The NaN, +Inf and -Inf counts of one chunk and nothing else: the side_counts
// tier, for a chunk whose sum of squares was not finite (only such a chunk
// can hold a non-finite value; a finite one too large to square lands here as
// well and counts nothing). Counts per lane stay below 2^24 (a chunk has at
// most flush_interval elements), so float lanes hold them exactly.
template <class Arch, class T, class Source>
void count_non_finite(const Source& values, std::size_t n, side_moments& side) noexcept {
    using ops = lanes<Arch, T>;
    using batch = typename ops::batch;
    constexpr std::size_t width = ops::width;
    constexpr T infinity = std::numeric_limits<T>::infinity();
    const batch zero = ops::splat(0), one = ops::splat(1);
    batch nan_count = zero, positive_inf_count = zero, negative_inf_count = zero;
    std::size_t i = 0;
    for (; i + width <= n; i += width) {
        const batch x = values.load(i);
        nan_count = nan_count + ops::select(ops::is_nan(x), one, zero);
        positive_inf_count = positive_inf_count + ops::select(x == ops::splat(infinity), one, zero);
        negative_inf_count = negative_inf_count + ops::select(x == ops::splat(-infinity), one, zero);
    }
    auto chunk_nan = std::int64_t(ops::sum(nan_count));
    auto chunk_positive_inf = std::int64_t(ops::sum(positive_inf_count));
    auto chunk_negative_inf = std::int64_t(ops::sum(negative_inf_count));
    if constexpr (width > 1) // as in side_chunk: the scalar path has no tail
        for (; i < n; ++i) {
            const T x = values.at(i);
            chunk_nan += is_nan(x) ? 1 : 0;
            chunk_positive_inf += x == infinity ? 1 : 0;
            chunk_negative_inf += x == -infinity ? 1 : 0;
        }
    side.nan_count += chunk_nan;
    side.positive_inf_count += chunk_positive_inf;
    side.negative_inf_count += chunk_negative_inf;
}

// Whether the moments loop gathers the side sums: every vector ISA (two more
// live vectors, six with min and max; 16-register ISAs make room by running
// one accumulator set).
// The scalar path keeps side_chunk.
template <class Arch, class T>
inline constexpr bool fuses_side_statistics = lanes<Arch, T>::width > 1;

// What the moments loop gathered for one side of a chunk (min and max only
// when has_min_max). A trivial aggregate on purpose: default member
// initialisers would give it a constructor that -O0 emits out of line, one
// copy per dispatch unit with that unit's instructions, shared with baseline
// code (caught by the dispatch_odr test).
struct fused_side_sums {
    double sum, sum_squares;
    bool has_min_max;
    double min, max;
};

// Sum and sum of squares of values - shift over a chunk of finite values,
// each lane's float chain flushed into float64 every 32 steps.
template <class Arch, class T, class Source>
void shifted_sums(const Source& values, std::size_t n, T shift, double& sum, double& squares) noexcept {
    using ops = lanes<Arch, T>;
    using batch = typename ops::batch;
    constexpr std::size_t width = ops::width;
    const batch shift_batch = ops::splat(shift);
    std::size_t i = 0;
    while (i + width <= n) {
        batch shifted_sum = ops::splat(0), shifted_squares = ops::splat(0);
        for (std::size_t step = 0; step < 32 && i + width <= n; ++step, i += width) {
            const batch deviation = values.load(i) - shift_batch;
            shifted_sum = shifted_sum + deviation;
            shifted_squares = ops::fma(deviation, deviation, shifted_squares);
        }
        sum += ops::sum(shifted_sum);
        squares += ops::sum(shifted_squares);
    }
    if constexpr (width > 1)
        for (; i < n; ++i) {
            const double deviation = double(T(values.at(i) - shift));
            sum += deviation;
            squares += deviation * deviation;
        }
}

template <class Arch, class T, class Source>
void add_fused_side(const Source& values, std::size_t n, const fused_side_sums& sums, side_moments& side) noexcept {
    constexpr double largest = double(largest_finite<T>);
    if (n == 0) return;
    if (!(sums.sum_squares <= largest)) return side_chunk<Arch, T>(values, n, sums.has_min_max, side);
    const double count = double(n);
    double mean = sums.sum / count;
    double m2 = sums.sum_squares - sums.sum * mean;
    if (!(5.0 * m2 >= 4.0 * sums.sum_squares)) {
        const T shift = T(mean);
        double sum = 0, squares = 0;
        shifted_sums<Arch, T>(values, n, shift, sum, squares);
        if (!(magnitude(sum) <= largest && squares <= largest))
            return side_chunk<Arch, T>(values, n, sums.has_min_max, side);
        const double mean_offset = sum / count;
        mean = double(shift) + mean_offset;
        m2 = larger(0.0, squares - sum * mean_offset);
    }
    if (sums.has_min_max) {
        side.min = smaller(side.min, sums.min);
        side.max = larger(side.max, sums.max);
    }
    add_finite(side, std::int64_t(n), mean, m2);
}

} // namespace numgap::kernels::detail
