// libFuzzer target: a run's graph.json (io/run_manifest.hpp), the graph built
// from it (compare/run_graph.hpp) and every matcher (match/).
// The input is the graph.json text. The graph is matched against itself and
// against a copy with a few changes a backend makes (a renamed node, a
// dropped node, another op, shifted debug handles; which ones is decided by
// the input's bytes), with default options and with the other options
// (name normalisation, duplicates skipped, ExecuTorch handle outputs, an
// explicit mapping). Every result must partition each graph's nodes: each
// node in exactly one group or in the unmatched list (match_result.hpp).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/compare/run_graph.hpp>
#include <numgap/core/error.hpp>
#include <numgap/graph/basic_graph.hpp>
#include <numgap/graph/num_nodes.hpp>
#include <numgap/io/run_manifest.hpp>
#include <numgap/match/common_name_normalizer.hpp>
#include <numgap/match/match_auto.hpp>
#include <numgap/match/match_by_handle.hpp>
#include <numgap/match/match_by_name.hpp>
#include <numgap/match/match_by_structure.hpp>
#include <numgap/match/match_explicit.hpp>

#include "fuzz_support.hpp"

// A namespace of its own: the targets are compiled together (CMakeLists.txt).
namespace graph_json_target {

// The one place this target calls the manifest and graph API.
numgap::basic_graph graph_of(const numgap::io::run_manifest& manifest) {
    std::vector<std::string> keys;
    for (const numgap::io::tensor_spec& tensor : manifest.tensors) keys.push_back(tensor.key);
    return numgap::run_graph(manifest, keys);
}

std::uint64_t hash_of(std::string_view text) {
    std::uint64_t hash = 1469598103934665603ull; // FNV-1a
    for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
    return hash;
}

// What a backend does to a graph, chosen by `choice`.
numgap::io::run_manifest mutated(numgap::io::run_manifest manifest, std::uint64_t choice) {
    // Edited as node_specs, then put back into the manifest's table.
    std::vector<numgap::io::node_spec> nodes;
    for (std::size_t i = 0; i < manifest.nodes.size(); ++i) nodes.push_back(manifest.nodes[i]);
    if (nodes.empty()) return manifest;
    const std::size_t at = std::size_t(choice % nodes.size());
    switch ((choice >> 16) % 4) {
    case 0: nodes[at].name += "_target"; break;
    case 1: nodes.erase(nodes.begin() + std::ptrdiff_t(at)); break;
    case 2: nodes[at].op = nodes[at].op.empty() ? "aten.relu.default" : ""; break;
    case 3:
        for (auto& node : nodes)
            for (std::int64_t& handle : node.debug_handles) handle += 1;
        break;
    }
    manifest.nodes.clear();
    for (const numgap::io::node_spec& node : nodes) manifest.nodes.push_back(node);
    return manifest;
}

void check_partition(const numgap::match_result& result, std::size_t reference_nodes, std::size_t target_nodes,
                     const char* matcher) {
    std::vector<int> reference_seen(reference_nodes, 0), target_seen(target_nodes, 0);
    const auto count = [&](std::vector<int>& seen, std::size_t node, const char* side) {
        if (node >= seen.size() || ++seen[node] != 1) {
            std::fprintf(stderr, "numgap fuzz: %s: %s node %zu is out of range or in two places\n", matcher, side, node);
            std::abort();
        }
    };
    for (const numgap::match_group& group : result.groups) {
        for (std::size_t node : group.reference_nodes) count(reference_seen, node, "reference");
        for (std::size_t node : group.target_nodes) count(target_seen, node, "target");
    }
    for (std::size_t node : result.unmatched_reference) count(reference_seen, node, "reference");
    for (std::size_t node : result.unmatched_target) count(target_seen, node, "target");
    for (std::size_t node = 0; node < reference_nodes; ++node)
        if (reference_seen[node] != 1) count(reference_seen, reference_nodes, "a missing reference");
    for (std::size_t node = 0; node < target_nodes; ++node)
        if (target_seen[node] != 1) count(target_seen, target_nodes, "a missing target");
}

// The one place this target calls the matchers.
void match_every_way(const numgap::basic_graph& reference, const numgap::basic_graph& target,
                     const numgap::match_options& options) {
    const std::size_t r = numgap::num_nodes(reference), t = numgap::num_nodes(target);
    const auto attempt = [&](const char* matcher, auto&& run) {
        try {
            check_partition(run(), r, t, matcher);
        } catch (const numgap::error& failure) {
            // Duplicate names, a mapping that names no node: refused with a message.
            numgap::fuzz::refused(failure);
        }
    };
    attempt("match_by_name", [&] { return numgap::match_by_name(reference, target, options); });
    attempt("match_by_handle", [&] { return numgap::match_by_handle(reference, target, options); });
    attempt("match_by_structure", [&] { return numgap::match_by_structure(reference, target, options); });
    attempt("match_explicit", [&] { return numgap::match_explicit(reference, target, options); });
    attempt("match_auto", [&] { return numgap::match_auto(reference, target, options); });
}

numgap::match_options other_options(const numgap::basic_graph& reference, const numgap::basic_graph& target) {
    numgap::match_options options;
    options.normalize_name = numgap::common_name_normalizer{};
    options.on_duplicate_names = numgap::match_options::duplicate_names::skip;
    options.handle_reference_output = numgap::match_options::handle_output::executorch_compatible;
    if (numgap::num_nodes(reference) != 0 && numgap::num_nodes(target) != 0)
        options.explicit_mapping.emplace_back(reference.node_name(numgap::num_nodes(reference) - 1),
                                              target.node_name(numgap::num_nodes(target) - 1));
    return options;
}

NUMGAP_FUZZ_TARGET(graph_json) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const numgap::io::run_manifest manifest = numgap::io::parse_run_manifest(text, "graph.json");
        const numgap::basic_graph reference = graph_of(manifest);
        const numgap::basic_graph target = graph_of(mutated(manifest, hash_of(text)));
        for (const numgap::basic_graph* other : {&reference, &target}) {
            match_every_way(reference, *other, {});
            match_every_way(reference, *other, other_options(reference, *other));
        }
    } catch (const numgap::error& failure) {
        numgap::fuzz::refused(failure);
    }
    return 0;
}

} // namespace graph_json_target
