#pragma once
// numgap::basic_graph: an owning graph that models every graph concept
// (names, op types, edges, debug handles, output keys and shapes). Convenient
// to build by hand, in tests, or from a run manifest.
//
// Nodes are appended with add_node and identified by their dense index.
// add_node only accepts producers that already exist, so a graph built with
// add_node alone is acyclic and in topological order; add_edge/set_producers
// may point anywhere inside the graph (to load files whose node order is not
// topological), and a cycle made that way is reported by
// numgap::topological_order.
//
// Names need not be unique (unnamed nodes are common); find() throws when
// the name it is asked for is ambiguous. Output keys must be unique per graph
// only for producer_of(). A node may have no outputs (set_output_keys(i, {})).
//
// Complexity: add_node O(#producers + #keys) amortised; find/producer_of O(1)
// expected. Throws numgap::error (naming the node) on a producer index that
// does not exist, an output index out of range, or an ambiguous lookup; its
// kind is graph and where().item the node, name or key at fault.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/core/error.hpp>
#include <numgap/graph/output_shape.hpp>

namespace numgap {

class basic_graph {
public:
    struct node_type {
        std::string name;
        std::string op;
        std::vector<std::size_t> producers;
        std::vector<std::int64_t> debug_handles;
        std::vector<std::string> output_keys;
        std::vector<std::optional<shape_type>> output_shapes; // one per output key
    };

    std::size_t add_node(std::string name, std::string op = {},
                         std::vector<std::size_t> producers = {},
                         std::vector<std::int64_t> debug_handles = {},
                         std::vector<std::string> output_keys = {}) {
        const std::size_t index = nodes_.size();
        for (std::size_t producer : producers) {
            if (producer >= index) {
                throw error(error_kind::graph,
                            "basic_graph: node '" + name + "' (index " + std::to_string(index) +
                                ") lists producer index " + std::to_string(producer) + ", but only " +
                                std::to_string(index) + " nodes exist; add producers first or use add_edge",
                            error_location::of_item(name));
            }
        }
        if (output_keys.empty()) output_keys.push_back(name);
        node_type node{std::move(name), std::move(op), std::move(producers),
                       std::move(debug_handles), std::move(output_keys), {}};
        node.output_shapes.resize(node.output_keys.size());
        nodes_.push_back(std::move(node));
        index_name(index);
        index_keys(index);
        return index;
    }

    // Adds the edge producer -> consumer (appended to the consumer's inputs).
    void add_edge(std::size_t producer, std::size_t consumer) {
        check_index(consumer, "add_edge consumer");
        check_producer(consumer, producer);
        if (producer >= consumer) index_order_is_topological_ = false;
        nodes_[consumer].producers.push_back(producer);
    }

    void set_producers(std::size_t node, std::vector<std::size_t> producers) {
        check_index(node, "set_producers");
        for (std::size_t producer : producers) {
            check_producer(node, producer);
            if (producer >= node) index_order_is_topological_ = false;
        }
        nodes_[node].producers = std::move(producers);
    }

    // Replaces the output keys (an empty list makes a node without outputs);
    // shapes are reset to unknown.
    void set_output_keys(std::size_t node, std::vector<std::string> keys) {
        check_index(node, "set_output_keys");
        nodes_[node].output_keys = std::move(keys);
        nodes_[node].output_shapes.assign(nodes_[node].output_keys.size(), std::nullopt);
        rebuild_key_index();
    }

    void set_output_shape(std::size_t node, std::size_t output, shape_type shape) {
        check_index(node, "set_output_shape");
        if (output >= nodes_[node].output_keys.size()) {
            throw error(error_kind::graph,
                        "basic_graph: node '" + nodes_[node].name + "' has " +
                            std::to_string(nodes_[node].output_keys.size()) +
                            " outputs; cannot set the shape of output " + std::to_string(output),
                        error_location::of_item(nodes_[node].name));
        }
        nodes_[node].output_shapes[output] = std::move(shape);
    }

    void set_op(std::size_t node, std::string op) {
        check_index(node, "set_op");
        nodes_[node].op = std::move(op);
    }

    void set_debug_handles(std::size_t node, std::vector<std::int64_t> handles) {
        check_index(node, "set_debug_handles");
        nodes_[node].debug_handles = std::move(handles);
    }

