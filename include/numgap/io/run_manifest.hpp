#pragma once
// numgap::io::run_manifest: the contents of a run directory's graph.json as
// plain structs, fully validated.
//
// Format (run directory format version 1; all fields but nodes[].name optional):
//   { "version": 1,
//     "nodes": [ {"name": "conv1", "op": "aten.convolution.default",
//                 "inputs": ["x"], "outputs": ["conv1"], "debug_handles": [4, 5]} ],
//     "tensors": { "conv1": {"file": "out/conv1.raw", "dtype": "uint8", "shape": [1, 56, 56, 64],
//                            "axis_order": [0, 2, 3, 1], "scale": 0.0235, "zero_point": 128} },
//     "metadata": <anything> }
// Nodes are listed producers before consumers; `outputs` defaults to [name].
// A tensor's `file` defaults to "<key>.npy"; `dtype` and `shape` are required
// for raw (headerless) files; `axis_order[i]` is the reference dimension of
// stored dimension i; quantization is real = scale * (q - zero_point), either
// per tensor (`scale` a number, `zero_point` an integer, default 0) or per
// channel (`scale` an array, `zero_point` an array of the same length or one
// integer for all, and `quant_axis`, a *stored* dimension, like
// numgap::quantization::axis). Only integer dtypes may be quantized.
// Block (group) quantization (core/quantization.hpp) is
//   "block": {"size": 32, "axis": -1, "scales": "key-or-file",
//             "zero_points": "key-or-file"}
// with `size` >= 1, `axis` a stored dimension (negative counts from the end,
// default -1), `scales` required and `zero_points` optional: each the key of
// another tensor of the run or a file inside the run folder (.npy), resolved
// when the tensor is loaded (run_directory::load). It excludes "scale",
// "zero_point" and "quant_axis". Besides integers, the MX element formats
// (float8_e4m3fn / e5m2, float6_e2m3fn / e3m2fn, float4_e2m1fn) take a
// "block" (scales only): an OCP MX tensor (here MXFP4) is
//   "w": {"dtype": "float4_e2m1fn", "block": {"size": 32, "scales": "w_scales"}},
//   "w_scales": {"dtype": "float8_e8m0fnu"}
// with the e8m0 scales a tensor of the run ('|V1' .npy or raw bytes, declared
// float8_e8m0fnu; or any float dtype). MXINT8 is "int8" with scales that
// already hold e8m0 * 2^-6 (core/float_mx.hpp), e.g. a float32 .npy.
// Tensor-parallel shards (io/sharded_tensor.hpp loads them) replace "file":
//   "shards": [{"file": "w.rank0.npy", "axis": 1, "offset": 0},
//              {"file": "w.rank1.npy", "axis": 1, "offset": 512}]
// one entry per file (1 to max_segments), each naming a file of the run, the
// stored dimension it is sliced along (the same in every entry, negative from
// the end) and where along it the slice starts; offsets distinct, files
// distinct. An entry may instead name a key of a safetensors file, the
// layout of per-rank dumps that repeat the same keys:
//   {"file": "rank1/model.safetensors", "key": "w", "axis": 1, "offset": 512}
// (file and key distinct per entry; such files are the shards' containers,
// not part of the run's own keys). That the offsets tile the dimension
// exactly is checked when the shards' shapes are known (loading). Excludes
// "file" and "block".
//
// Validation is strict because a silently ignored field gives wrong numbers
// (a misspelt "zero_pont" would drop the offset): unknown keys are errors
// except "metadata" at the top level and in nodes, which producers may use
// freely. Also rejected: a wrong type for any field, duplicate node names, a
// tensor produced by two nodes, a node reading a tensor that a later node
// produces, negative or over-rank shapes, axis_order that is not a permutation,
// non-finite or zero scales, zero points outside int32, per-channel arrays
// whose length disagrees with each other or with the shape, and a version
// other than 1. Each error reads "<file>:<line>:<column>: <what and why>" and
// names the node or tensor; where() holds the file and line:column (and the
// node for graph errors). Kinds: dtype for an unknown or unquantizable dtype,
// limit for a rank above max_rank, shape for lengths that disagree with the
// shape, graph for the producer rules, schema for the rest.
//
// Complexity: O(text + nodes + tensors log tensors). Throws numgap::error.
//
// Longer than ~350 lines: one strict reader whose checks share the position
// bookkeeping and error scheme; the checks read best in one place, and the
// piecewise reader (read_piecewise, for million-node files) runs the very
// same checks per entry, so it lives beside them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/boxed.hpp>
#include <numgap/core/config.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/key_index.hpp>
#include <numgap/core/segmented_view.hpp>
#include <numgap/io/json.hpp>
#include <numgap/io/node_table.hpp>

