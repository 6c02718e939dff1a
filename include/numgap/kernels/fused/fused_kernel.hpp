#pragma once
// accumulate_pair: the fused one-pass kernel. For n paired elements of
// reference r and target t, already in reference order, it adds to a
// pair_moments: count, sum (r-t)^2, sum |r-t|, max |r-t|, sum r^2, sum t^2,
// sum (r-t)(r+t); optionally per-side statistics and the closeness tier (see
// kernel_options.hpp). Each side is a kernel source (kernel_source.hpp):
// float32 or float64 in memory, or a narrow type widened to float32 in
// registers; accumulate_pair_block is the form for two float pointers and
// accumulate_runs for many pairs of short float32 runs read as one stream.
//
// Accuracy: sums run in T inside chunks of flush_interval elements, on
// lanes::accumulator_sets independent accumulator sets, and each chunk's
// partial sums are added into float64, and within a chunk too where it
// would give one lane more than 64 values (fewer lanes, or fewer sets with
// side statistics): no lane's float32 chain adds more than 64 values (a
// chunk's last few vectors aside). For float32 a partial sum then carries at
// most ~(64 + log2 width) ulps of float32 rounding, unbiased; across chunks
// the float64 sum adds ~1e-16, so the sums meet 1e-7 relative at n = 1e7 and
// over a few chunks alike (tests/kernels/fused/fused_kernel.cpp).
// A chunk whose float partials are not finite (overflow above ~1.8e19, or NaN
// and Inf inputs) is recomputed in float64, so overflow of float partials is
// never reported as Inf. max |r-t| is computed from |fl(r-t)|; rounding is
// monotone, so it equals the exact maximum rounded once to T.
// NaN: a plain max drops NaN; callers detect it through sum_abs_diff being
// NaN, which costs nothing per element (see metric headers).
// Per-side statistics (kernel_feature::side_statistics) are gathered in the
// same loop on every vector ISA: each side's plain sum, two vector additions
// per step on top of nine (its sum of squares is the moments' own; a chunk
// whose sum of squares is finite holds no NaN or Inf); with
// kernel_feature::side_min_max each side's min and max too, four more (a
// second loop over the chunk in L1 would cost the same operations, but no
// longer overlap with the memory reads once the pair is out of cache). They
// run on fewer accumulator sets so nothing spills: two with 32 registers, one
// with 16; the moments' float partials differ from the run without side
// statistics by rounding only. The scalar path runs side_chunk after the
// moments loop; see side_chunk.hpp. kernel_feature::side_counts alone (the
// NaN / +-Inf counts) adds nothing to the loop: the moments' own sums of
// squares tell which side of a chunk may hold a non-finite value, and only
// that side of that chunk is read again (count_non_finite), so the moments
// are bit for bit those of the run without it.
// A source may hand over several vectors at once (group_vectors, a
// load_group member: band_source.hpp's row_band_source makes four or
// sixteen columns of a transposed band from one set of row loads); the loop then takes that
// many vectors a step, on fewer accumulator sets (two with 32 registers, one
// with 16) so the group and the accumulators fit in registers.
//
// Complexity: O(n) time, O(1) space, no allocation; noexcept.
// The chunks of a call start at its first element, so a pair split into
// several calls at multiples of flush_interval gives the same sums.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include <numgap/core/config.hpp>
#include <numgap/kernels/constants.hpp>
#include <numgap/kernels/fused/kernel_options.hpp>
#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/kernels/fused/side_chunk.hpp>
#include <numgap/kernels/scalar_arch.hpp>
#include <numgap/kernels/source/kernel_source.hpp>
#include <numgap/kernels/source/scalar_math.hpp>
#include <numgap/kernels/source/simd_lanes.hpp>

