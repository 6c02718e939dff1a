// Fused metric kernel benchmarks (issue: "Kernels: one pass, SIMD, accurate").
// For each dtype pair (f32/f32, f32/f16, f32/bf16, f32/u8 quantized, f32/f32
// with an NHWC target of 16 channels, "f32_f32nhwc", and of 256,
// "f32_f32nhwc256", f32/float8_e4m3fn, f32/float8_e5m2, f32/int4
// block-quantized with blocks of 32 along the last axis and one float32 scale
// per block, "f32_i4b32"; f32/MXFP4, float4_e2m1fn codes with one e8m0
// power-of-two scale per block of 32, held as float32 as numgap's readers
// decode it, "f32_mxfp4") and n = 2^10, 2^12, 2^16, 2^20, 2^26 this measures, in
// one binary so ratios are side by side:
//   BM_fused_<pair>_<arch>      validate + one fused pass computing
//                               cosine + atol + mse + max_abs
//                               (kernels::accumulate_views, what evaluate()
//                               runs: a pair_plan for every pair but f32/f32),
//                               per kernel arch this CPU can run
//                               (scalar fallback included; the active arch's
//                               table as tuned for this CPU, dispatch.hpp);
//   BM_evaluate_<pair>          the same through the public evaluate() API
//                               (metric_set, results, no side statistics,
//                               not even the counts);
//   BM_evaluate_default_f32_f32 evaluate() with default options (each side's
//                               NaN / +-Inf counts), what an embedder calls;
//   BM_evaluate_side_stats_f32_f32  with each side's mean and std too
//                               (evaluate_options::side_statistics);
//   BM_evaluate_min_max_f32_f32 the same with per-side min and max too
//                               (evaluate_options::side_min_max);
//   BM_prepared_f32_f32,        prepared_metric_set::evaluate_into (values
//   BM_prepared_default_f32_f32 into caller storage), without any side
//                               statistic and with the default options;
//   BM_evaluate_typed_f32_f32   the compile-time form, evaluate(r, t,
//                               cosine{}, atol{}, mse{}, max_abs{}) (no
//                               side statistics, results in a std::array);
//   BM_eigen_f32_f32            the best-library baseline: Eigen, as its users
//                               write these metrics (baselines/eigen_metrics.hpp;
//                               absent when CMake finds no Eigen3);
//   BM_scalar_loops_<pair>      a plain scalar loop per metric, as a user
//                               writes it by hand: cosine's three sums in
//                               one loop, then one loop each for atol, mse
//                               and max_abs, double accumulators, the target
//                               converted inline with the dtype known at
//                               compile time (no per-element dispatch);
//   BM_xtensor_<pair>           one xtensor expression per metric (f32/f32);
//   BM_evaluate_segments_f32_f32_<N>_shards
//                               evaluate_segments (metric/evaluate_segments.hpp)
//                               of an unsplit [rows, cols] reference against a
//                               target stored as N = 2 or 8 shards along axis
//                               1 (the tensor-parallel case; n = 2^20 and 2^26),
//                               against BM_evaluate_f32_f32 and the ceiling;
//   BM_bandwidth_<pair>         a read-only two-stream loop over the same
//                               bytes, reading both buffers concurrently with
//                               the widest loads of the best architecture this
//                               CPU runs (kernel_table::read_two_streams, the
//                               same dispatch as the fused kernel), with or
//                               without its software prefetch, whichever
//                               reads faster here (timed first; the label
//                               names the arch and the choice): the
//                               memory-bandwidth ceiling.
// Every buffer starts on a 64-byte line.
// Bytes processed count both inputs as stored (e.g. 5 bytes per element for
// f32/u8; 4 + 1/2 + 4/32 for f32/i4b32 and f32/mxfp4: the nibbles and the
// float32 block scales, which the bandwidth loop reads as one stream of codes
// then scales; an MXFP4 file holds its scales as e8m0, 1/32 byte an element,
// but they are decoded to float32 at load, so 4/32 is what the kernel reads).
// Build: see the README; run single-threaded.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <xsimd/xsimd.hpp>
#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xreducer.hpp>

