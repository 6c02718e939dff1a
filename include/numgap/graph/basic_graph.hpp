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
// Storage: a node's producers, debug handles, output keys and output shapes
// are lists in pools (core/list_pool.hpp), not a std::vector each; names and
// keys are text in one arena (core/text_arena.hpp), and a node whose one
// output key is its name (the default) stores no key at all: a node of a
// chain costs ~100 bytes, against ~270 with vectors and strings, which is
// most of the memory of a million-node comparison. The accessors return
// views (spans, string_views, text_list), valid until the graph next
// changes (as references into vectors were).
// Complexity: add_node O(#producers + #keys) amortised; add_edge amortised
// O(1); find/producer_of O(1) expected. The name and key indices hold no
// copies of the strings (core/key_index.hpp): ~16 bytes of index per name
// and key; op types are kept once per distinct text (a table the nodes
// index). Throws numgap::error (naming the node) on a producer
// index that does not exist, an output index out of range, an ambiguous
// lookup, or a graph of 2^31 nodes, keys or distinct op types
// (error_kind::limit); its kind is graph and where().item the node, name or
// key at fault.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/interned_texts.hpp>
#include <numgap/core/key_index.hpp>
#include <numgap/core/list_pool.hpp>
#include <numgap/core/text_arena.hpp>
#include <numgap/graph/output_shape.hpp>

namespace numgap {

class basic_graph {
    using text_ref = detail::text_ref;

public:
    // A node's output keys: a range of std::string_view with size() and [].
    using text_list = detail::text_list;
    // One node as node(i) shows it: views into the graph.
    struct node_view {
        std::string_view name;
        std::span<const std::size_t> producers;
        std::span<const std::int64_t> debug_handles;
        text_list output_keys;
        // The op type's position in the graph's table of distinct op types
        // (op_type(i) gives the text); 0 is the empty op.
        std::uint32_t op_index;
    };

    // Adds a node; no output keys means one, the name. The lists are copied.
    std::size_t add_node(std::string_view name, std::string_view op = {},
                         const std::vector<std::size_t>& producers = {},
                         const std::vector<std::int64_t>& debug_handles = {},
                         const std::vector<std::string>& output_keys = {}) {
        const std::size_t index = names_.size();
        if (index >= max_entries)
            throw error(error_kind::limit, "basic_graph: a graph of more than 2^31 - 1 nodes cannot be indexed",
                        error_location::of_item(std::string(name)));
        for (std::size_t producer : producers) {
            if (producer >= index) {
                throw error(error_kind::graph,
                            "basic_graph: node '" + std::string(name) + "' (index " + std::to_string(index) +
                                ") lists producer index " + std::to_string(producer) + ", but only " +
                                std::to_string(index) + " nodes exist; add producers first or use add_edge",
                            error_location::of_item(std::string(name)));
            }
        }
        const bool keys_are_name = output_keys.empty() || (output_keys.size() == 1 && output_keys[0] == name);
        const std::uint32_t op_index = intern_op(op);
        // Room in both indexes first: indexing the node below, once it is in,
        // then cannot fail (a node left out of the name index would make a
        // later one of its name look unique).
        name_index_.reserve(index + 1);
        key_index_.reserve(key_index_.size() + std::max<std::size_t>(output_keys.size(), 1));
        // The members grow by one node or none: a throw midway takes back what was added.
        const std::size_t chars = texts_.size();
        try {
            // The name first: it may view texts_, which storing the keys can move.
            const text_ref name_ref = store(name);
            producers_.push_list(producers.begin(), producers.end());
            handles_.push_list(debug_handles.begin(), debug_handles.end());
            push_keys(keys_are_name ? std::span<const std::string>() : std::span<const std::string>(output_keys));
            keys_are_name_.push_back(keys_are_name);
            ops_.push_back(op_index);
            names_.push_back(name_ref);
        } catch (...) {
            shrink_to(index);
            texts_.truncate(chars);
            throw;
        }
        index_name(index);
        index_keys(index);
        return index;
    }

    // Adds the edge producer -> consumer (appended to the consumer's inputs).
    void add_edge(std::size_t producer, std::size_t consumer) {
        check_index(consumer, "add_edge consumer");
        check_producer(consumer, producer);
        if (producer >= consumer) index_order_is_topological_ = false;
        producers_.append(consumer, producer);
    }

    void set_producers(std::size_t node, std::vector<std::size_t> producers) {
        check_index(node, "set_producers");
        for (std::size_t producer : producers) {
            check_producer(node, producer);
            if (producer >= node) index_order_is_topological_ = false;
        }
        producers_.assign(node, producers.begin(), producers.end());
    }