namespace numgap::io {

inline constexpr int run_format_version = 1;

struct tensor_spec {
    std::string key;
    // Relative to the run directory; default key + ".npy". Empty for a key
    // of a container file (a safetensors key: its source_slot names the file).
    std::string file;
    std::optional<dtype> type;
    std::optional<std::vector<std::int64_t>> shape;
    boxed<std::vector<int>> axis_order; // rarely given: boxed (core/boxed.hpp), 8 bytes when absent
    // Affine quantization ("scale", "zero_point", "quant_axis"): per tensor,
    // one scale and one zero point and axis -1; per channel, one of each per
    // index of stored dimension `axis`. Boxed like axis_order; empty: the
    // tensor is not quantized this way.
    struct affine_spec {
        std::vector<float> scales;
        std::vector<std::int32_t> zero_points;
        int axis = -1;
        bool operator==(const affine_spec&) const = default;
    };
    boxed<affine_spec> affine;
    // Block quantization: its parameters are other tensors of the run (or
    // files in it), named here and read by run_directory::load.
    struct block_spec {
        std::int64_t size = 0;
        int axis = -1;
        std::string scales, zero_points; // zero_points empty: all zero
    };
    boxed<block_spec> block; // boxed like axis_order
    // Tensor-parallel shards: the tensor is stored as these files (or keys
    // of these safetensors files, when `key` is not empty) instead of `file`,
    // each the slice starting at `offset` along stored dimension shard_axis
    // (negative counts from the end). Sorted by offset; empty: one file.
    struct shard_file {
        std::string file;
        std::int64_t offset = 0;
        std::string key;
    };
    std::vector<shard_file> shards;
    int shard_axis = 0;
    // Set by the run source that made the spec (never read from graph.json):
    // where that source keeps the tensor, so that load() goes there without
    // searching its keys again. A hint: the source checks it against `key`
    // and searches when it does not fit (a spec copied into another run, or
    // made by hand). Beside shard_axis, in what would be padding.
    std::uint32_t source_slot = no_source_slot;
    static constexpr std::uint32_t no_source_slot = 0xffffffffu;
};

// `stored`, a shape in the tensor's stored dimension order, in the
// reference's dimension order: axis_order[i] is the reference dimension of
// stored dimension i (the stored shape itself without axis_order, or when
// the ranks disagree, which loading reports as an error).
inline std::vector<std::int64_t> reference_order_shape(const tensor_spec& spec,
                                                       const std::vector<std::int64_t>& stored) {
    if (!spec.axis_order || spec.axis_order->size() != stored.size()) return stored;
    std::vector<std::int64_t> reference(stored.size());
    for (std::size_t i = 0; i < stored.size(); ++i) reference[std::size_t((*spec.axis_order)[i])] = stored[i];
    return reference;
}

struct run_manifest {
    node_table nodes; // outputs default to {name}
    // Sorted by key (parse_run_manifest and run_directory keep it so): find_tensor
    // binary-searches, O(log n). Code that edits the vector must keep the order.
    // An opened run lists here the tensors graph.json describes and those of
    // files of their own, not a container's keys (a safetensors file's) that
    // graph.json does not describe: run_directory::keys() lists every key.
    std::vector<tensor_spec> tensors;
    bool has_graph = false;

    const tensor_spec* find_tensor(std::string_view key) const {
        const auto found = std::lower_bound(tensors.begin(), tensors.end(), key,
                                            [](const tensor_spec& spec, std::string_view k) { return spec.key < k; });
        return found != tensors.end() && found->key == key ? &*found : nullptr;
    }
};

namespace detail {

class manifest_reader {
public:
    explicit manifest_reader(std::string_view file_name) : file_name_(file_name) {}

    run_manifest read(const json_value& root) {
        run_manifest manifest;
        manifest.has_graph = true;
        if (!root.is_object()) fail(root, "expected an object at the top level, found " + found(root));
        for (const json_member& member : root.as_object()) {
            if (member.key == "nodes")
                read_nodes(member.value, manifest);
            else if (member.key == "tensors")
                read_tensors(member.value, manifest);
            else if (member.key == "version") {
                if (!member.value.is_integer() || member.value.as_integer() != run_format_version)
                    fail(member.value, "\"version\" must be " + std::to_string(run_format_version) +
                                           " (the run directory format this numgap reads)");
            } else if (member.key != "metadata") {
                fail(member.value, "unknown top-level key \"" + member.key +
                                       "\" (expected \"nodes\", \"tensors\", \"version\" or \"metadata\")");
            }
        }
        check_graph(manifest);
        std::sort(manifest.tensors.begin(), manifest.tensors.end(),
                  [](const tensor_spec& a, const tensor_spec& b) { return a.key < b.key; });
        return manifest;
    }