namespace numgap::kernels {

namespace detail {

// Exact-as-float64 fallback for chunks whose float partial sums overflowed.
template <class T, class ReferenceSource, class TargetSource>
void moments_chunk_wide(const ReferenceSource& reference, const TargetSource& target, std::size_t n,
                        pair_moments& moments) noexcept {
    double sum_squared_diff = 0, sum_abs_diff = 0, max_abs_diff = 0, sum_squared_reference = 0,
           sum_squared_target = 0, sum_diff_times_sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const T r_value = reference.at(i), t_value = target.at(i);
        const double r = double(r_value), t = double(t_value);
        const double difference = r - t;
        // The max uses the difference rounded to T, as the vector path does.
        const double rounded_abs = magnitude(double(T(r_value - t_value)));
        sum_squared_diff += difference * difference;
        sum_abs_diff += magnitude(difference);
        max_abs_diff = rounded_abs > max_abs_diff ? rounded_abs : max_abs_diff;
        sum_squared_reference += r * r;
        sum_squared_target += t * t;
        sum_diff_times_sum += difference * (r + t);
    }
    moments.sum_squared_diff += sum_squared_diff;
    moments.sum_abs_diff += sum_abs_diff;
    moments.max_abs_diff = larger(moments.max_abs_diff, max_abs_diff);
    moments.sum_squared_reference += sum_squared_reference;
    moments.sum_squared_target += sum_squared_target;
    moments.sum_diff_times_sum += sum_diff_times_sum;
}

// Vectors a source hands over at once: Source::group_vectors through
// load_group(i, out), else one through load(i).
template <class Source>
constexpr std::size_t group_vectors_of() noexcept {
    if constexpr (requires { Source::group_vectors; }) return Source::group_vectors;
    else return 1;
}

// visit(std::integral_constant<int, I>{}) for I = 0 .. N-1: arrays of
// accumulators indexed only by such constants are kept in registers (see
// moments_chunk).
template <class Visit, int... I>
void visit_indices(Visit& visit, std::integer_sequence<int, I...>) {
    (visit(std::integral_constant<int, I>{}), ...);
}
template <int N, class Visit>
void for_each_index(Visit&& visit) {
    visit_indices(visit, std::make_integer_sequence<int, N>{});
}

// Whether each side's sum of squares over a chunk was finite: a side whose sum
// is finite holds no NaN or infinity there (side_counts looks no further).
struct chunk_finiteness {
    bool reference, target;
};

// One pair of sources and its length; a chunk may be several (accumulate_runs).
template <class ReferenceSource, class TargetSource>
struct run_segment {
    ReferenceSource reference;
    TargetSource target;
    std::size_t n;
};

// MinMax: with Sides, also each side's min and max. The chunk is `count`
// segments read one after the other into the same accumulators, at most
// flush_interval elements in all; with Sides it is one segment. ManyStreams:
// the chunk belongs to a walk over many arrays at once (accumulate_runs), so
// the prefetch also reaches farther, into the outer caches (below).
template <class Arch, class T, bool Sides, bool MinMax, bool ManyStreams = false, class ReferenceSource,
          class TargetSource>
chunk_finiteness moments_chunk(const run_segment<ReferenceSource, TargetSource>* segments, std::size_t count,
                               pair_moments& moments) noexcept {
    static_assert(Sides || !MinMax, "min and max are a part of the side statistics");
    NUMGAP_ASSERT(count == 1 || (!Sides && ManyStreams));
    using ops = lanes<Arch, T>;
    using batch = typename ops::batch;
    constexpr std::size_t width = ops::width;
    // Accumulator sets: as many as the registers hold without spilling (a
    // spilled accumulator is a store-to-load chain through L1 every step:
    // GCC 12 spilled one of AVX2's twelve and ran at 0.41x, Zen 3). 32
    // registers: four sets (two for float32 on AVX-512: simd_lanes.hpp), or two
    // with the side accumulators (at 11 or 15
    // operations a step the loop is bound by throughput, so two hide every
    // latency). 16 registers: two sets sharing one max accumulator (eleven),
    // or one set with the side accumulators (eight, or twelve with min and
    // max; latency-bound: two sets would need thirteen plus the temporaries,
    // and GCC 12 kept four of them on the stack). A grouped source's step
    // holds its group of vectors of both sides as well: two sets, or one.
    constexpr bool wide_register_file = ops::wide_register_file; // 32 registers (or scalar)
    constexpr std::size_t group_vectors = larger(group_vectors_of<ReferenceSource>(), group_vectors_of<TargetSource>());
    constexpr bool grouped = group_vectors > 1;
    constexpr int sets = (!Sides && !grouped) ? ops::accumulator_sets : wide_register_file ? 2 : 1;
    // One max accumulator for two sets: two max operations (1-4 cycles of
    // latency each) per iteration of ~5 cycles, so it costs no throughput and
    // frees the register that spilled.
    constexpr int max_sets = wide_register_file ? sets : 1;
    // One copy of the side accumulators serves every set, for the same reason.
    constexpr T infinity = std::numeric_limits<T>::infinity();
    [[maybe_unused]] batch side_sums[2] = {ops::splat(0), ops::splat(0)};
    [[maybe_unused]] batch side_min[2] = {ops::splat(infinity), ops::splat(infinity)};
    [[maybe_unused]] batch side_max[2] = {ops::splat(-infinity), ops::splat(-infinity)};
    // Nine vector operations per step. Not eight via sum (r-t)(r+t) =
    // 2 sum (r-t)r - sum (r-t)^2: for a pure scaling error the rounding of the
    // two sums no longer cancels in 1 - cosine (measured 10x the oracle's
    // error, tests/metric/cosine.cpp).
    struct accumulators {
        batch squared_diff, abs_diff, squared_reference, squared_target, diff_times_sum;
    };
    // Every access to the sets below names its set by a constant
    // (each_set): indexed by a loop variable, GCC 12 gave the accumulators a
    // home on the stack, zeroed there, loaded before and stored after every
    // group of the loop, and reloaded for the reduction (72 vector moves
    // around a 2^10-element call of ~300 cycles).
    const auto each_set = [](auto&& visit) { for_each_index<sets>(visit); };
    const auto each_side = [](auto&& visit) { for_each_index<2>(visit); };
    accumulators acc[sets];
    batch max_abs_diff[max_sets];
    each_set([&](auto s) {
        acc[s] = {ops::splat(0), ops::splat(0), ops::splat(0), ops::splat(0), ops::splat(0)};
        if constexpr (s < max_sets) max_abs_diff[s] = ops::splat(0);
    });

    const ReferenceSource* reference = &segments[0].reference; // the segment being read
    const TargetSource* target = &segments[0].target;
    auto step_on = [&](auto set, batch r, batch t) {
        accumulators& a = acc[set];
        batch& max_abs = max_abs_diff[set % max_sets];
        ops::pin(r);
        ops::pin(t);
        const batch difference = r - t;
        const batch abs_difference = ops::abs(difference);
        a.squared_diff = ops::fma(difference, difference, a.squared_diff);
        a.abs_diff = a.abs_diff + abs_difference;
        max_abs = ops::max(max_abs, abs_difference);
        a.squared_reference = ops::fma(r, r, a.squared_reference);
        a.squared_target = ops::fma(t, t, a.squared_target);
        a.diff_times_sum = ops::fma(difference, r + t, a.diff_times_sum);
        if constexpr (Sides) {
            side_sums[0] = side_sums[0] + r;
            side_sums[1] = side_sums[1] + t;
        }
        if constexpr (MinMax) {
            side_min[0] = ops::min(side_min[0], r);
            side_max[0] = ops::max(side_max[0], r);
            side_min[1] = ops::min(side_min[1], t);
            side_max[1] = ops::max(side_max[1], t);
        }
    };
    auto step = [&](auto set, std::size_t at) { step_on(set, reference->load(at), target->load(at)); };
    // A step's vectors of one side: a group, or `count` single loads.
    auto load_step = [](const auto& source, std::size_t at, batch(&out)[group_vectors]) {
        if constexpr (group_vectors_of<std::remove_cvref_t<decltype(source)>>() > 1) source.load_group(at, out);
        else for_each_index<int(group_vectors)>([&](auto v) { out[v] = source.load(at + std::size_t(v) * width); });
    };

    // Software prefetch a fixed distance ahead of both streams. The
    // hardware prefetcher alone leaves the fused loop's memory reads and its
    // arithmetic in series (time ~ read time + compute time): at 2^26
    // elements f32/f16 rose from ~80% to ~94% and f32/u8 from ~70% to ~90% of
    // the two-stream read ceiling; 256 to 2048 elements ahead all help, 512
    // was best (benchmarks/kernels.cpp). A walk over many arrays at once
    // (the rows of tensor-parallel shards, accumulate_runs) reads each in
    // bursts of one row, which the hardware prefetcher follows poorly: with
    // only this prefetch the memory time and the arithmetic added up again
    // (8 shards of 1024 columns at 2^26: 76-83% of the unsplit pair at
    // distances 512 to 8192, also into L2 alone). Prefetching 2048 elements
    // ahead into the outer caches as well, on both sides, overlaps them:
    // 102-112% of the unsplit pair in five rounds, 95-108% over far
    // distances of 1024-8192 (Zen 4). The unsplit pair keeps the single
    // prefetch (no gain measured in cache), and an L1 prefetch that far
    // evicts what the loop reads next.
    constexpr std::size_t prefetch_distance = fused_prefetch_distance;
    [[maybe_unused]] constexpr std::size_t far_prefetch_distance = 2048;
    // The side sums are flushed into float64 every side_flush elements, so
    // each lane's float chain adds at most 32 values (a chunk's 128 cost
    // ~1e-7 of std in the mean).
    constexpr std::size_t side_flush = width * 32;
    [[maybe_unused]] double side_sum[2] = {0, 0};
    // The moments' chains are bounded too: a chunk gives each lane
    // flush_interval / (width * sets) values: 64 on AVX-512 (32 lanes in
    // all), 128 with 16 lanes (AVX2, NEON without side statistics),
    // 256 with 8 (AVX2's and NEON's side tier, SSE2 without it) and 512 on
    // the scalar path. Over two or three chunks those errors do not average
    // out: at 256 sum |r-t| missed 1e-7 relative on NEON, at 128 sum (r-t)^2
    // on AVX2 (tests/kernels/fused/fused_kernel.cpp). So every lane's chain
    // is flushed into float64 after at most 64 values, counted across the
    // chunk's segments: a chunk of several segments (accumulate_runs) checks
    // inside each segment too, even where one chunk of a single segment
    // cannot exceed the bound (AVX-512 float32: 64 values a lane exactly),
    // since a segment's remainder vectors add to set 0 beyond its share
    // (without the check, 96 values after 63 runs of 16 elements).
    // A grouped step covers several rounds of the sets.
    constexpr std::size_t set_stride = width * sets;
    constexpr std::size_t stride = grouped ? width * larger(group_vectors, std::size_t(sets)) : set_stride;
    static_assert(stride % set_stride == 0 && side_flush % stride == 0);
    constexpr std::size_t moment_chain = 64;
    constexpr bool flushes_moments = ManyStreams || flush_interval / set_stride > moment_chain;
    constexpr std::size_t moment_flush = set_stride * moment_chain; // a multiple of side_flush and of stride
    [[maybe_unused]] double flushed[5] = {0, 0, 0, 0, 0};
    // Elements in the moments' chains since their last flush: a chunk of
    // several segments may give set 0 one value more per segment (its
    // remainder vectors), so the count decides, not the position.
    std::size_t since_flush = 0;
    [[maybe_unused]] auto flush_side_sums = [&] {
        each_side([&](auto k) {
            side_sum[k] += ops::sum(side_sums[k]);
            side_sums[k] = ops::splat(0);
        });
    };
    [[maybe_unused]] auto flush_moments = [&] {
        each_set([&](auto s) {
            flushed[0] += ops::sum(acc[s].squared_diff);
            flushed[1] += ops::sum(acc[s].abs_diff);
            flushed[2] += ops::sum(acc[s].squared_reference);
            flushed[3] += ops::sum(acc[s].squared_target);
            flushed[4] += ops::sum(acc[s].diff_times_sum);
            acc[s] = {ops::splat(0), ops::splat(0), ops::splat(0), ops::splat(0), ops::splat(0)};
        });
        since_flush = 0;
    };
    // Groups of side_flush (or moment_flush) elements: the flushes stay out
    // of the inner loop, whose registers are then all the accumulators' (a
    // flush inside it made GCC 12 spill the max accumulator on AVX2, 2x
    // slower). Without either flush one group of moment_flush (at least
    // flush_interval then) covers the chunk.
    constexpr std::size_t group = Sides ? side_flush : moment_flush;
    // The scalar tails (fewer than `width` elements a segment) in T, added
    // into float64 after each segment.
    T tail_squared_diff = 0, tail_abs_diff = 0, tail_max = 0, tail_squared_reference = 0, tail_squared_target = 0,
      tail_diff_times_sum = 0;
    double tails[5] = {0, 0, 0, 0, 0}, tails_max = 0;
    [[maybe_unused]] T tail_sum[2] = {0, 0}, tail_min[2] = {infinity, infinity},
                       tail_maximum[2] = {-infinity, -infinity};
    for (std::size_t segment = 0; segment < count; ++segment) {
        reference = &segments[segment].reference;
        target = &segments[segment].target;
        const std::size_t n = segments[segment].n;
        // Earlier segments may have filled the chains (their remainder
        // vectors add to set 0 on every ISA, whether or not it flushes
        // within a chunk).
        if (since_flush >= moment_flush) flush_moments();
        std::size_t i = 0;
        const std::size_t vector_end = n / stride * stride;
        while (i < vector_end) {
            const std::size_t group_start = i;
            const std::size_t group_end =
                smaller(vector_end, i + (flushes_moments ? smaller(group, moment_flush - since_flush) : group));
            for (; i < group_end; i += stride) {
                reference->prefetch(i + prefetch_distance, stride);
                target->prefetch(i + prefetch_distance, stride);
                if constexpr (ManyStreams) {
                    reference->prefetch_far(i + far_prefetch_distance, stride);
                    target->prefetch_far(i + far_prefetch_distance, stride);
                }
                // Unrolled so each set's accumulators are registers, not an array
                // indexed at run time (GCC 12 kept a loop over the sets rolled for
                // block sources: f32/int4-block AVX2 2.0x faster unrolled, Zen 3).
                if constexpr (grouped) {
                    batch r[group_vectors], t[group_vectors];
                    load_step(*reference, i, r);
                    load_step(*target, i, t);
                    for_each_index<int(group_vectors)>(
                        [&](auto v) { step_on(std::integral_constant<int, v % sets>{}, r[v], t[v]); });
                } else {
                    each_set([&](auto s) { step(s, i + std::size_t(s) * width); });
                }
            }
            if constexpr (Sides) flush_side_sums();
            since_flush += group_end - group_start;
            // Not at the chunk's very end: the reduction below does the same
            // (that flush cost evaluate_segments' chunks of many runs 3-10%).
            if constexpr (flushes_moments)
                if (since_flush == moment_flush && (i < n || segment + 1 < count)) flush_moments();
        }
        // Fewer than a step's vectors: one value each on set 0's lanes (a
        // grouped step's, up to group_vectors - 1, in turn on the sets, so a
        // chunk that never flushes still gives no chain more than 64),
        // counted as a whole stride so a flush at a later segment of the
        // chunk still bounds every set's chain.
        if constexpr (grouped) {
            for_each_index<int(group_vectors) - 1>([&](auto v) {
                if (i + width <= n) {
                    step(std::integral_constant<int, v % sets>{}, i);
                    i += width;
                    since_flush += stride;
                }
            });
        }
        for (; i + width <= n; i += width) {
            step(std::integral_constant<int, 0>{}, i);
            since_flush += stride;
        }
        for (; i < n; ++i) {
            const T r = reference->at(i), t = target->at(i);
            if constexpr (Sides) {
                tail_sum[0] += r;
                tail_sum[1] += t;
            }
            if constexpr (MinMax) {
                tail_min[0] = smaller(tail_min[0], r);
                tail_maximum[0] = larger(tail_maximum[0], r);
                tail_min[1] = smaller(tail_min[1], t);
                tail_maximum[1] = larger(tail_maximum[1], t);
            }
            const T difference = r - t;
            const T abs_difference = magnitude(difference);
            tail_squared_diff += keep_rounded(difference * difference);
            tail_abs_diff += abs_difference;
            tail_max = abs_difference > tail_max ? abs_difference : tail_max;
            tail_squared_reference += keep_rounded(r * r);
            tail_squared_target += keep_rounded(t * t);
            tail_diff_times_sum += keep_rounded(difference * (r + t));
        }
        tails[0] += double(tail_squared_diff);
        tails[1] += double(tail_abs_diff);
        tails[2] += double(tail_squared_reference);
        tails[3] += double(tail_squared_target);
        tails[4] += double(tail_diff_times_sum);
        tails_max = larger(tails_max, double(tail_max));
        tail_squared_diff = tail_abs_diff = tail_max = tail_squared_reference = tail_squared_target =
            tail_diff_times_sum = 0;
    }
    each_set([&](auto s) {
        if constexpr (s > 0) {
            acc[0].squared_diff = acc[0].squared_diff + acc[s].squared_diff;
            acc[0].abs_diff = acc[0].abs_diff + acc[s].abs_diff;
            acc[0].squared_reference = acc[0].squared_reference + acc[s].squared_reference;
            acc[0].squared_target = acc[0].squared_target + acc[s].squared_target;
            acc[0].diff_times_sum = acc[0].diff_times_sum + acc[s].diff_times_sum;
            if constexpr (s < max_sets) max_abs_diff[0] = ops::max(max_abs_diff[0], max_abs_diff[s]);
        }
    });
    const double squared_diff = flushed[0] + ops::sum(acc[0].squared_diff) + tails[0];
    const double abs_diff = flushed[1] + ops::sum(acc[0].abs_diff) + tails[1];
    const double squared_reference = flushed[2] + ops::sum(acc[0].squared_reference) + tails[2];
    const double squared_target = flushed[3] + ops::sum(acc[0].squared_target) + tails[3];
    const double diff_times_sum = flushed[4] + ops::sum(acc[0].diff_times_sum) + tails[4];
    const chunk_finiteness finite{squared_reference <= largest_finite<double>,
                                  squared_target <= largest_finite<double>};
    if constexpr (std::is_same_v<T, float>) {
        // float partials overflow near 1.8e19 per element; redo such chunks wide.
        constexpr double float_max = double(largest_finite<float>);
        if (!(magnitude(squared_diff) <= float_max && abs_diff <= float_max &&
              squared_reference <= float_max && squared_target <= float_max &&
              magnitude(diff_times_sum) <= float_max)) {
            for (std::size_t segment = 0; segment < count; ++segment)
                moments_chunk_wide<T>(segments[segment].reference, segments[segment].target, segments[segment].n,
                                      moments);
            if constexpr (Sides) {
                side_chunk<Arch, T>(segments[0].reference, segments[0].n, MinMax, moments.reference);
                side_chunk<Arch, T>(segments[0].target, segments[0].n, MinMax, moments.target);
            }
            return finite;
        }
    }
    if constexpr (Sides) {
        const double squares[2] = {squared_reference, squared_target};
        fused_side_sums sums[2];
        each_side([&](auto k) {
            sums[k] = {side_sum[k] + ops::sum(side_sums[k]) + double(tail_sum[k]), squares[k], MinMax, 0.0, 0.0};
            if constexpr (MinMax) {
                sums[k].min = smaller(double(ops::minimum(side_min[k])), double(tail_min[k]));
                sums[k].max = larger(double(ops::maximum(side_max[k])), double(tail_maximum[k]));
            }
        });
        add_fused_side<Arch, T>(segments[0].reference, segments[0].n, sums[0], moments.reference);
        add_fused_side<Arch, T>(segments[0].target, segments[0].n, sums[1], moments.target);
    }
    moments.sum_squared_diff += squared_diff;
    moments.sum_abs_diff += abs_diff;
    moments.sum_squared_reference += squared_reference;
    moments.sum_squared_target += squared_target;
    moments.sum_diff_times_sum += diff_times_sum;
    const double chunk_max = larger(double(ops::maximum(max_abs_diff[0])), tails_max);
    moments.max_abs_diff = larger(moments.max_abs_diff, chunk_max);
    return finite;
}

// The side_counts tier for one segment of a chunk: each side whose sum of
// squares over the chunk was not finite is read again for its counts.
template <class Arch, class T, class ReferenceSource, class TargetSource>
void count_where_not_finite(const run_segment<ReferenceSource, TargetSource>& segment, chunk_finiteness finite,
                            pair_moments& moments) noexcept {
    if (!finite.reference) count_non_finite<Arch, T>(segment.reference, segment.n, moments.reference);
    if (!finite.target) count_non_finite<Arch, T>(segment.target, segment.n, moments.target);
}

// max |r|, max |r-t| / max(|r|, tiny) and numpy's allclose mismatch count.
template <class Arch, class T, class ReferenceSource, class TargetSource>
void closeness_chunk(const ReferenceSource& reference, const TargetSource& target, std::size_t n,
                     const kernel_options& options, pair_moments& moments) noexcept {
    using ops = lanes<Arch, T>;
    using batch = typename ops::batch;
    constexpr std::size_t width = ops::width;
    const T tiny = smallest_normal<float>;
    const T atol = T(options.allclose_atol), rtol = T(options.allclose_rtol);
    const batch zero = ops::splat(0), one = ops::splat(1);
    batch max_reference = zero, max_relative = zero, not_close = zero;
    std::size_t i = 0;
    for (; i + width <= n; i += width) {
        const batch r = reference.load(i), t = target.load(i);
        const batch abs_reference = ops::abs(r);
        const batch abs_difference = ops::abs(r - t);
        max_reference = ops::max(max_reference, abs_reference);
        max_relative = ops::max(max_relative, abs_difference / ops::max(abs_reference, ops::splat(tiny)));
        // numpy: finite pairs are close when |t - r| <= atol + rtol*|r|; a
        // pair with an infinity is close only when equal (the bound would be
        // infinite too, so the finiteness test on r is needed).
        const auto close = ((abs_difference <= ops::fma(ops::splat(rtol), abs_reference, ops::splat(atol))) &&
                            (abs_reference <= ops::splat(largest_finite<T>))) ||
                           (r == t);
        not_close = not_close + ops::select(close, zero, one);
    }
    double chunk_max_reference = double(ops::maximum(max_reference));
    double chunk_max_relative = double(ops::maximum(max_relative));
    auto chunk_not_close = std::int64_t(ops::sum(not_close));
    for (; i < n; ++i) {
        const T r = reference.at(i), t = target.at(i);
        const T abs_reference = magnitude(r), abs_difference = magnitude(T(r - t));
        chunk_max_reference = larger(chunk_max_reference, double(abs_reference));
        chunk_max_relative = larger(chunk_max_relative,
                                    double(abs_difference / larger(abs_reference, tiny)));
        const bool close = (abs_difference <= rtol * abs_reference + atol &&
                            abs_reference <= largest_finite<T>) ||
                           r == t;
        chunk_not_close += close ? 0 : 1;
    }
    moments.max_abs_reference = larger(moments.max_abs_reference, chunk_max_reference);
    moments.max_relative_diff = larger(moments.max_relative_diff, chunk_max_relative);
    moments.not_close_count += chunk_not_close;
}

} // namespace detail