    // Replaces the output keys (an empty list makes a node without outputs);
    // shapes are reset to unknown.
    void set_output_keys(std::size_t node, std::vector<std::string> keys) {
        check_index(node, "set_output_keys");
        // Replaced keys leave their text behind: compacted (before anything
        // changes) once it is the majority, so repeated calls keep the text
        // within about twice its size.
        if (garbage_chars_ > texts_.size() / 2 && garbage_chars_ > 4096) compact_texts();
        // The new list goes into the pool first (the only step that may
        // throw), as a list of its own, swapped in once the old keys are unindexed.
        const std::size_t incoming = push_keys(keys);
        // Unindexing the old keys one by one keeps this O(#keys) (a graph
        // loader may call it for every node); a key several nodes share
        // needs the others' entries back, which only a rebuild knows.
        bool shared = false;
        for (const std::string_view key : output_keys(node)) {
            const std::uint32_t* entry = key_index_.find(key, key_equals{this});
            if (entry == nullptr) continue;
            if (*entry & ambiguous_bit) {
                shared = true;
                break;
            }
            key_index_.erase(key, key_equals{this});
        }
        for (const text_ref old : keys_.get(node)) garbage_chars_ += old.size;
        keys_.swap_lists(node, incoming);
        keys_.truncate(incoming);
        keys_are_name_[node] = false;
        if (node < shapes_.num_lists()) shapes_.assign(node, no_shape, no_shape);
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
        const std::size_t outputs = output_keys(node).size();
        if (output >= outputs) {
            throw error(error_kind::graph,
                        "basic_graph: node '" + std::string(node_name(node)) + "' has " + std::to_string(outputs) +
                            " outputs; cannot set the shape of output " + std::to_string(output),
                        error_location::of_item(std::string(node_name(node))));
        }
        // Node `node`'s entries rewritten: those before `output` kept (unknown
        // ones added up to it), this one replaced, those after it kept.
        const std::span<const std::int64_t> old = shape_list(node);
        std::vector<std::int64_t>& entries = shape_scratch_;
        entries.clear();
        std::size_t at = 0, k = 0;
        for (; k < output; ++k) {
            const std::size_t end = at < old.size() ? at + 1 + std::size_t(std::max<std::int64_t>(old[at], 0)) : at;
            if (at < old.size())
                entries.insert(entries.end(), old.begin() + std::ptrdiff_t(at), old.begin() + std::ptrdiff_t(end));
            else entries.push_back(unknown_rank);
            at = end;
        }
        entries.push_back(std::int64_t(shape.size()));
        entries.insert(entries.end(), shape.begin(), shape.end());
        if (at < old.size()) {
            at += 1 + std::size_t(std::max<std::int64_t>(old[at], 0));
            entries.insert(entries.end(), old.begin() + std::ptrdiff_t(at), old.end());
        }
        while (shapes_.num_lists() <= node) shapes_.push_list(no_shape, no_shape);
        shapes_.assign(node, entries.begin(), entries.end());
    }

    void set_op(std::size_t node, std::string_view op) {
        check_index(node, "set_op");
        ops_[node] = intern_op(op);
    }