    // A document read piecewise (json_stream), for graph.json files too large
    // for a tree (a kilobyte per node): each node and tensor entry is parsed
    // into a small tree and checked by the same code as read(root). Anything
    // this reader cannot state exactly as read(root) would (a syntax error,
    // a value of the wrong type where a container was expected, a graph rule
    // broken, a duplicate key) throws needs_tree or numgap::error, and
    // parse_run_manifest rereads the file as a tree, so every message and
    // location stays the tree reader's.
    struct needs_tree {};

    run_manifest read_piecewise(std::string_view text) {
        json_stream stream(text, file_name_);
        if (stream.peek_significant() != '{') throw needs_tree{};
        run_manifest manifest;
        manifest.has_graph = true;
        stream.read_object(1, true, [&](const std::string& key) {
            if (key == "nodes") {
                if (stream.peek_significant() != '[') throw needs_tree{};
                // At most one node per '{' ahead, each at least {"name":"x"}:
                // reserved, not grown by doubling. Untouched capacity costs
                // address space only (a guess too large for it is dropped).
                const std::size_t expected = stream.bound_ahead('{', 12);
                try {
                    manifest.nodes.reserve(manifest.nodes.size() + expected);
                } catch (const std::bad_alloc&) {
                }
                streamed_node node;
                stream.read_array(2, [&] { read_streamed_node(stream, manifest, node); });
            } else if (key == "tensors") {
                if (stream.peek_significant() != '{') throw needs_tree{};
                stream.read_object(2, false, [&](const std::string& tensor_key) {
                    read_tensor_member(tensor_key, stream.read_value(2), manifest);
                });
            } else if (key == "version") {
                const json_value version = stream.read_value(1);
                if (!version.is_integer() || version.as_integer() != run_format_version) throw needs_tree{};
            } else if (key == "metadata") {
                (void)stream.read_value(1);
            } else {
                throw needs_tree{};
            }
        });
        stream.finish();
        check_graph(manifest);
        std::sort(manifest.tensors.begin(), manifest.tensors.end(),
                  [](const tensor_spec& a, const tensor_spec& b) { return a.key < b.key; });
        // Duplicate "tensors" keys were not checked while reading: sorted, they are neighbours.
        for (std::size_t i = 1; i < manifest.tensors.size(); ++i)
            if (manifest.tensors[i].key == manifest.tensors[i - 1].key) throw needs_tree{};
        return manifest;
    }

private:
    [[noreturn]] void fail(const json_value& at, const std::string& reason, error_kind kind = error_kind::schema,
                           std::string item = {}) const {
        throw error(kind,
                    std::string(file_name_) + ":" + std::to_string(at.line()) + ":" + std::to_string(at.column()) +
                        ": " + reason,
                    error_location::at_line(std::string(file_name_), std::uint32_t(at.line()),
                                            std::uint32_t(at.column()), std::move(item)));
    }
    static std::string shortest(double value) {
        std::string text;
        write_json_number(text, value);
        return text;
    }
    static std::string found(const json_value& value) { return std::string(json_value::describe(value.type())); }

    std::string string_field(const json_value& value, const std::string& context, std::string_view field) const {
        if (!value.is_string())
            fail(value, context + ": \"" + std::string(field) + "\" must be a string, found " + found(value));
        return value.as_string();
    }
    std::vector<std::string> strings_field(const json_value& value, const std::string& context,
                                           std::string_view field) const {
        if (!value.is_array())
            fail(value, context + ": \"" + std::string(field) + "\" must be an array of strings, found " + found(value));
        std::vector<std::string> strings;
        for (const json_value& element : value.as_array()) {
            if (!element.is_string())
                fail(element, context + ": \"" + std::string(field) + "\" must hold only strings, found " + found(element));
            strings.push_back(element.as_string());
        }
        return strings;
    }
    std::int64_t integer(const json_value& value, const std::string& context, std::string_view field,
                         std::int64_t minimum, std::int64_t maximum) const {
        if (!value.is_integer())
            fail(value, context + ": \"" + std::string(field) + "\" must hold integers, found " +
                            (value.is_number() ? "a non-integer number" : found(value)));
        const std::int64_t result = value.as_integer();
        if (result < minimum || result > maximum)
            fail(value, context + ": \"" + std::string(field) + "\" value " + std::to_string(result) +
                            " is outside [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "]");
        return result;
    }
    std::vector<std::int64_t> integers_field(const json_value& value, const std::string& context,
                                             std::string_view field, std::int64_t minimum,
                                             std::int64_t maximum) const {
        if (!value.is_array())
            fail(value, context + ": \"" + std::string(field) + "\" must be an array of integers, found " +
                            found(value));
        std::vector<std::int64_t> integers;
        for (const json_value& element : value.as_array())
            integers.push_back(integer(element, context, field, minimum, maximum));
        return integers;
    }

