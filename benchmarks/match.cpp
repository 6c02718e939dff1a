// Matching throughput on generated transformer-like graph pairs (renamed
// nodes, inserted q/dq/cast/transpose/reshape no-ops, deleted dropouts,
// fused linear+gelu / add chains): nodes/s (reference nodes) and the fitted
// complexity. Name and handle matching run 10^3 .. 10^6 nodes, structure
// 10^3 .. 10^5. Graph generation is outside the timed loop; each timed
// iteration includes both topological sorts and the result construction.
//
//   g++ -std=c++20 -O3 -DNDEBUG -Iinclude benchmarks/match.cpp -lbenchmark -lpthread -o match
//   ./match
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <utility>

#include <numgap/graph.hpp>
#include <numgap/match.hpp>

#include "../tests/match/synthetic_graphs.hpp"

namespace {

enum class pair_kind { names, handles, structure };

// One generated pair per (kind, size), built on first use.
const numgap_test::synthetic_pair& generated_pair(pair_kind kind, std::size_t nodes) {
    static std::map<std::pair<pair_kind, std::size_t>, std::unique_ptr<numgap_test::synthetic_pair>> cache;
    auto& slot = cache[{kind, nodes}];
    if (!slot) {
        std::mt19937_64 rng(12345 + nodes);
        numgap_test::derive_options options;
        options.rename = kind != pair_kind::names;
        options.handles = kind == pair_kind::handles;
        slot = std::make_unique<numgap_test::synthetic_pair>(numgap_test::derive_target(
            numgap_test::make_reference(numgap_test::model_family::transformer, nodes, rng), options, rng));
    }
    return *slot;
}

void BM_match_by_name(benchmark::State& state) {
    const auto& pair = generated_pair(pair_kind::names, static_cast<std::size_t>(state.range(0)));
    numgap::match_options options;
    options.normalize_name = numgap::common_name_normalizer{};
    for (auto _ : state) {
        auto result = numgap::match_by_name(pair.reference, pair.target, options);
        benchmark::DoNotOptimize(result.groups.data());
    }
    const auto n = static_cast<std::int64_t>(pair.reference.num_nodes());
    state.SetItemsProcessed(state.iterations() * n);
    state.SetComplexityN(n);
}

void BM_match_by_handle(benchmark::State& state) {
    const auto& pair = generated_pair(pair_kind::handles, static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        auto result = numgap::match_by_handle(pair.reference, pair.target);
        benchmark::DoNotOptimize(result.groups.data());
    }
    const auto n = static_cast<std::int64_t>(pair.reference.num_nodes());
    state.SetItemsProcessed(state.iterations() * n);
    state.SetComplexityN(n);
}

void BM_match_by_structure(benchmark::State& state) {
    const auto& pair = generated_pair(pair_kind::structure, static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        auto result = numgap::match_by_structure(pair.reference, pair.target);
        benchmark::DoNotOptimize(result.groups.data());
    }
    const auto n = static_cast<std::int64_t>(pair.reference.num_nodes());
    state.SetItemsProcessed(state.iterations() * n);
    state.SetComplexityN(n);
}

} // namespace

BENCHMARK(BM_match_by_name)->ArgName("nodes")->RangeMultiplier(10)->Range(1000, 1000000)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK(BM_match_by_handle)->ArgName("nodes")->RangeMultiplier(10)->Range(1000, 1000000)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK(BM_match_by_structure)->ArgName("nodes")->RangeMultiplier(10)->Range(1000, 100000)->Unit(benchmark::kMillisecond)->Complexity();

BENCHMARK_MAIN();
