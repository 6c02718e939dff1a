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
// expected. The name and key indices hold no copies of the strings
// (core/key_index.hpp): a node costs its own fields plus ~16 bytes of index
// per name and key; op types are kept once per distinct text (a table the
// nodes index). Throws numgap::error (naming the node) on a producer
// index that does not exist, an output index out of range, an ambiguous
// lookup, or a graph of 2^31 nodes, keys or distinct op types
// (error_kind::limit); its kind is graph and where().item the node, name or
// key at fault.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/boxed.hpp>
#include <numgap/core/config.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/key_index.hpp>
#include <numgap/graph/output_shape.hpp>

namespace numgap {

class basic_graph {
public:
    struct node_type {
        std::string name;
        std::vector<std::size_t> producers;
        std::vector<std::int64_t> debug_handles;
        std::vector<std::string> output_keys;
        // One per output key once a shape is set; empty while none is known
        // (a million-node graph matched by name never needs one): boxed
        // (core/boxed.hpp), 8 bytes then.
        boxed<std::vector<std::optional<shape_type>>> output_shapes;
        // The node's op type as a position in the graph's table of distinct
        // op types (op_type(i) gives the text): a graph of a million nodes
        // has a few dozen op types, and a string each cost 32 bytes, more
        // for names past 15 characters. 0 is the empty op.
        std::uint32_t op_index = 0;
    };

    std::size_t add_node(std::string name, std::string_view op = {}, std::vector<std::size_t> producers = {},
                         std::vector<std::int64_t> debug_handles = {}, std::vector<std::string> output_keys = {}) {
        const std::size_t index = nodes_.size();
        if (index >= max_entries)
            throw error(error_kind::limit, "basic_graph: a graph of more than 2^31 - 1 nodes cannot be indexed",
                        error_location::of_item(name));
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
        const std::uint32_t op_index = intern_op(op);
        nodes_.push_back(node_type{.name = std::move(name),
                                   .producers = std::move(producers),
                                   .debug_handles = std::move(debug_handles),
                                   .output_keys = std::move(output_keys),
                                   .output_shapes = {},
                                   .op_index = op_index});
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
        // Unindexing the old keys one by one keeps this O(#keys) (a graph
        // loader may call it for every node); a key several nodes share
        // needs the others' entries back, which only a rebuild knows.
        bool shared = false;
        for (const std::string& key : nodes_[node].output_keys) {
            const std::uint32_t* entry = key_index_.find(key, key_equals{this});
            if (entry == nullptr) continue;
            if (*entry & ambiguous_bit) {
                shared = true;
                break;
            }
            key_index_.erase(key, key_equals{this});
        }
        nodes_[node].output_keys = std::move(keys);
        nodes_[node].output_shapes.reset();
        if (shared) {
            rebuild_key_index();
            return;
        }
        index_keys(node);
        // Unindexed keys leave their key_refs_ entries behind: compact once
        // they are the majority, so repeated calls cost amortised O(#keys).
        if (key_refs_.size() > 2 * key_index_.size() + 1024) rebuild_key_index();
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
        boxed<std::vector<std::optional<shape_type>>>& boxed_shapes = nodes_[node].output_shapes;
        std::vector<std::optional<shape_type>>& shapes = boxed_shapes ? *boxed_shapes : boxed_shapes.emplace();
        shapes.resize(nodes_[node].output_keys.size());
        shapes[output] = std::move(shape);
    }

    void set_op(std::size_t node, std::string_view op) {
        check_index(node, "set_op");
        nodes_[node].op_index = intern_op(op);
    }

    void set_debug_handles(std::size_t node, std::vector<std::int64_t> handles) {
        check_index(node, "set_debug_handles");
        nodes_[node].debug_handles = std::move(handles);
    }

    // The node called `name`; nullopt when none; numgap::error when several.
    std::optional<std::size_t> find(std::string_view name) const {
        const std::uint32_t* entry = name_index_.find(name, name_equals{this});
        return lookup(entry, entry == nullptr ? 0 : *entry & ~ambiguous_bit, name, "node name");
    }