    void read_nodes(const json_value& nodes, run_manifest& manifest) {
        if (!nodes.is_array()) fail(nodes, "\"nodes\" must be an array, found " + found(nodes));
        for (const json_value& entry : nodes.as_array()) {
            read_node(entry, manifest);
            node_values_.push_back(&entry);
        }
    }

    void read_node(const json_value& entry, run_manifest& manifest) const {
        const std::string position = "node " + std::to_string(manifest.nodes.size());
        if (!entry.is_object()) fail(entry, position + " must be an object, found " + found(entry));
        const json_value* name = entry.find("name");
        if (name == nullptr) fail(entry, position + " has no \"name\"");
        node_spec node;
        node.name = string_field(*name, position, "name");
        if (node.name.empty()) fail(*name, position + ": \"name\" is empty");
        const std::string context = "node '" + node.name + "'";
        if (manifest.nodes.size() >= numgap::detail::max_key_positions)
            fail(*name, "more than 2^31 - 1 nodes", error_kind::limit, node.name);
        if (manifest.nodes.find(node.name)) fail(*name, context + " appears twice in \"nodes\"");
        bool has_outputs = false;
        for (const json_member& member : entry.as_object()) {
            if (member.key == "name" || member.key == "metadata") continue;
            if (member.key == "op")
                node.op = string_field(member.value, context, "op");
            else if (member.key == "inputs")
                node.inputs = strings_field(member.value, context, "inputs");
            else if (member.key == "outputs") {
                node.outputs = strings_field(member.value, context, "outputs");
                has_outputs = true;
            } else if (member.key == "debug_handles")
                node.debug_handles = integers_field(member.value, context, "debug_handles",
                                                    std::numeric_limits<std::int64_t>::min(),
                                                    std::numeric_limits<std::int64_t>::max());
            else
                fail(member.value, context + ": unknown key \"" + member.key +
                                       "\" (expected \"name\", \"op\", \"inputs\", \"outputs\", "
                                       "\"debug_handles\" or \"metadata\")");
        }
        if (!has_outputs) node.outputs = {node.name};
        manifest.nodes.push_back(node);
    }

    // A node read straight from the stream, without a tree of it (a tree
    // per node was most of the reading's allocations): only the shape every
    // valid node has (string name and op, arrays of strings and integers,
    // any metadata). Anything else, valid or not, throws needs_tree, so
    // read(root)'s code decides and words every error. The strings go into
    // buffers reused node after node (`node`): a million nodes' names,
    // ops and inputs allocate nothing once the buffers have grown.
    struct streamed_node {
        std::string name, op;
        std::vector<std::string> inputs, outputs; // the first input_count, output_count in use
        std::size_t input_count = 0, output_count = 0;
        std::vector<std::int64_t> debug_handles;
    };
    void read_streamed_node(json_stream& stream, run_manifest& manifest, streamed_node& node) const {
        if (stream.peek_significant() != '{') throw needs_tree{};
        constexpr int depth = 3; // the document, "nodes", the node
        node.op.clear();
        node.input_count = node.output_count = 0;
        node.debug_handles.clear();
        bool has_name = false, has_outputs = false;
        const auto read_string = [&](std::string& into) {
            if (!stream.read_string(into)) throw needs_tree{};
        };
        const auto read_strings = [&](std::vector<std::string>& strings, std::size_t& count) {
            if (stream.peek_significant() != '[') throw needs_tree{};
            count = 0;
            stream.read_array(depth + 1, [&] {
                if (count == strings.size()) strings.emplace_back();
                read_string(strings[count++]);
            });
        };
        stream.read_object(depth, true, [&](const std::string& key) {
            if (key == "name") {
                read_string(node.name);
                has_name = true;
            } else if (key == "op") {
                read_string(node.op);
            } else if (key == "inputs") {
                read_strings(node.inputs, node.input_count);
            } else if (key == "outputs") {
                read_strings(node.outputs, node.output_count);
                has_outputs = true;
            } else if (key == "debug_handles") {
                if (stream.peek_significant() != '[') throw needs_tree{};
                stream.read_array(depth + 1, [&] {
                    const std::optional<std::int64_t> plain = stream.read_plain_integer();
                    if (plain) {
                        node.debug_handles.push_back(*plain);
                        return;
                    }
                    const json_value handle = stream.read_value(depth + 1);
                    if (!handle.is_integer()) throw needs_tree{};
                    node.debug_handles.push_back(handle.as_integer());
                });
            } else if (key == "metadata") {
                (void)stream.read_value(depth);
            } else {
                throw needs_tree{};
            }
        });
        if (!has_name || node.name.empty() || manifest.nodes.size() >= numgap::detail::max_key_positions)
            throw needs_tree{};
        const std::span<const std::string> outputs =
            has_outputs ? std::span<const std::string>(node.outputs.data(), node.output_count)
                        : std::span<const std::string>(&node.name, 1); // graph.json's default: the name
        if (!manifest.nodes.push_back(node.name, node.op,
                                      std::span<const std::string>(node.inputs.data(), node.input_count), outputs,
                                      node.debug_handles))
            throw needs_tree{}; // a name seen before
    }

