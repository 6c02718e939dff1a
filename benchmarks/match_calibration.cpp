// What structural matching's confidence means, measured: on generated graph
// pairs with a known ground truth (benchmarks/support/numgap_support/synthetic_graphs.hpp: every
// node renamed, the target renumbered in a random topological order, no-ops
// inserted on 15-30% of the edges, dropout/identity deleted, chains fused,
// half the runs NHWC; four families: ResNet-like CNN, transformer, Fire,
// Inception), the fraction of reported pairs that are right, per confidence
// bucket, and for ambiguous pairs (match_group::ambiguous_with non-empty)
// also how often the right target is among the equals. Two settings: clean,
// and with 1% of the real ops folded away and 1% replaced by an op nothing
// recognises (the README's harder sweep). A pair is one reference node of a
// group; it is right when the group's target nodes hold its counterpart.
//
//   g++ -std=c++20 -O2 -DNDEBUG -Iinclude -Ibenchmarks/support benchmarks/match_calibration.cpp -o match_calibration
//   ./match_calibration            # 40 seeds per family and setting, 1000-node graphs
//   ./match_calibration --seeds=4  # quicker
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>

#include <numgap/graph/basic_graph.hpp>
#include <numgap/match/match_by_structure.hpp>

#include <numgap_support/synthetic_graphs.hpp>

namespace {

constexpr std::array<double, 7> bucket_floor{0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.01};

struct tally {
    std::array<std::size_t, 6> pairs{}, right{};
    std::size_t ambiguous = 0, ambiguous_right = 0, ambiguous_among_equals = 0;
    std::size_t graphs = 0, graphs_below_bar = 0;
};

void add_run(tally& t, const numgap_test::synthetic_pair& pair, const numgap::match_result& result) {
    std::size_t reported = 0, correct = 0, with_counterpart = 0, recovered = 0;
    std::vector<char> found(pair.reference.num_nodes(), 0);
    for (const auto& group : result.groups) {
        for (auto r : group.reference_nodes) {
            const auto& truth = pair.counterpart[r];
            auto holds = [&](const numgap::node_list& nodes) {
                return std::any_of(truth.begin(), truth.end(), [&](std::size_t node) {
                    return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
                });
            };
            const bool right = holds(group.target_nodes);
            ++reported;
            correct += right;
            found[r] = right;
            if (group.ambiguous()) {
                ++t.ambiguous;
                t.ambiguous_right += right;
                t.ambiguous_among_equals += right || holds(group.ambiguous_with);
                continue;
            }
            std::size_t bucket = 0;
            while (bucket + 2 < bucket_floor.size() && group.confidence >= bucket_floor[bucket + 1]) ++bucket;
            ++t.pairs[bucket];
            t.right[bucket] += right;
        }
    }
    for (std::size_t r = 0; r < pair.reference.num_nodes(); ++r) {
        if (pair.counterpart[r].empty()) continue;
        ++with_counterpart;
        recovered += found[r];
    }
    ++t.graphs;
    const double recall = static_cast<double>(recovered) / static_cast<double>(std::max<std::size_t>(with_counterpart, 1));
    const double precision = static_cast<double>(correct) / static_cast<double>(std::max<std::size_t>(reported, 1));
    if (recall < 0.95 || precision < 0.99) ++t.graphs_below_bar;
}

void print(const char* setting, const tally& t) {
    std::printf("\n%s: %zu graphs, %zu below 95%% recall or 99%% precision\n\n", setting, t.graphs, t.graphs_below_bar);
    std::printf("| confidence | pairs | right |\n|---|---:|---:|\n");
    static constexpr std::array<const char*, 6> names{"< 0.5", "[0.5, 0.6)", "[0.6, 0.7)", "[0.7, 0.8)", "[0.8, 0.9)",
                                                      "[0.9, 1.0]"};
    for (std::size_t b = 0; b < t.pairs.size(); ++b) {
        if (t.pairs[b] == 0) {
            std::printf("| %s | 0 | - |\n", names[b]);
            continue;
        }
        std::printf("| %s | %zu | %.4f |\n", names[b], t.pairs[b],
                    static_cast<double>(t.right[b]) / static_cast<double>(t.pairs[b]));
    }
    if (t.ambiguous == 0) {
        std::printf("| ambiguous | 0 | - |\n");
        return;
    }
    std::printf("| ambiguous | %zu | %.4f (right target among the equals: %.4f) |\n", t.ambiguous,
                static_cast<double>(t.ambiguous_right) / static_cast<double>(t.ambiguous),
                static_cast<double>(t.ambiguous_among_equals) / static_cast<double>(t.ambiguous));
}

} // namespace

int main(int argc, char** argv) {
    std::uint64_t seeds = 40;
    for (int i = 1; i < argc; ++i) {
        const std::string_view argument(argv[i]);
        if (argument.starts_with("--seeds=")) seeds = std::strtoull(argv[i] + 8, nullptr, 10);
        else {
            std::fprintf(stderr, "usage: %s [--seeds=N]\n", argv[0]);
            return 2;
        }
    }
    for (bool harder : {false, true}) {
        tally t;
        for (auto family : {numgap_test::model_family::cnn, numgap_test::model_family::transformer,
                            numgap_test::model_family::fire, numgap_test::model_family::inception}) {
            for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
                std::mt19937_64 rng(seed + (harder ? 1000 : 0));
                numgap_test::derive_options options;
                options.handles = false;
                options.shuffle = true;
                options.nhwc = seed % 2 == 1;
                options.insert_rate = seed % 2 == 1 ? 0.3 : 0.15;
                if (harder) {
                    options.drop_any_rate = 0.01;
                    options.replace_rate = 0.01;
                }
                const auto pair = numgap_test::derive_target(numgap_test::make_reference(family, 1000, rng), options, rng);
                add_run(t, pair, numgap::match_by_structure(pair.reference, pair.target));
            }
        }
        print(harder ? "1% of real ops folded, 1% replaced by unknown ops" : "renamed, shuffled, no-ops inserted/deleted, fused", t);
    }
}