template <class Arch, class ReferenceSource, class TargetSource>
void accumulate_pair(Arch, const ReferenceSource& reference, const TargetSource& target, std::size_t n,
                     const kernel_options& options, pair_moments& moments) noexcept {
    using T = typename ReferenceSource::value_type;
    static_assert(std::is_same_v<T, typename TargetSource::value_type>,
                  "Both sides of the fused kernel are read as the same type.");
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                  "The fused kernel accumulates float32 or float64 values only.");
    const bool min_max = (options.features & kernel_feature::side_min_max) != 0;
    const bool statistics = min_max || (options.features & kernel_feature::side_statistics) != 0;
    const bool counts_only = !statistics && (options.features & kernel_feature::side_counts) != 0;
    for (std::size_t start = 0; start < n; start += flush_interval) {
        const std::size_t length = detail::smaller(flush_interval, n - start);
        const auto r = reference.advanced(start);
        const auto t = target.advanced(start);
        const detail::run_segment<decltype(r), decltype(t)> chunk{r, t, length};
        if (statistics) {
            if constexpr (detail::fuses_side_statistics<Arch, T>) {
                if (min_max) detail::moments_chunk<Arch, T, true, true>(&chunk, 1, moments);
                else detail::moments_chunk<Arch, T, true, false>(&chunk, 1, moments);
            } else {
                detail::moments_chunk<Arch, T, false, false>(&chunk, 1, moments);
                detail::side_chunk<Arch, T>(r, length, min_max, moments.reference);
                detail::side_chunk<Arch, T>(t, length, min_max, moments.target);
            }
        } else {
            const detail::chunk_finiteness finite = detail::moments_chunk<Arch, T, false, false>(&chunk, 1, moments);
            if (counts_only) detail::count_where_not_finite<Arch, T>(chunk, finite, moments);
        }
        if (options.features & kernel_feature::closeness)
            detail::closeness_chunk<Arch, T>(r, t, length, options, moments);
    }
    moments.count += std::int64_t(n);
}