    // Producers before consumers, and one producer per tensor. Read
    // piecewise, the nodes' values are gone: a violation throws
    // needs_tree and the tree reader locates it.
    void check_graph(const run_manifest& manifest) const {
        const auto fail = [&](const json_value* const& at, const std::string& reason, error_kind kind,
                              std::string item) {
            if (node_values_.size() != manifest.nodes.size()) throw needs_tree{};
            this->fail(*at, reason, kind, std::move(item));
        };
        // Each output key -> (node, output) that first produces it; the
        // index compares against the manifest's own strings.
        std::vector<std::pair<std::size_t, std::size_t>> produced;
        produced.reserve(manifest.nodes.size());
        const node_table& nodes = manifest.nodes;
        numgap::detail::positional_key_index producer(
            [&](std::size_t i) { return nodes.outputs(produced[i].first)[produced[i].second]; }, nodes.size());
        for (std::size_t i = 0; i < nodes.size(); ++i)
            for (std::size_t k = 0; k < nodes.outputs(i).size(); ++k) {
                const std::string_view output = nodes.outputs(i)[k];
                if (produced.size() >= numgap::detail::max_key_positions)
                    throw error(error_kind::limit, std::string(file_name_) + ": more than 2^31 - 1 output keys",
                                error_location::in_file(std::string(file_name_)));
                const auto [where, inserted] = producer.insert(output, produced.size());
                if (inserted) {
                    produced.emplace_back(i, k);
                    continue;
                }
                fail(node_values_.empty() ? nullptr : node_values_[i],
                     "node '" + std::string(nodes.name(i)) + "': tensor '" + std::string(output) +
                         "' is already an output of node '" + std::string(nodes.name(produced[where].first)) + "'",
                     error_kind::graph, std::string(nodes.name(i)));
            }
        for (std::size_t i = 0; i < nodes.size(); ++i)
            for (const std::string_view input : nodes.inputs(i)) {
                const std::optional<std::uint32_t> where = producer.find(input);
                const std::size_t producer_node = where ? produced[*where].first : 0;
                if (where && producer_node >= i)
                    fail(node_values_.empty() ? nullptr : node_values_[i],
                         "node '" + std::string(nodes.name(i)) + "' reads tensor '" + std::string(input) +
                             "', which node '" + std::string(nodes.name(producer_node)) + "' produces " +
                             (producer_node == i ? "itself" : "later in the list") +
                             " (nodes must be listed producers before consumers)",
                         error_kind::graph, std::string(nodes.name(i)));
            }
    }

    void read_tensors(const json_value& tensors, run_manifest& manifest) {
        if (!tensors.is_object())
            fail(tensors, "\"tensors\" must be an object keyed by tensor key, found " + found(tensors));
        for (const json_member& member : tensors.as_object()) read_tensor_member(member.key, member.value, manifest);
    }

    void read_tensor_member(const std::string& key, const json_value& value, run_manifest& manifest) const {
        const std::string context = "tensor '" + key + "'";
        if (key.empty()) fail(value, "\"tensors\" has an empty key");
        if (!value.is_object()) fail(value, context + " must be an object, found " + found(value));
        manifest.tensors.push_back(read_tensor(key, value, context));
    }

