#pragma once
// run_graph: the numgap::basic_graph of a run directory, from its manifest.
//
// With graph.json: one node per `nodes` entry (name, op, debug handles,
// output keys); node A produces node B when B lists one of A's output keys in
// `inputs`. An input key no node produces is a graph input: it becomes a node
// of op "input" named after the key (or "input:<key>" when a node already
// has that name, and "input:<key>#2", "#3", ... when that is taken too: a
// graph.json may name a node "input:x", and node names must stay unique for
// matching), so a dumped model input is compared too and an error that
// enters through it is traced to it rather than blamed on its first consumer.
// Without graph.json: every tensor key is a node of its own, named by the key,
// with no op and no edges.
// The manifest reader already refuses duplicate names, tensors produced twice
// and nodes reading a later node's output (which is how a cycle shows up in a
// file listed producers-before-consumers), so the result is in topological
// order by construction.
// Complexity: O(nodes + edges + keys) expected. Throws: numgap::error from
// basic_graph on inconsistencies the reader did not catch; std::bad_alloc.
#include <cstddef>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/graph/basic_graph.hpp>
#include <numgap/io/run_manifest.hpp>

namespace numgap {

template <class KeyRange>
basic_graph run_graph(const io::run_manifest& manifest, const KeyRange& tensor_keys) {
    basic_graph graph;
    if (!manifest.has_graph) {
        for (const auto& key : tensor_keys) graph.add_node(std::string(key), {}, {}, {}, {std::string(key)});
        return graph;
    }
    std::unordered_map<std::string, std::size_t> producer_of_key;
    std::unordered_set<std::string> node_names;
    for (const io::node_spec& node : manifest.nodes) node_names.insert(node.name);
    graph.reserve(manifest.nodes.size());
    for (const io::node_spec& node : manifest.nodes) {
        std::vector<std::size_t> producer_indices;
        for (const std::string& input : node.inputs) {
            auto found = producer_of_key.find(input);
            if (found == producer_of_key.end()) {
                // Producers come first in graph.json, so an unknown key here is a graph input.
                std::string name = input;
                if (node_names.count(name)) name = "input:" + input;
                for (int suffix = 2; node_names.count(name); ++suffix)
                    name = "input:" + input + "#" + std::to_string(suffix);
                node_names.insert(name);
                const std::size_t index = graph.add_node(std::move(name), "input", {}, {}, {input});
                found = producer_of_key.emplace(input, index).first;
            }
            producer_indices.push_back(found->second);
        }
        const std::size_t index =
            graph.add_node(node.name, node.op, std::move(producer_indices), node.debug_handles, node.outputs);
        if (node.outputs.empty()) graph.set_output_keys(index, {});
        for (const std::string& output : node.outputs) producer_of_key.emplace(output, index);
    }
    return graph;
}

} // namespace numgap