template <class Arch, class T>
void accumulate_pair_block(Arch arch, const T* reference, const T* target, std::size_t n,
                           const kernel_options& options, pair_moments& moments) noexcept {
    accumulate_pair(arch, detail::pointer_source<Arch, T>{reference}, detail::pointer_source<Arch, T>{target}, n,
                    options, moments);
}

// accumulate_runs: `count` pairs of float32 arrays (references[k], targets[k],
// lengths[k] elements each) as one stream, for callers with many short runs
// (the rows of tensor-parallel shards, metric/evaluate_segments.hpp): runs are
// gathered into chunks of at most flush_interval elements (a longer run is
// cut), one moments_chunk each, so a short run costs no accumulator set-up
// and reduction of its own (~45-70 ns a call in cache, more out of it). The
// sums are the fused kernel's, chunked differently (same bounds). Side
// statistics and the closeness tier re-read a chunk on their careful paths,
// so with either each run is accumulate_pair's on its own; side_counts alone
// re-reads only the segments of a chunk whose side was not finite.
template <class Arch>
void accumulate_runs(Arch arch, const float* const* references, const float* const* targets, const std::size_t* lengths,
                     std::size_t count, const kernel_options& options, pair_moments& moments) noexcept {
    if (options.features != kernel_feature::moments && options.features != kernel_feature::side_counts) {
        for (std::size_t k = 0; k < count; ++k)
            accumulate_pair_block(arch, references[k], targets[k], lengths[k], options, moments);
        return;
    }
    const bool counts_only = options.features == kernel_feature::side_counts;
    using source = detail::pointer_source<Arch, float>;
    constexpr std::size_t most_segments = 64;
    detail::run_segment<source, source> chunk[most_segments];
    std::size_t segments = 0, filled = 0;
    const auto finish_chunk = [&] {
        if (segments != 0) {
            const detail::chunk_finiteness finite =
                detail::moments_chunk<Arch, float, false, false, true>(chunk, segments, moments);
            for (std::size_t s = 0; counts_only && s < segments; ++s)
                detail::count_where_not_finite<Arch, float>(chunk[s], finite, moments);
        }
        segments = 0;
        filled = 0;
    };
    for (std::size_t k = 0; k < count; ++k) {
        for (std::size_t start = 0; start < lengths[k];) {
            const std::size_t length = detail::smaller(flush_interval - filled, lengths[k] - start);
            chunk[segments++] = {source{references[k] + start}, source{targets[k] + start}, length};
            filled += length;
            start += length;
            if (filled == flush_interval || segments == most_segments) finish_chunk();
        }
        moments.count += std::int64_t(lengths[k]);
    }
    finish_chunk();
}

} // namespace numgap::kernels