    tensor_spec read_tensor(const std::string& key, const json_value& entry, const std::string& context) const {
        tensor_spec spec;
        spec.key = key;
        spec.file = key + ".npy";
        const json_value *scale = nullptr, *zero_point = nullptr, *quant_axis = nullptr, *axis_order = nullptr,
                         *type = nullptr, *block = nullptr, *shards = nullptr, *file = nullptr;
        for (const json_member& member : entry.as_object()) {
            if (member.key == "file") {
                file = &member.value;
                spec.file = string_field(member.value, context, "file");
                if (spec.file.empty()) fail(member.value, context + ": \"file\" is empty");
            } else if (member.key == "dtype") {
                type = &member.value;
                spec.type = parse_dtype(string_field(member.value, context, "dtype"));
                if (!spec.type) {
                    std::string expected; // every canonical name, so the list never falls behind all_dtypes
                    for (const dtype known : all_dtypes) expected += (expected.empty() ? "" : ", ") + std::string(name_of(known));
                    fail(member.value,
                         context + ": unknown dtype \"" + member.value.as_string() + "\" (expected one of " + expected + ")",
                         error_kind::dtype, key);
                }
            } else if (member.key == "shape") {
                spec.shape = integers_field(member.value, context, "shape", 0, std::numeric_limits<std::int64_t>::max());
                if (spec.shape->size() > std::size_t(max_rank))
                    fail(member.value,
                         context + ": \"shape\" has rank " + std::to_string(spec.shape->size()) +
                             ", above numgap's maximum rank " + std::to_string(max_rank),
                         error_kind::limit, key);
            } else if (member.key == "axis_order") {
                axis_order = &member.value;
                std::vector<int> order;
                for (std::int64_t axis : integers_field(member.value, context, "axis_order", 0, max_rank - 1))
                    order.push_back(int(axis));
                spec.axis_order = std::move(order);
            } else if (member.key == "scale") {
                scale = &member.value;
            } else if (member.key == "zero_point") {
                zero_point = &member.value;
            } else if (member.key == "quant_axis") {
                quant_axis = &member.value;
            } else if (member.key == "block") {
                block = &member.value;
                spec.block = read_block(member.value, context);
            } else if (member.key == "shards") {
                shards = &member.value;
                read_shards(member.value, context, key, spec);
            } else {
                fail(member.value, context + ": unknown key \"" + member.key +
                                       "\" (expected \"file\", \"dtype\", \"shape\", \"axis_order\", \"scale\", "
                                       "\"zero_point\", \"quant_axis\", \"block\" or \"shards\")");
            }
        }
        if (shards != nullptr) {
            if (file != nullptr)
                fail(*file, context + ": \"file\" and \"shards\" are given; a tensor is one file or several shards");
            if (block != nullptr)
                fail(*block, context + ": \"block\" and \"shards\" are given; block-quantized shards are not "
                                       "supported (their parameters would have to be split too)");
            const int rank = spec.shape ? int(spec.shape->size()) : max_rank;
            if (spec.shape && (spec.shard_axis >= rank || spec.shard_axis < -rank))
                fail(*shards,
                     context + ": \"shards\" axis " + std::to_string(spec.shard_axis) +
                         " is not a dimension of shape of rank " + std::to_string(rank),
                     error_kind::shape, key);
            spec.file.clear();
        }
        if (spec.axis_order) {
            std::vector<bool> seen(spec.axis_order->size(), false);
            for (int axis : *spec.axis_order) {
                if (std::size_t(axis) >= seen.size() || seen[std::size_t(axis)])
                    fail(*axis_order, context + ": \"axis_order\" must be a permutation of 0.." +
                                          std::to_string(int(seen.size()) - 1));
                seen[std::size_t(axis)] = true;
            }
            if (spec.shape && spec.shape->size() != spec.axis_order->size())
                fail(*axis_order,
                     context + ": \"axis_order\" has " + std::to_string(spec.axis_order->size()) +
                         " entries but \"shape\" has rank " + std::to_string(spec.shape->size()),
                     error_kind::shape, key);
        }
        read_quantization(spec, context, scale, zero_point, quant_axis);
        if (block != nullptr) {
            if (spec.affine)
                fail(*block, context + ": \"block\" and \"scale\" are given; a tensor is quantized per tensor, per "
                                       "channel or per block, not two of them");
            if (spec.type && !is_integer(*spec.type) && !is_mx_element(*spec.type))
                fail(*type,
                     context + ": \"block\" is given but dtype " + std::string(name_of(*spec.type)) +
                         " is neither an integer type nor an MX element format (float8_e4m3fn, float8_e5m2, "
                         "float6_e2m3fn, float6_e3m2fn, float4_e2m1fn); only those can be block-quantized",
                     error_kind::dtype, key);
            if (spec.type && is_mx_element(*spec.type) && !spec.block->zero_points.empty())
                fail(*block,
                     context + ": \"block\" gives \"zero_points\" for dtype " + std::string(name_of(*spec.type)) +
                         "; an MX element format takes scales only (value = scale * decode(code))",
                     error_kind::schema, key);
            const int rank = spec.shape ? int(spec.shape->size()) : max_rank;
            if (spec.shape && (spec.block->axis >= rank || spec.block->axis < -rank))
                fail(*block,
                     context + ": \"block\" axis " + std::to_string(spec.block->axis) +
                         " is not a dimension of shape of rank " + std::to_string(rank),
                     error_kind::shape, key);
        }
        if (spec.affine && spec.type && !is_integer(*spec.type))
            fail(*type,
                 context + ": \"scale\" is given but dtype " + std::string(name_of(*spec.type)) +
                     " is not an integer type; only integer tensors can be quantized",
                 error_kind::dtype, key);
        if (spec.affine && spec.affine->axis >= 0 && spec.shape) {
            if (std::size_t(spec.affine->axis) >= spec.shape->size())
                fail(*quant_axis,
                     context + ": \"quant_axis\" " + std::to_string(spec.affine->axis) +
                         " is not a dimension of shape of rank " + std::to_string(spec.shape->size()),
                     error_kind::shape, key);
            const std::int64_t channels = (*spec.shape)[std::size_t(spec.affine->axis)];
            if (std::int64_t(spec.affine->scales.size()) != channels)
                fail(*scale,
                     context + ": \"scale\" has " + std::to_string(spec.affine->scales.size()) +
                         " entries but dimension " + std::to_string(spec.affine->axis) + " of \"shape\" has " +
                         std::to_string(channels),
                     error_kind::shape, key);
        }
        return spec;
    }