    // The node called `name`; nullopt when none; numgap::error when several.
    std::optional<std::size_t> find(std::string_view name) const {
        return lookup(name_index_, name, "node name");
    }

    // The node producing tensor `tensor_key`; nullopt when none; numgap::error
    // when several nodes list that key.
    std::optional<std::size_t> producer_of(std::string_view tensor_key) const {
        return lookup(key_index_, tensor_key, "output tensor key");
    }

    const node_type& node(std::size_t i) const {
        NUMGAP_ASSERT(i < nodes_.size());
        return nodes_[i];
    }
    const std::vector<node_type>& nodes() const noexcept { return nodes_; }
    bool empty() const noexcept { return nodes_.empty(); }
    // True while every edge points from a lower to a higher index (always,
    // unless add_edge/set_producers made a backward edge; it then stays
    // false). numgap::topological_order uses it to skip its O(N + E) scan:
    // matching a million-node graph then never walks the edges just to
    // learn the order is 0..n-1.
    bool index_order_is_topological() const noexcept { return index_order_is_topological_; }
    void reserve(std::size_t n) { nodes_.reserve(n); }

    // Graph customization points (see numgap/graph/concepts.hpp).
    std::size_t num_nodes() const noexcept { return nodes_.size(); }
    const std::vector<std::size_t>& producers(std::size_t i) const { return node(i).producers; }
    const std::string& node_name(std::size_t i) const { return node(i).name; }
    std::string_view op_type(std::size_t i) const { return node(i).op; }
    const std::vector<std::int64_t>& debug_handles(std::size_t i) const {
        return node(i).debug_handles;
    }
    const std::vector<std::string>& output_keys(std::size_t i) const { return node(i).output_keys; }
    std::optional<shape_type> output_shape(std::size_t i, std::size_t k) const {
        const auto& shapes = node(i).output_shapes;
        return k < shapes.size() ? shapes[k] : std::nullopt;
    }

private:
    static constexpr std::size_t ambiguous = static_cast<std::size_t>(-1);

    struct string_hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view text) const noexcept {
            return std::hash<std::string_view>{}(text);
        }
    };
    using string_index = std::unordered_map<std::string, std::size_t, string_hash, std::equal_to<>>;

    void check_index(std::size_t node, const char* what) const {
        if (node >= nodes_.size()) {
            throw error(error_kind::graph, std::string("basic_graph: ") + what + ": node index " +
                                               std::to_string(node) + " does not exist (the graph has " +
                                               std::to_string(nodes_.size()) + " nodes)");
        }
    }
    void check_producer(std::size_t consumer, std::size_t producer) const {
        if (producer >= nodes_.size()) {
            throw error(error_kind::graph,
                        "basic_graph: node '" + nodes_[consumer].name + "' (index " + std::to_string(consumer) +
                            ") lists producer index " + std::to_string(producer) +
                            ", which does not exist (the graph has " + std::to_string(nodes_.size()) + " nodes)",
                        error_location::of_item(nodes_[consumer].name));
        }
    }

    static void insert(string_index& index, const std::string& key, std::size_t node) {
        auto [it, inserted] = index.try_emplace(key, node);
        if (!inserted && it->second != node) it->second = ambiguous;
    }
    void index_name(std::size_t node) { insert(name_index_, nodes_[node].name, node); }
    void index_keys(std::size_t node) {
        for (const auto& key : nodes_[node].output_keys) insert(key_index_, key, node);
    }
    void rebuild_key_index() {
        key_index_.clear();
        for (std::size_t i = 0; i < nodes_.size(); ++i) index_keys(i);
    }

    static std::optional<std::size_t> lookup(const string_index& index, std::string_view key,
                                             const char* what) {
        auto it = index.find(key);
        if (it == index.end()) return std::nullopt;
        if (it->second == ambiguous) {
            throw error(error_kind::graph,
                        "basic_graph: " + std::string(what) + " '" + std::string(key) +
                            "' belongs to several nodes, so it cannot identify one",
                        error_location::of_item(std::string(key)));
        }
        return it->second;
    }

    std::vector<node_type> nodes_;
    bool index_order_is_topological_ = true;
    string_index name_index_;
    string_index key_index_;
};

} // namespace numgap