    void set_debug_handles(std::size_t node, std::vector<std::int64_t> handles) {
        check_index(node, "set_debug_handles");
        handles_.assign(node, handles.begin(), handles.end());
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

    // find() and producer_of() without the ambiguity check, for a builder
    // that tolerates repeated names or keys: of several nodes, the one
    // indexed first (the earliest added, unless set_output_keys moved a key).
    std::optional<std::size_t> find_first(std::string_view name) const {
        const std::uint32_t* entry = name_index_.find(name, name_equals{this});
        return entry == nullptr ? std::nullopt : std::optional<std::size_t>(*entry & ~ambiguous_bit);
    }
    std::optional<std::size_t> first_producer_of(std::string_view tensor_key) const {
        const std::uint32_t* entry = key_index_.find(tensor_key, key_equals{this});
        return entry == nullptr ? std::nullopt : std::optional<std::size_t>(owner_of_key(*entry));
    }

    node_view node(std::size_t i) const {
        NUMGAP_ASSERT(i < names_.size());
        return {node_name(i), producers(i), debug_handles(i), output_keys(i), ops_[i]};
    }
    bool empty() const noexcept { return names_.empty(); }
    // True when no node's name is empty or another node's too (known from
    // the name index, without a pass over the names): report writers then
    // use the names as they are.
    bool names_given_and_unique() const noexcept { return unnamed_or_shared_names_ == 0; }
    // Says report writers may trust names_given_and_unique() (compare_group.hpp).
    static constexpr bool tracks_unique_names = true;
    // True while every edge points from a lower to a higher index (always,
    // unless add_edge/set_producers made a backward edge; it then stays
    // false). numgap::topological_order uses it to skip its O(N + E) scan:
    // matching a million-node graph then never walks the edges just to
    // learn the order is 0..n-1.
    bool index_order_is_topological() const noexcept { return index_order_is_topological_; }
    // Room for n nodes of one producer and one output key each, and for
    // `text_chars` characters of names and output keys.
    void reserve(std::size_t n, std::size_t text_chars = 0) {
        texts_.reserve(text_chars);
        names_.reserve(n);
        ops_.reserve(n);
        keys_are_name_.reserve(n);
        producers_.reserve(n, n);
        handles_.reserve(n, 0);
        keys_.reserve(n, 0);
        name_index_.reserve(n);
        key_index_.reserve(n);
        key_refs_.reserve(n);
    }

    // Graph customization points (see numgap/graph/concepts.hpp).
    std::size_t num_nodes() const noexcept { return names_.size(); }
    std::span<const std::size_t> producers(std::size_t i) const {
        NUMGAP_ASSERT(i < names_.size());
        return producers_.get(i);
    }
    std::string_view node_name(std::size_t i) const {
        NUMGAP_ASSERT(i < names_.size());
        return texts_[names_[i]];
    }
    std::string_view op_type(std::size_t i) const {
        NUMGAP_ASSERT(i < names_.size());
        return op_types_[ops_[i]];
    }
    std::span<const std::int64_t> debug_handles(std::size_t i) const {
        NUMGAP_ASSERT(i < names_.size());
        return handles_.get(i);
    }
    // The default (the name) is the name itself, not a copy.
    text_list output_keys(std::size_t i) const {
        NUMGAP_ASSERT(i < names_.size());
        return texts_.list(keys_are_name_[i] ? std::span<const text_ref>(&names_[i], 1) : keys_.get(i));
    }
    std::optional<shape_type> output_shape(std::size_t i, std::size_t k) const {
        NUMGAP_ASSERT(i < names_.size());
        const std::span<const std::int64_t> entries = shape_list(i);
        std::size_t at = 0;
        for (std::size_t output = 0; output < k && at < entries.size(); ++output)
            at += 1 + std::size_t(std::max<std::int64_t>(entries[at], 0));
        if (at >= entries.size() || entries[at] == unknown_rank) return std::nullopt;
        const auto first = entries.begin() + std::ptrdiff_t(at + 1);
        return shape_type(first, first + std::ptrdiff_t(entries[at]));
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

    // Node i's output shapes, encoded: for each output from the first up to
    // the last one set, its rank (unknown_rank when not known) and extents.
    // Empty while none is set (a million-node graph matched by name never
    // needs one); a node past the pool's lists has none.
    std::span<const std::int64_t> shape_list(std::size_t i) const noexcept {
        return i < shapes_.num_lists() ? shapes_.get(i) : std::span<const std::int64_t>();
    }
    static constexpr std::int64_t unknown_rank = -1;
    static constexpr const std::int64_t* no_shape = nullptr;

    void check_index(std::size_t node, const char* what) const {
        if (node >= names_.size()) {
            throw error(error_kind::graph, std::string("basic_graph: ") + what + ": node index " +
                                               std::to_string(node) + " does not exist (the graph has " +
                                               std::to_string(names_.size()) + " nodes)");
        }
    }
    void check_producer(std::size_t consumer, std::size_t producer) const {
        if (producer >= names_.size()) {
            throw error(error_kind::graph,
                        "basic_graph: node '" + std::string(node_name(consumer)) + "' (index " +
                            std::to_string(consumer) + ") lists producer index " + std::to_string(producer) +
                            ", which does not exist (the graph has " + std::to_string(names_.size()) + " nodes)",
                        error_location::of_item(std::string(node_name(consumer))));
        }
    }

    // The indices' key comparisons: the strings are the nodes' own.
    struct name_equals {
        const basic_graph* graph;
        bool operator()(std::uint32_t payload, std::string_view name) const {
            return graph->node_name(payload & ~ambiguous_bit) == name;
        }
    };
    struct key_equals {
        const basic_graph* graph;
        bool operator()(std::uint32_t payload, std::string_view key) const {
            const key_ref& ref = graph->key_refs_[payload & ~ambiguous_bit];
            return graph->output_keys(ref.node)[ref.output] == key;
        }
    };
    std::size_t owner_of_key(std::uint32_t payload) const { return key_refs_[payload & ~ambiguous_bit].node; }
    std::uint32_t intern_op(std::string_view op) {
        return op_types_.intern(op, "basic_graph: more than 2^31 - 1 distinct op types cannot be indexed");
    }

    void index_name(std::size_t node) {
        const auto [entry, inserted] = name_index_.insert(node_name(node), std::uint32_t(node), name_equals{this});
        if (!inserted) *entry |= ambiguous_bit;
        if (!inserted || node_name(node).empty()) ++unnamed_or_shared_names_;
    }
    void index_keys(std::size_t node) {
        const text_list keys = output_keys(node);
        for (std::size_t output = 0; output < keys.size(); ++output) {
            if (key_refs_.size() >= max_entries)
                throw error(error_kind::limit, "basic_graph: more than 2^31 - 1 output keys cannot be indexed",
                            error_location::of_item(std::string(node_name(node))));
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
        for (std::size_t i = 0; i < names_.size(); ++i) index_keys(i);
    }

    text_ref store(std::string_view text) {
        return texts_.store(text, "basic_graph: more than 4 GiB of node names and output keys cannot be stored");
    }
    // Appends a key list (its texts stored); returns its number.
    std::size_t push_keys(std::span<const std::string> keys) {
        std::vector<text_ref>& refs = ref_scratch_;
        refs.clear();
        for (const std::string& key : keys) refs.push_back(store(key));
        return keys_.push_list(refs.begin(), refs.end());
    }
    // Every live text copied into a fresh arena; the indices compare through
    // names_ and keys_, so they stay valid.
    void compact_texts() {
        detail::text_arena packed;
        packed.reserve(texts_.size() - std::min(garbage_chars_, texts_.size())); // a moved-from graph keeps its count
        std::vector<text_ref> names(names_.size());
        for (std::size_t i = 0; i < names_.size(); ++i)
            names[i] = packed.store(texts_[names_[i]], "basic_graph: more than 4 GiB of node names and output keys");
        detail::list_pool<text_ref> keys{"output keys"};
        for (std::size_t i = 0; i < names_.size(); ++i) {
            std::vector<text_ref>& refs = ref_scratch_;
            refs.clear();
            for (const text_ref key : keys_.get(i))
                refs.push_back(packed.store(texts_[key], "basic_graph: more than 4 GiB of node names and output keys"));
            keys.push_list(refs.begin(), refs.end());
        }
        texts_ = std::move(packed);
        names_ = std::move(names);
        keys_ = std::move(keys);
        garbage_chars_ = 0;
    }

    // Takes back a node add_node had begun: every member down to `count` nodes.
    void shrink_to(std::size_t count) noexcept {
        producers_.truncate(count);
        handles_.truncate(count);
        keys_.truncate(count);
        if (keys_are_name_.size() > count) keys_are_name_.resize(count);
        if (ops_.size() > count) ops_.resize(count);
        if (names_.size() > count) names_.resize(count);
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

    // Node i is position i of each: names_, ops_ (positions in op_types_),
    // list i of each pool, keys_are_name_ (output keys are {name}: its key
    // list is empty and unused), and list i of shapes_ once a shape is set
    // on node i or a later node.
    detail::text_arena texts_; // every name and output key
    std::vector<text_ref> names_;
    std::vector<std::uint32_t> ops_;
    detail::list_pool<std::size_t> producers_{"producers"};
    detail::list_pool<std::int64_t> handles_{"debug handles"};
    detail::list_pool<text_ref> keys_{"output keys"};
    std::vector<bool> keys_are_name_;
    detail::list_pool<std::int64_t> shapes_{"output shape extents"};
    std::vector<std::int64_t> shape_scratch_; // set_output_shape's new entries
    std::vector<text_ref> ref_scratch_;       // a key list before it goes into keys_
    std::size_t garbage_chars_ = 0;           // text of replaced keys, still in texts_
    std::size_t unnamed_or_shared_names_ = 0; // nodes named "" or as an earlier node
    bool index_order_is_topological_ = true;
    detail::key_index name_index_;
    detail::key_index key_index_;
    std::vector<key_ref> key_refs_; // payloads of key_index_
    detail::interned_texts op_types_; // distinct op types; 0 is the empty op
};

} // namespace numgap