    void read_shards(const json_value& value, const std::string& context, const std::string& key,
                     tensor_spec& spec) const {
        if (!value.is_array()) fail(value, context + ": \"shards\" must be an array of objects, found " + found(value));
        const auto& entries = value.as_array();
        if (entries.empty()) fail(value, context + ": \"shards\" is empty (leave it out for a tensor in one file)");
        if (entries.size() > max_segments)
            fail(value,
                 context + ": \"shards\" lists " + std::to_string(entries.size()) + " files, above numgap's limit of " +
                     std::to_string(max_segments),
                 error_kind::limit, key);
        for (std::size_t i = 0; i < entries.size(); ++i) {
            const json_value& entry = entries[i];
            const std::string where = context + ": shard " + std::to_string(i);
            if (!entry.is_object()) fail(entry, where + " must be an object, found " + found(entry));
            tensor_spec::shard_file shard;
            const json_value *file = nullptr, *axis = nullptr, *offset = nullptr, *stored_key = nullptr;
            for (const json_member& member : entry.as_object()) {
                if (member.key == "file") file = &member.value;
                else if (member.key == "axis") axis = &member.value;
                else if (member.key == "offset") offset = &member.value;
                else if (member.key == "key") stored_key = &member.value;
                else
                    fail(member.value, where + ": unknown key \"" + member.key +
                                           "\" (expected \"file\", \"key\", \"axis\" or \"offset\")");
            }
            if (file == nullptr || axis == nullptr || offset == nullptr)
                fail(entry, where + " needs \"file\", \"axis\" and \"offset\"");
            shard.file = string_field(*file, where, "file");
            if (shard.file.empty()) fail(*file, where + ": \"file\" is empty");
            if (stored_key != nullptr) {
                shard.key = string_field(*stored_key, where, "key");
                if (shard.key.empty()) fail(*stored_key, where + ": \"key\" is empty");
                if (!shard.file.ends_with(".safetensors"))
                    fail(*stored_key, where + " names key '" + shard.key + "' of file '" + shard.file +
                                          "', which is not a .safetensors file");
            }
            shard.offset = integer(*offset, where, "offset", 0, std::numeric_limits<std::int64_t>::max());
            const int shard_axis = int(integer(*axis, where, "axis", -max_rank, max_rank - 1));
            if (i != 0 && shard_axis != spec.shard_axis)
                fail(*axis, where + " is split along axis " + std::to_string(shard_axis) + " but shard 0 along axis " +
                                std::to_string(spec.shard_axis) + "; a tensor is split along one axis",
                     error_kind::shape, key);
            spec.shard_axis = shard_axis;
            for (const tensor_spec::shard_file& earlier : spec.shards) {
                if (earlier.offset == shard.offset)
                    fail(*offset, where + " starts at offset " + std::to_string(shard.offset) +
                                      ", like an earlier shard (shards must not overlap)", error_kind::shape, key);
                if (earlier.file == shard.file && earlier.key == shard.key)
                    fail(*file,
                         where + " names " + (shard.key.empty() ? "" : "key '" + shard.key + "' of ") + "file '" +
                             shard.file + "' again",
                         error_kind::schema, key);
            }
            spec.shards.push_back(std::move(shard));
        }
        std::sort(spec.shards.begin(), spec.shards.end(),
                  [](const tensor_spec::shard_file& a, const tensor_spec::shard_file& b) { return a.offset < b.offset; });
    }