#include <numgap/kernels/dispatch/dispatch.hpp>
#include <numgap/kernels/plan/validate_pair.hpp>
#include <numgap/kernels/table/accumulate_views.hpp>
#include <numgap/metric.hpp>
#include <numgap/metric/evaluate_segments.hpp>

#if defined(NUMGAP_BENCHMARK_EIGEN) && NUMGAP_BENCHMARK_EIGEN
#include "baselines/eigen_metrics.hpp"
#endif

namespace {

enum class pair_kind { f32, f16, bf16, u8, nhwc, nhwc256, e4m3, e5m2, i4b32, mxfp4 };
constexpr pair_kind all_kinds[] = {pair_kind::f32,   pair_kind::f16,     pair_kind::bf16, pair_kind::u8,
                                   pair_kind::nhwc,  pair_kind::nhwc256, pair_kind::e4m3, pair_kind::e5m2,
                                   pair_kind::i4b32, pair_kind::mxfp4};
constexpr std::int64_t i4_block = 32;
constexpr std::int64_t sizes[] = {1 << 10, 1 << 12, 1 << 16, 1 << 20, 1 << 26};
constexpr float u8_scale = 0.02f;
constexpr std::int32_t u8_zero_point = 128;
// Channels of the NHWC pairs: 16 (one AVX-512 band) and 256, as in a
// convolution network's middle layers.
constexpr std::int64_t channels_of(pair_kind kind) { return kind == pair_kind::nhwc256 ? 256 : 16; }

const char* name_of(pair_kind kind) {
    switch (kind) {
    case pair_kind::f32: return "f32_f32";
    case pair_kind::f16: return "f32_f16";
    case pair_kind::bf16: return "f32_bf16";
    case pair_kind::u8: return "f32_u8q";
    case pair_kind::nhwc: return "f32_f32nhwc";
    case pair_kind::nhwc256: return "f32_f32nhwc256";
    case pair_kind::e4m3: return "f32_e4m3";
    case pair_kind::e5m2: return "f32_e5m2";
    case pair_kind::i4b32: return "f32_i4b32";
    case pair_kind::mxfp4: return "f32_mxfp4";
    }
    return "?";
}

// Bytes of the target per element, as read.
double target_bytes(pair_kind kind) {
    if (kind == pair_kind::i4b32 || kind == pair_kind::mxfp4) return 0.5 + 4.0 / double(i4_block);
    if (kind == pair_kind::f16 || kind == pair_kind::bf16) return 2;
    return kind == pair_kind::u8 || kind == pair_kind::e4m3 || kind == pair_kind::e5m2 ? 1 : 4;
}

// One allocation per (pair, size), touched once so page faults stay out of the timings.
// Every buffer starts on a 64-byte line, as numgap's mapped .npy data does
// (std::vector's large blocks start 16 bytes past one, which changes which
// prefetching reads fastest; see read_two_streams.hpp and dispatch.hpp).
template <class T>
using line_aligned = std::vector<T, xsimd::aligned_allocator<T, 64>>;

struct pair_data {
    line_aligned<float> reference;
    line_aligned<float> target_f32;
    line_aligned<numgap::float16> target_f16;
    line_aligned<numgap::bfloat16> target_bf16;
    line_aligned<std::uint8_t> target_u8;
    line_aligned<numgap::float8_e4m3fn> target_e4m3;
    line_aligned<numgap::float8_e5m2> target_e5m2;
    // f32_i4b32 and f32_mxfp4: n / 2 bytes of nibbles, then n / 32 float32 scales, in one buffer.
    line_aligned<std::uint32_t> target_i4_storage;
    const std::uint8_t* target_i4 = nullptr;
    const float* target_i4_scales = nullptr;
    std::int64_t shape[4]{};
    std::int64_t stored_shape[4]{};
    numgap::tensor_view reference_view, target_view;
};

pair_data& data_for(pair_kind kind, std::int64_t n) {
    static std::map<std::pair<int, std::int64_t>, std::unique_ptr<pair_data>> cache;
    auto& slot = cache[{int(kind), n}];
    if (slot) return *slot;
    slot = std::make_unique<pair_data>();
    pair_data& d = *slot;
    std::mt19937 generator(1);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    d.reference.resize(std::size_t(n));
    for (auto& x : d.reference) x = normal(generator);
    auto perturbed = [&](std::size_t i) { return d.reference[i] * 1.001f + 0.001f; };
    auto block_largest = [&](std::size_t b) {
        float largest = 0;
        for (std::size_t i = b * std::size_t(i4_block); i < (b + 1) * std::size_t(i4_block); ++i)
            largest = std::max(largest, std::fabs(perturbed(i)));
        return largest;
    };
    switch (kind) {
    case pair_kind::f32:
    case pair_kind::nhwc:
    case pair_kind::nhwc256:
        d.target_f32.resize(std::size_t(n));
        for (std::size_t i = 0; i < d.target_f32.size(); ++i) d.target_f32[i] = perturbed(i);
        break;
    case pair_kind::f16:
        d.target_f16.resize(std::size_t(n));
        for (std::size_t i = 0; i < d.target_f16.size(); ++i) d.target_f16[i] = numgap::to_float16(perturbed(i));
        break;
    case pair_kind::bf16:
        d.target_bf16.resize(std::size_t(n));
        for (std::size_t i = 0; i < d.target_bf16.size(); ++i) d.target_bf16[i] = numgap::to_bfloat16(perturbed(i));
        break;
    case pair_kind::u8:
        d.target_u8.resize(std::size_t(n));
        for (std::size_t i = 0; i < d.target_u8.size(); ++i)
            d.target_u8[i] = std::uint8_t(std::clamp(std::lround(perturbed(i) / u8_scale) + u8_zero_point, 0L, 255L));
        break;
    // float8 by truncating a float16 (timing data, not a rounding reference):
    // e5m2 is its top byte; e4m3fn's magnitude bits are float16's of x / 2^8
    // shifted down 7, kept below the NaN code 0x7F (|x| < 448 here).
    case pair_kind::e4m3:
        d.target_e4m3.resize(std::size_t(n));
        for (std::size_t i = 0; i < d.target_e4m3.size(); ++i) {
            const std::uint16_t half = numgap::to_float16(perturbed(i) * 0x1p-8f).bits;
            d.target_e4m3[i] = {std::uint8_t(((half >> 8) & 0x80) | std::min((half & 0x7fff) >> 7, 0x7e))};
        }
        break;
    case pair_kind::e5m2:
        d.target_e5m2.resize(std::size_t(n));
        for (std::size_t i = 0; i < d.target_e5m2.size(); ++i)
            d.target_e5m2[i] = {std::uint8_t(numgap::to_float16(perturbed(i)).bits >> 8)};
        break;
    case pair_kind::i4b32: {
        // Symmetric int4 per block of 32 (GPTQ-style): scale = max |x| / 7.
        const std::size_t count = std::size_t(n), blocks = count / std::size_t(i4_block);
        d.target_i4_storage.assign(count / 8 + blocks, 0);
        auto* codes = reinterpret_cast<std::uint8_t*>(d.target_i4_storage.data());
        auto* scales = reinterpret_cast<float*>(d.target_i4_storage.data() + count / 8);
        for (std::size_t b = 0; b < blocks; ++b) {
            const float largest = block_largest(b);
            scales[b] = largest > 0 ? largest / 7.0f : 1.0f;
        }
        for (std::size_t i = 0; i < count; ++i) {
            const long q = std::clamp(std::lround(perturbed(i) / scales[i / std::size_t(i4_block)]), -8L, 7L);
            codes[i / 2] = std::uint8_t(codes[i / 2] | ((q & 0xf) << (4 * (i % 2))));
        }
        d.target_i4 = codes;
        d.target_i4_scales = scales;
        break;
    }
    case pair_kind::mxfp4: {
        // OCP MX: X = 2^(floor(log2(max |x|)) - 2) per block (2: e2m1's
        // largest exponent), each code the nearest e2m1 value of x / X.
        const std::size_t count = std::size_t(n), blocks = count / std::size_t(i4_block);
        d.target_i4_storage.assign(count / 8 + blocks, 0);
        auto* codes = reinterpret_cast<std::uint8_t*>(d.target_i4_storage.data());
        auto* scales = reinterpret_cast<float*>(d.target_i4_storage.data() + count / 8);
        constexpr float magnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
        for (std::size_t b = 0; b < blocks; ++b) {
            const float largest = block_largest(b);
            scales[b] = std::ldexp(1.0f, largest > 0 ? std::ilogb(largest) - 2 : 0);
            for (std::size_t i = b * std::size_t(i4_block); i < (b + 1) * std::size_t(i4_block); ++i) {
                const float x = perturbed(i) / scales[b];
                unsigned best = 0;
                for (unsigned m = 1; m < 8; ++m)
                    if (std::fabs(std::fabs(x) - magnitudes[m]) < std::fabs(std::fabs(x) - magnitudes[best])) best = m;
                const unsigned code = best | (x < 0 ? 8u : 0u);
                codes[i / 2] = std::uint8_t(codes[i / 2] | (code << (4 * (i % 2))));
            }
        }
        d.target_i4 = codes;
        d.target_i4_scales = scales;
        break;
    }
    }
    if (kind == pair_kind::nhwc || kind == pair_kind::nhwc256) {
        // Reference NCHW [1, C, H, W]; target stored NHWC [1, H, W, C].
        const std::int64_t channels = channels_of(kind), spatial = n / channels,
                           h = 1 << (std::countr_zero(std::uint64_t(spatial)) / 2), w = spatial / h;
        const std::int64_t logical[4] = {1, channels, h, w}, stored[4] = {1, h, w, channels};
        std::copy(logical, logical + 4, d.shape);
        std::copy(stored, stored + 4, d.stored_shape);
        d.reference_view = numgap::tensor_view(d.reference.data(), std::span<const std::int64_t>(d.shape));
        d.target_view = numgap::tensor_view(d.target_f32.data(), std::span<const std::int64_t>(d.stored_shape));
        d.target_view.with_axis_order({0, 2, 3, 1});
        return d;
    }
    d.shape[0] = n;
    const std::span<const std::int64_t> shape(d.shape, 1);
    d.reference_view = numgap::tensor_view(d.reference.data(), shape);
    switch (kind) {
    case pair_kind::f32: d.target_view = numgap::tensor_view(d.target_f32.data(), shape); break;
    case pair_kind::f16: d.target_view = numgap::tensor_view(d.target_f16.data(), numgap::dtype::float16, shape); break;
    case pair_kind::bf16: d.target_view = numgap::tensor_view(d.target_bf16.data(), numgap::dtype::bfloat16, shape); break;
    case pair_kind::e4m3: d.target_view = numgap::tensor_view(d.target_e4m3.data(), numgap::dtype::float8_e4m3fn, shape); break;
    case pair_kind::e5m2: d.target_view = numgap::tensor_view(d.target_e5m2.data(), numgap::dtype::float8_e5m2, shape); break;
    case pair_kind::u8:
        d.target_view = numgap::tensor_view(d.target_u8.data(), shape);
        d.target_view.with_quantization(numgap::quantization::per_tensor(u8_scale, u8_zero_point));
        break;
    case pair_kind::i4b32:
        d.target_view = numgap::tensor_view(d.target_i4, numgap::dtype::int4, shape);
        d.target_view.with_quantization(numgap::quantization::blocks(
            -1, i4_block, std::span<const float>(d.target_i4_scales, std::size_t(n / i4_block))));
        break;
    case pair_kind::mxfp4:
        d.target_view = numgap::tensor_view(d.target_i4, numgap::dtype::float4_e2m1fn, shape);
        d.target_view.with_quantization(numgap::quantization::blocks(
            -1, i4_block, std::span<const float>(d.target_i4_scales, std::size_t(n / i4_block))));
        break;
    default: break;
    }
    return d;
}

void set_counters(benchmark::State& state, pair_kind kind, std::int64_t n) {
    state.SetItemsProcessed(state.iterations() * n);
    state.SetBytesProcessed(state.iterations() * std::int64_t(double(n) * (4 + target_bytes(kind))));
}

void fused(benchmark::State& state, pair_kind kind, numgap::kernels::kernel_table table) {
    const std::int64_t n = state.range(0);
    pair_data& d = data_for(kind, n);
    const numgap::kernels::kernel_options options{}; // moments: cosine, atol, mse, max_abs
    for (auto _ : state) {
        numgap::validate_pair(d.reference_view, d.target_view);
        numgap::kernels::pair_moments moments;
        numgap::kernels::accumulate_views(d.reference_view, d.target_view, table, options, moments);
        double values[4] = {numgap::cosine{}.from_moments(moments), numgap::atol{}.from_moments(moments),
                            numgap::mse{}.from_moments(moments), numgap::max_abs{}.from_moments(moments)};
        benchmark::DoNotOptimize(values);
    }
    set_counters(state, kind, n);
}

// No per-side statistics at all, not even the NaN / +-Inf counts of the
// default options: the metrics alone.
constexpr numgap::evaluate_options metrics_alone{.threads = 1, .side_statistics = false, .side_counts = false};

numgap::metric_set benchmarked_metrics() {
    numgap::metric_set set;
    set.add(numgap::cosine{}).add(numgap::atol{}).add(numgap::mse{}).add(numgap::max_abs{});
    return set;
}

void evaluate_api(benchmark::State& state, pair_kind kind, numgap::evaluate_options options) {
    const std::int64_t n = state.range(0);
    pair_data& d = data_for(kind, n);
    const numgap::metric_set set = benchmarked_metrics();
    for (auto _ : state) {
        auto result = numgap::evaluate(d.reference_view, d.target_view, set, options);
        benchmark::DoNotOptimize(result.metrics.data());
        benchmark::DoNotOptimize(result.reference);
    }
    set_counters(state, kind, n);
}

void prepared(benchmark::State& state, pair_kind kind, numgap::evaluate_options options) {
    const std::int64_t n = state.range(0);
    pair_data& d = data_for(kind, n);
    const numgap::prepared_metric_set set(benchmarked_metrics(), options);
    double values[4];
    numgap::side_stats reference_stats, target_stats;
    for (auto _ : state) {
        set.evaluate_into(d.reference_view, d.target_view, values, &reference_stats, &target_stats);
        benchmark::DoNotOptimize(values);
        benchmark::DoNotOptimize(reference_stats);
        benchmark::DoNotOptimize(target_stats);
    }
    set_counters(state, kind, n);
}

// The compile-time form: the metrics as types, results in a std::array.
void evaluate_typed(benchmark::State& state) {
    const std::int64_t n = state.range(0);
    pair_data& d = data_for(pair_kind::f32, n);
    for (auto _ : state) {
        auto results = numgap::evaluate(d.reference_view, d.target_view, numgap::cosine{}, numgap::atol{},
                                        numgap::mse{}, numgap::max_abs{});
        benchmark::DoNotOptimize(results.data());
    }
    set_counters(state, pair_kind::f32, n);
}

#if defined(NUMGAP_BENCHMARK_EIGEN) && NUMGAP_BENCHMARK_EIGEN
void eigen(benchmark::State& state) {
    const std::int64_t n = state.range(0);
    pair_data& d = data_for(pair_kind::f32, n);
    for (auto _ : state) {
        auto values = numgap_benchmark::eigen_metrics(d.reference.data(), d.target_f32.data(), std::size_t(n));
        benchmark::DoNotOptimize(values);
    }
    set_counters(state, pair_kind::f32, n);
}
#endif

// What a user writes by hand: one loop per metric, dequantizing inline.
template <class Load>
void scalar_loops(benchmark::State& state, pair_kind kind, Load load) {
    const std::int64_t n = state.range(0);
    pair_data& d = data_for(kind, n);
    const float* r = d.reference.data();
    for (auto _ : state) {
        double dot = 0, rr = 0, tt = 0;
        for (std::int64_t i = 0; i < n; ++i) {
            const float t = load(d, i);
            dot += double(r[i]) * t;
            rr += double(r[i]) * r[i];
            tt += double(t) * t;
        }
        const double cosine = dot / std::sqrt(rr * tt);
        double abs_sum = 0;
        for (std::int64_t i = 0; i < n; ++i) abs_sum += std::fabs(double(r[i]) - load(d, i));
        double square_sum = 0;
        for (std::int64_t i = 0; i < n; ++i) {
            const double diff = double(r[i]) - load(d, i);
            square_sum += diff * diff;
        }
        double max_abs = 0;
        for (std::int64_t i = 0; i < n; ++i) max_abs = std::max(max_abs, std::fabs(double(r[i]) - load(d, i)));
        double values[4] = {cosine, abs_sum / double(n), square_sum / double(n), max_abs};
        benchmark::DoNotOptimize(values);
    }
    set_counters(state, kind, n);
}

void add_minimum(benchmark::internal::Benchmark* b) {
    b->Unit(benchmark::kMicrosecond);
    // With --benchmark_repetitions, the fastest repetition too: on a shared
    // VM other tenants only ever slow a run down, so the minimum of randomly
    // interleaved repetitions (--benchmark_enable_random_interleaving) is the
    // steadiest estimate; medians of one binary moved by up to 2x between runs.
    b->ComputeStatistics("min", [](const std::vector<double>& times) {
        return times.empty() ? 0.0 : *std::min_element(times.begin(), times.end());
    });
}

void add_sizes(benchmark::internal::Benchmark* b) {
    b->ArgName("n");
    for (const std::int64_t n : sizes) b->Arg(n);
    add_minimum(b);
}

template <pair_kind Kind>
float load_target(const pair_data& d, std::int64_t i) {
    if constexpr (Kind == pair_kind::f32) return d.target_f32[std::size_t(i)];
    else if constexpr (Kind == pair_kind::f16) return numgap::to_float(d.target_f16[std::size_t(i)]);
    else if constexpr (Kind == pair_kind::bf16) return numgap::to_float(d.target_bf16[std::size_t(i)]);
    else if constexpr (Kind == pair_kind::u8) return u8_scale * float(std::int32_t(d.target_u8[std::size_t(i)]) - u8_zero_point);
    else if constexpr (Kind == pair_kind::e4m3) return numgap::to_float(d.target_e4m3[std::size_t(i)]);
    else if constexpr (Kind == pair_kind::e5m2) return numgap::to_float(d.target_e5m2[std::size_t(i)]);
    else if constexpr (Kind == pair_kind::i4b32) {
        const int nibble = (d.target_i4[i / 2] >> (4 * (i % 2))) & 0xf;
        return d.target_i4_scales[i / i4_block] * float(nibble >= 8 ? nibble - 16 : nibble);
    } else if constexpr (Kind == pair_kind::mxfp4) {
        // A 16-entry table, as a hand-written decoder would use.
        static constexpr float e2m1[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                           -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
        return d.target_i4_scales[i / i4_block] * e2m1[(d.target_i4[i / 2] >> (4 * (i % 2))) & 0xf];
    } else {
        // Reference index i = (c * H + y) * W + x maps to NHWC ((y * W + x) * C + c).
        const std::int64_t spatial = i % (d.shape[2] * d.shape[3]), c = i / (d.shape[2] * d.shape[3]);
        return d.target_f32[std::size_t(spatial * channels_of(Kind) + c)];
    }
}

template <pair_kind Kind>
void register_scalar_loops() {
    add_sizes(benchmark::RegisterBenchmark((std::string("BM_scalar_loops_") + name_of(Kind)).c_str(),
                                           [](benchmark::State& s) {
                                               scalar_loops(s, Kind, [](const pair_data& d, std::int64_t i) { return load_target<Kind>(d, i); });
                                           }));
}

void xtensor_expressions(benchmark::State& state) {
    const std::int64_t n = state.range(0);
    pair_data& d = data_for(pair_kind::f32, n);
    const std::vector<std::size_t> shape = {std::size_t(n)};
    auto r = xt::adapt(d.reference.data(), std::size_t(n), xt::no_ownership(), shape);
    auto t = xt::adapt(d.target_f32.data(), std::size_t(n), xt::no_ownership(), shape);
    for (auto _ : state) {
        const double cosine = double(xt::sum(r * t)()) / std::sqrt(double(xt::sum(r * r)()) * double(xt::sum(t * t)()));
        const double atol = double(xt::mean(xt::abs(r - t))());
        const double mse = double(xt::mean(xt::square(r - t))());
        const double max_abs = double(xt::amax(xt::abs(r - t))());
        double values[4] = {cosine, atol, mse, max_abs};
        benchmark::DoNotOptimize(values);
    }
    set_counters(state, pair_kind::f32, n);
}

// The f32 pair as [rows, cols] (cols = 2^ceil(log2(n) / 2)), the target
// copied into `shards` separate buffers of cols / shards columns each.
void evaluate_segments_api(benchmark::State& state, std::int64_t shards) {
    const std::int64_t n = state.range(0);
    pair_data& d = data_for(pair_kind::f32, n);
    std::int64_t columns = 1;
    while (columns * columns < n) columns *= 2;
    const std::int64_t rows = n / columns, width = columns / shards;
    std::vector<line_aligned<float>> pieces(static_cast<std::size_t>(shards));
    std::vector<numgap::tensor_segment> segments;
    for (std::int64_t s = 0; s < shards; ++s) {
        line_aligned<float>& piece = pieces[std::size_t(s)];
        piece.resize(std::size_t(rows * width));
        for (std::int64_t r = 0; r < rows; ++r)
            std::copy_n(d.target_f32.begin() + r * columns + s * width, width, piece.begin() + r * width);
        segments.push_back({numgap::tensor_view(piece.data(), {rows, width}), s * width});
    }
    const numgap::tensor_segment whole{numgap::tensor_view(d.reference.data(), {rows, columns}), 0};
    const numgap::segmented_view reference{std::span(&whole, 1), 0}, target{segments, 1};
    const numgap::metric_set set = benchmarked_metrics();
    for (auto _ : state) {
        auto result = numgap::evaluate_segments(reference, target, set, metrics_alone);
        benchmark::DoNotOptimize(result.metrics.data());
    }
    set_counters(state, pair_kind::f32, n);
}

// The faster of the read loop with and without the kernel's software
// prefetch (which wins depends on the CPU and the buffers' alignment), chosen
// by timing both before the measured loop: a ceiling must not be a slow read.
void bandwidth(benchmark::State& state, pair_kind kind) {
    const std::int64_t n = state.range(0);
    pair_data& d = data_for(kind, n);
    const auto bytes = std::size_t(double(n) * target_bytes(kind));
    const numgap::kernels::kernel_table& table = numgap::kernels::active_kernels();
    auto read = [&](bool prefetch) {
        return table.read_two_streams(d.reference.data(), std::size_t(n) * 4, d.target_view.data(), bytes, prefetch);
    };
    auto fastest_of_runs = [&](bool prefetch) {
        const int runs = int(std::max<std::int64_t>(3, (std::int64_t(1) << 22) / n));
        double fastest = 1e300;
        for (int trial = 0; trial < 3; ++trial) {
            const auto start = std::chrono::steady_clock::now();
            for (int k = 0; k < runs; ++k) benchmark::DoNotOptimize(read(prefetch));
            fastest =
                std::min(fastest, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
        return fastest;
    };
    // Chosen once per pair and size, so every repetition measures the same form.
    static std::map<std::pair<int, std::int64_t>, bool> prefetch_choice;
    const auto [choice, fresh] = prefetch_choice.try_emplace({int(kind), n}, false);
    if (fresh) choice->second = fastest_of_runs(true) < fastest_of_runs(false);
    const bool prefetch = choice->second;
    for (auto _ : state) {
        std::uint64_t folded = read(prefetch);
        benchmark::DoNotOptimize(folded);
    }
    state.SetLabel(std::string(table.arch_name) + (prefetch ? ", prefetching" : ", no prefetch"));
    set_counters(state, kind, n);
}

int register_all() {
    for (const pair_kind kind : all_kinds) {
        const std::string pair = name_of(kind);
        std::set<std::string> archs; // the header's native arch may also be a dispatched one
        const numgap::kernels::kernel_table& active = numgap::kernels::active_kernels();
        for (const auto& available : numgap::kernels::available_kernels()) {
            // The active arch as evaluate() runs it: tuned for this CPU (dispatch.hpp).
            const numgap::kernels::kernel_table table =
                std::string_view(available.arch_name) == active.arch_name ? active : available;
            if (archs.insert(table.arch_name).second)
                add_sizes(benchmark::RegisterBenchmark(("BM_fused_" + pair + "_" + table.arch_name).c_str(),
                                                       [kind, table](benchmark::State& s) { fused(s, kind, table); }));
        }
        add_sizes(benchmark::RegisterBenchmark(("BM_evaluate_" + pair).c_str(),
                                               [kind](benchmark::State& s) { evaluate_api(s, kind, metrics_alone); }));
        add_sizes(benchmark::RegisterBenchmark(("BM_bandwidth_" + pair).c_str(),
                                               [kind](benchmark::State& s) { bandwidth(s, kind); }));
    }
    register_scalar_loops<pair_kind::f32>();
    register_scalar_loops<pair_kind::f16>();
    register_scalar_loops<pair_kind::bf16>();
    register_scalar_loops<pair_kind::u8>();
    register_scalar_loops<pair_kind::nhwc>();
    register_scalar_loops<pair_kind::e4m3>();
    register_scalar_loops<pair_kind::e5m2>();
    register_scalar_loops<pair_kind::i4b32>();
    register_scalar_loops<pair_kind::mxfp4>();
    for (const std::int64_t shards : {2, 8}) {
        const std::string name = "BM_evaluate_segments_f32_f32_" + std::to_string(shards) + "_shards";
        add_minimum(benchmark::RegisterBenchmark(name.c_str(),
                                                 [shards](benchmark::State& s) { evaluate_segments_api(s, shards); })
                        ->ArgName("n")
                        ->Arg(1 << 20)
                        ->Arg(1 << 26));
    }
    add_sizes(benchmark::RegisterBenchmark("BM_xtensor_f32_f32", xtensor_expressions));
    add_sizes(benchmark::RegisterBenchmark("BM_evaluate_default_f32_f32",
                                           [](benchmark::State& s) { evaluate_api(s, pair_kind::f32, {}); }));
    add_sizes(benchmark::RegisterBenchmark("BM_evaluate_side_stats_f32_f32", [](benchmark::State& s) {
        evaluate_api(s, pair_kind::f32, {.threads = 1, .side_statistics = true});
    }));
    add_sizes(benchmark::RegisterBenchmark("BM_evaluate_min_max_f32_f32", [](benchmark::State& s) {
        evaluate_api(s, pair_kind::f32, {.threads = 1, .side_statistics = true, .side_min_max = true});
    }));
    add_sizes(benchmark::RegisterBenchmark("BM_prepared_f32_f32",
                                           [](benchmark::State& s) { prepared(s, pair_kind::f32, metrics_alone); }));
    add_sizes(benchmark::RegisterBenchmark("BM_prepared_default_f32_f32",
                                           [](benchmark::State& s) { prepared(s, pair_kind::f32, {}); }));
    add_sizes(benchmark::RegisterBenchmark("BM_evaluate_typed_f32_f32", evaluate_typed));
#if defined(NUMGAP_BENCHMARK_EIGEN) && NUMGAP_BENCHMARK_EIGEN
    add_sizes(benchmark::RegisterBenchmark("BM_eigen_f32_f32", eigen));
#else
    std::fprintf(stderr, "benchmarks/kernels: built without Eigen3 (libeigen3-dev): no BM_eigen_f32_f32 baseline\n");
#endif
    return 0;
}

const int registered = register_all();

} // namespace

BENCHMARK_MAIN();
