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
// Shapes: every output key that graph.json's "tensors" gives a "shape" gets
// it as its output_shape, in reference dimension order (axis_order applied),
// so structural matching can tell branches of different widths apart. The
// run_directory overload also reads the .npy headers (only the headers) of
// the keys graph.json gives no shape for; pass read_headers = false when no
// structural matching will run (name or handle matching only), or
// run_graph_shapes::none to leave every shape out: only structural matching
// reads shapes, and a million nodes' shapes cost a few hundred MB and one
// spec lookup each; add_stored_shapes fills them in later, exactly as
// run_graph(run) would have.
// The manifest reader already refuses duplicate names, tensors produced twice
// and nodes reading a later node's output (which is how a cycle shows up in a
// file listed producers-before-consumers), so the result is in topological
// order by construction.
// Complexity: O(nodes + edges + keys) expected, plus one small file read per
// key without a declared shape when reading headers. Throws: numgap::error from
// basic_graph on inconsistencies the reader did not catch; std::bad_alloc.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/graph/basic_graph.hpp>
#include <numgap/io/run_directory.hpp>
#include <numgap/io/run_manifest.hpp>

namespace numgap {

namespace detail {
// Gives every output of `graph` whose shape is unknown the shape `shape_of(key)` returns, if any.
template <class ShapeOf> void fill_output_shapes(basic_graph& graph, ShapeOf&& shape_of) {
    for (std::size_t node = 0; node < graph.num_nodes(); ++node) {
        const basic_graph::text_list keys = graph.output_keys(node); // setting a shape leaves it valid
        for (std::size_t output = 0; output < keys.size(); ++output) {
            if (graph.output_shape(node, output)) continue;
            if (std::optional<shape_type> shape = shape_of(keys[output]))
                graph.set_output_shape(node, output, std::move(*shape));
        }
    }
}

// Gives every output of `graph` whose shape is unknown the shape its spec
// declares, if any; `find_spec(key)` is the manifest's binary search or an
// opened run's index.
template <class FindSpec>
void fill_declared_shapes(basic_graph& graph, FindSpec&& find_spec) {
    fill_output_shapes(graph, [&](std::string_view key) -> std::optional<shape_type> {
        const io::tensor_spec* spec = find_spec(key);
        if (spec == nullptr || !spec->shape) return std::nullopt;
        return io::reference_order_shape(*spec, *spec->shape);
    });
}

// run_graph(manifest, tensor_keys) without shapes.
template <class KeyRange>
basic_graph run_graph_nodes(const io::run_manifest& manifest, const KeyRange& tensor_keys) {
    basic_graph graph;
    if (!manifest.has_graph) {
        for (const auto& key : tensor_keys) graph.add_node(std::string(key), {}, {}, {}, {std::string(key)});
        return graph;
    }
    // Names and keys are looked up in the indices the manifest's node table
    // and the graph keep anyway (a million-node run has a million names and
    // keys: hashing each once more was a tenth of building the graph).
    const io::node_table& nodes = manifest.nodes;
    // A name is taken by a manifest node (added yet or not) or an input node
    // made here; a name no manifest node has can only be an input node's,
    // and those are unique, so find_first's answer is exact.
    const auto name_taken = [&](std::string_view name) {
        return nodes.find(name).has_value() || graph.find_first(name).has_value();
    };
    std::size_t name_chars = 0;
    for (std::size_t node = 0; node < nodes.size(); ++node) name_chars += nodes.name(node).size();
    graph.reserve(nodes.size(), name_chars);
    // Reused for every node: the graph copies them.
    std::vector<std::size_t> producer_indices;
    std::vector<std::int64_t> handles;
    std::vector<std::string> outputs;
    for (std::size_t node = 0; node < nodes.size(); ++node) {
        producer_indices.clear();
        for (const std::string_view input : nodes.inputs(node)) {
            std::optional<std::size_t> producer = graph.first_producer_of(input);
            if (!producer) {
                // Producers come first in graph.json, so an unknown key here is a graph input.
                std::string name(input);
                if (name_taken(name)) name = "input:" + std::string(input);
                for (int suffix = 2; name_taken(name); ++suffix)
                    name = "input:" + std::string(input) + "#" + std::to_string(suffix);
                producer = graph.add_node(name, "input", {}, {}, {std::string(input)});
            }
            producer_indices.push_back(*producer);
        }
        const auto node_handles = nodes.debug_handles(node);
        handles.assign(node_handles.begin(), node_handles.end());
        const auto node_outputs = nodes.outputs(node);
        outputs.resize(node_outputs.size());
        for (std::size_t k = 0; k < outputs.size(); ++k) outputs[k] = node_outputs[k];
        const std::size_t index = graph.add_node(nodes.name(node), nodes.op(node), producer_indices, handles, outputs);
        if (outputs.empty()) graph.set_output_keys(index, {});
    }
    return graph;
}
} // namespace detail

template <class KeyRange>
basic_graph run_graph(const io::run_manifest& manifest, const KeyRange& tensor_keys) {
    basic_graph graph = detail::run_graph_nodes(manifest, tensor_keys);
    detail::fill_declared_shapes(graph, [&](std::string_view key) { return manifest.find_tensor(key); });
    return graph;
}

// Gives every output of `graph` whose shape is still unknown the shape stored
// in `run` (the .npy header; only its bytes are read), for structural
// matching. Callers that may not need shapes (every reference node matched
// by handle or name) can build the graph without them and call this only
// when structure matching will run: one small read per file is most of the
// graph's cost for runs of many small tensors.
inline void add_stored_shapes(basic_graph& graph, const io::run_directory& run) {
    detail::fill_output_shapes(graph, [&](std::string_view key) { return run.stored_shape(key); });
}

// Which output shapes run_graph(run, ...) gives the nodes.
enum class run_graph_shapes {
    none,     // none (add_stored_shapes later gives what `stored` would have)
    declared, // the shapes the run declares: graph.json's, a container header's
    stored,   // declared, else read from the .npy headers (add_stored_shapes)
};

// The graph of an opened run: run_graph(run.manifest(), run.keys()) with the
// shapes `shapes` names.
inline basic_graph run_graph(const io::run_directory& run, run_graph_shapes shapes) {
    // With graph.json the nodes come from it, and the key list (a copy of every key) is not read.
    basic_graph graph = run.manifest().has_graph ? detail::run_graph_nodes(run.manifest(), std::vector<std::string>{})
                                                 : detail::run_graph_nodes(run.manifest(), run.keys());
    switch (shapes) {
    case run_graph_shapes::none: break;
    case run_graph_shapes::declared:
        detail::fill_declared_shapes(graph, [&](std::string_view key) { return run.find_tensor(key); });
        break;
    case run_graph_shapes::stored: add_stored_shapes(graph, run); break;
    }
    return graph;
}

// run_graph(run, stored) when `read_headers` is true, else run_graph(run, declared).
inline basic_graph run_graph(const io::run_directory& run, bool read_headers = true) {
    return run_graph(run, read_headers ? run_graph_shapes::stored : run_graph_shapes::declared);
}

} // namespace numgap