    tensor_spec::block_spec read_block(const json_value& value, const std::string& context) const {
        if (!value.is_object()) fail(value, context + ": \"block\" must be an object, found " + found(value));
        tensor_spec::block_spec block;
        const json_value* size = nullptr;
        bool has_scales = false;
        for (const json_member& member : value.as_object()) {
            if (member.key == "size") {
                size = &member.value;
                // Any positive size; one above the axis length is one block per row.
                block.size = integer(member.value, context, "block size", 1, std::numeric_limits<std::int64_t>::max());
            } else if (member.key == "axis") {
                block.axis = int(integer(member.value, context, "block axis", -max_rank, max_rank - 1));
            } else if (member.key == "scales" || member.key == "zero_points") {
                std::string name = string_field(member.value, context, "block " + member.key);
                if (name.empty()) fail(member.value, context + ": \"block\" \"" + member.key + "\" is empty");
                (member.key == "scales" ? block.scales : block.zero_points) = std::move(name);
                has_scales |= member.key == "scales";
            } else {
                fail(member.value, context + ": unknown key \"" + member.key +
                                       "\" in \"block\" (expected \"size\", \"axis\", \"scales\" or \"zero_points\")");
            }
        }
        if (size == nullptr) fail(value, context + ": \"block\" has no \"size\"");
        if (!has_scales) fail(value, context + ": \"block\" has no \"scales\" (a tensor key or a file of the run)");
        return block;
    }

    float scale_value(const json_value& value, const std::string& context) const {
        if (!value.is_number())
            fail(value, context + ": \"scale\" must be a number or an array of numbers, found " + found(value));
        const double scale = value.as_number();
        const float narrowed = static_cast<float>(scale);
        if (!std::isfinite(narrowed) || narrowed == 0.0f)
            fail(value, context + ": \"scale\" " + shortest(scale) +
                            " must be finite and non-zero (as a float32)");
        return narrowed;
    }

    void read_quantization(tensor_spec& spec, const std::string& context, const json_value* scale,
                           const json_value* zero_point, const json_value* quant_axis) const {
        const auto zero_point_value = [&](const json_value& value) {
            return std::int32_t(integer(value, context, "zero_point", std::numeric_limits<std::int32_t>::min(),
                                        std::numeric_limits<std::int32_t>::max()));
        };
        if (scale == nullptr) {
            if (zero_point != nullptr) fail(*zero_point, context + ": \"zero_point\" is given without \"scale\"");
            if (quant_axis != nullptr) fail(*quant_axis, context + ": \"quant_axis\" is given without \"scale\"");
            return;
        }
        tensor_spec::affine_spec& affine = spec.affine.emplace();
        if (!scale->is_array()) {
            if (quant_axis != nullptr)
                fail(*quant_axis, context + ": \"quant_axis\" needs per-channel \"scale\" (an array), but \"scale\" "
                                            "is a single number");
            if (zero_point != nullptr && zero_point->is_array())
                fail(*zero_point, context + ": \"zero_point\" is an array but \"scale\" is a single number");
            affine.scales = {scale_value(*scale, context)};
            affine.zero_points = {zero_point != nullptr ? zero_point_value(*zero_point) : 0};
            return;
        }
        if (quant_axis == nullptr)
            fail(*scale, context + ": per-channel \"scale\" (an array) needs \"quant_axis\"");
        affine.axis = int(integer(*quant_axis, context, "quant_axis", 0, max_rank - 1));
        if (scale->as_array().empty()) fail(*scale, context + ": \"scale\" is an empty array");
        for (const json_value& element : scale->as_array()) affine.scales.push_back(scale_value(element, context));
        if (zero_point == nullptr) {
            affine.zero_points.assign(affine.scales.size(), 0);
        } else if (!zero_point->is_array()) {
            affine.zero_points.assign(affine.scales.size(), zero_point_value(*zero_point));
        } else {
            for (const json_value& element : zero_point->as_array())
                affine.zero_points.push_back(zero_point_value(element));
            if (affine.zero_points.size() != affine.scales.size())
                fail(*zero_point, context + ": \"zero_point\" has " + std::to_string(affine.zero_points.size()) +
                                      " entries but \"scale\" has " + std::to_string(affine.scales.size()));
        }
    }

    std::string_view file_name_;
    std::vector<const json_value*> node_values_;
};

} // namespace detail

// Parses graph.json text; `file_name_for_errors` starts every error message.
// The file is read piecewise (manifest_reader::read_piecewise: memory for
// the result, not for the file's tree); only a file that is wrong is read
// again as one tree, whose reader says what is wrong and where.
inline run_manifest parse_run_manifest(std::string_view json_text, std::string_view file_name_for_errors) {
    try {
        return detail::manifest_reader(file_name_for_errors).read_piecewise(json_text);
    } catch (const detail::manifest_reader::needs_tree&) {
    } catch (const error&) {
    }
    const json_value root = parse_json(json_text, file_name_for_errors);
    return detail::manifest_reader(file_name_for_errors).read(root);
}

} // namespace numgap::io