    // The node producing tensor `tensor_key`; nullopt when none; numgap::error
    // when several nodes list that key.
    std::optional<std::size_t> producer_of(std::string_view tensor_key) const {
        const std::uint32_t* entry = key_index_.find(tensor_key, key_equals{this});
        return lookup(entry, entry == nullptr ? 0 : owner_of_key(*entry), tensor_key, "output tensor key");
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
    void reserve(std::size_t n) {
        nodes_.reserve(n);
        name_index_.reserve(n);
        key_index_.reserve(n);
        key_refs_.reserve(n);
    }

    // Graph customization points (see numgap/graph/concepts.hpp).
    std::size_t num_nodes() const noexcept { return nodes_.size(); }
    const std::vector<std::size_t>& producers(std::size_t i) const { return node(i).producers; }
    const std::string& node_name(std::size_t i) const { return node(i).name; }
    std::string_view op_type(std::size_t i) const { return op_types_[node(i).op_index]; }
    const std::vector<std::int64_t>& debug_handles(std::size_t i) const {
        return node(i).debug_handles;
    }
    const std::vector<std::string>& output_keys(std::size_t i) const { return node(i).output_keys; }
    std::optional<shape_type> output_shape(std::size_t i, std::size_t k) const {
        const auto& shapes = node(i).output_shapes;
        return shapes && k < shapes->size() ? (*shapes)[k] : std::nullopt;
    }

private:
    // Index payloads: an entry (a node for names, a key_ref for keys) in the
    // low 31 bits; the top bit marks a name or key that several nodes have.
    static constexpr std::uint32_t ambiguous_bit = 0x80000000u;
    static constexpr std::size_t max_entries = ambiguous_bit - 1;

    // Which output key of which node a key index entry stands for.
    struct key_ref {
        std::uint32_t node, output;
    };

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

    // The indices' key comparisons: the strings are the nodes' own.
    struct name_equals {
        const basic_graph* graph;
        bool operator()(std::uint32_t payload, std::string_view name) const {
            return graph->nodes_[payload & ~ambiguous_bit].name == name;
        }
    };
    struct key_equals {
        const basic_graph* graph;
        bool operator()(std::uint32_t payload, std::string_view key) const {
            const key_ref& ref = graph->key_refs_[payload & ~ambiguous_bit];
            return graph->nodes_[ref.node].output_keys[ref.output] == key;
        }
    };
    std::size_t owner_of_key(std::uint32_t payload) const { return key_refs_[payload & ~ambiguous_bit].node; }
    struct op_equals {
        const basic_graph* graph;
        bool operator()(std::uint32_t payload, std::string_view op) const { return graph->op_types_[payload] == op; }
    };

    // The position of `op` in op_types_, added if new.
    std::uint32_t intern_op(std::string_view op) {
        if (op.empty()) return 0;
        if (const std::uint32_t* known = op_index_.find(op, op_equals{this})) return *known;
        if (op_types_.size() >= max_entries)
            throw error(error_kind::limit, "basic_graph: more than 2^31 - 1 distinct op types cannot be indexed",
                        error_location::of_item(std::string(op)));
        // The text is stored first: the index must never hold a position the
        // table lacks. `op` may view a string of the table itself (set_op(i,
        // op_type(j))), which the growth can move: the index reads the copy.
        op_types_.emplace_back(op);
        try {
            return *op_index_.insert(op_types_.back(), std::uint32_t(op_types_.size() - 1), op_equals{this}).first;
        } catch (...) {
            op_types_.pop_back();
            throw;
        }
    }

    void index_name(std::size_t node) {
        const auto [entry, inserted] = name_index_.insert(nodes_[node].name, std::uint32_t(node), name_equals{this});
        if (!inserted) *entry |= ambiguous_bit;
    }
    void index_keys(std::size_t node) {
        const std::vector<std::string>& keys = nodes_[node].output_keys;
        for (std::size_t output = 0; output < keys.size(); ++output) {
            if (key_refs_.size() >= max_entries)
                throw error(error_kind::limit, "basic_graph: more than 2^31 - 1 output keys cannot be indexed",
                            error_location::of_item(nodes_[node].name));
            const auto [entry, inserted] =
                key_index_.insert(keys[output], std::uint32_t(key_refs_.size()), key_equals{this});
            if (inserted) key_refs_.push_back({std::uint32_t(node), std::uint32_t(output)});
            else if (owner_of_key(*entry) != node) // a node listing a key twice still produces it alone
                *entry |= ambiguous_bit;
        }
    }
    void rebuild_key_index() {
        key_index_.clear();
        key_refs_.clear();
        for (std::size_t i = 0; i < nodes_.size(); ++i) index_keys(i);
    }

    static std::optional<std::size_t> lookup(const std::uint32_t* entry, std::size_t owner, std::string_view key,
                                             const char* what) {
        if (entry == nullptr) return std::nullopt;
        if (*entry & ambiguous_bit) {
            throw error(error_kind::graph,
                        "basic_graph: " + std::string(what) + " '" + std::string(key) +
                            "' belongs to several nodes, so it cannot identify one",
                        error_location::of_item(std::string(key)));
        }
        return owner;
    }

    std::vector<node_type> nodes_;
    bool index_order_is_topological_ = true;
    detail::key_index name_index_;
    detail::key_index key_index_;
    std::vector<key_ref> key_refs_; // payloads of key_index_
    std::vector<std::string> op_types_{std::string()}; // distinct op types; 0 is the empty op
    detail::key_index op_index_;                       // op type -> position in op_types_
};

} // namespace numgap
