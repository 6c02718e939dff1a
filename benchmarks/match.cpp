// Matching throughput on generated transformer-like graph pairs (renamed
// nodes, inserted q/dq/cast/transpose/reshape no-ops, deleted dropouts,
// fused linear+gelu / add chains): nodes/s (reference nodes) and the fitted
// complexity. Name and handle matching run 10^3 .. 10^6 nodes, structure
// 10^3 .. 10^5, and the consumer-side signature refinement that structure
// matching computes on both graphs alone (its share of the structure time). Graph generation is outside the timed loop; each timed
// iteration includes both topological sorts and the result construction.
//
//   g++ -std=c++20 -O3 -DNDEBUG -Iinclude -Ibenchmarks/support benchmarks/match.cpp -lbenchmark -lpthread -o match
//   ./match
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include <numgap/graph.hpp>
#include <numgap/match.hpp>
#include <numgap/match/detail/consumer_signatures.hpp>
#include <numgap/match/detail/structure_node_attributes.hpp>

#include <numgap_support/synthetic_graphs.hpp>

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

// The consumer-side refinement alone (both graphs' signatures, as
// match_by_structure computes them): its share of BM_match_by_structure.
void BM_structure_consumer_signatures(benchmark::State& state) {
    const auto& pair = generated_pair(pair_kind::structure, static_cast<std::size_t>(state.range(0)));
    auto signatures_of = [](const numgap::basic_graph& g) {
        const auto order = numgap::topological_order(g);
        const numgap::detail::structure_node_attributes<numgap::basic_graph> attributes(
            g, g.num_nodes(), numgap::default_passthrough_op{});
        std::vector<std::uint64_t> family_hash(g.num_nodes());
        std::vector<char> contracted(g.num_nodes());
        for (std::size_t node = 0; node < g.num_nodes(); ++node) {
            family_hash[node] = numgap::detail::hash_family(attributes.primary[node]);
            contracted[node] = attributes.passthrough[node] || g.producers(node).size() == 1;
        }
        // Prepared outside the timed loop: attributes serve the whole matcher.
        return std::tuple{order, family_hash, contracted, attributes.commutative};
    };
    const auto reference = signatures_of(pair.reference);
    const auto target = signatures_of(pair.target);
    for (auto _ : state) {
        numgap::detail::consumer_signatures reference_signatures(pair.reference, std::get<0>(reference), std::get<1>(reference),
                                                                 std::get<2>(reference), std::get<3>(reference));
        numgap::detail::consumer_signatures target_signatures(pair.target, std::get<0>(target), std::get<1>(target),
                                                              std::get<2>(target), std::get<3>(target));
        benchmark::DoNotOptimize(reference_signatures.agreement(0, target_signatures, 0));
    }
    const auto n = static_cast<std::int64_t>(pair.reference.num_nodes());
    state.SetItemsProcessed(state.iterations() * n);
    state.SetComplexityN(n);
}

} // namespace

BENCHMARK(BM_match_by_name)->ArgName("nodes")->RangeMultiplier(10)->Range(1000, 1000000)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK(BM_match_by_handle)->ArgName("nodes")->RangeMultiplier(10)->Range(1000, 1000000)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK(BM_match_by_structure)->ArgName("nodes")->RangeMultiplier(10)->Range(1000, 100000)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK(BM_structure_consumer_signatures)->ArgName("nodes")->RangeMultiplier(10)->Range(1000, 100000)->Unit(benchmark::kMillisecond)->Complexity();

BENCHMARK_MAIN();
