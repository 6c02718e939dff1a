#pragma once
// numgap::io::node_table: graph.json's nodes (run_manifest::nodes), kept
// compactly: every name, input and output in one character arena, each
// node's lists in shared pools (core/list_pool.hpp), op types once per
// distinct text, and no output list for a node whose one output is its name
// (graph.json's default). A node of a chain costs ~75 bytes, against ~265 as
// a node_spec of strings and vectors; a million-node graph.json is read into
// both runs' tables before either graph is built.
//
// push_back(node_spec) adds a node; name(i), op(i), inputs(i), outputs(i)
// and debug_handles(i) view it (string_views and spans, valid until the
// table next changes); operator[](i) copies one node out whole as a
// node_spec (for callers that want one, and tests). A node_spec given no
// outputs by its maker keeps none: the table stores what it is given (the
// graph.json reader fills in {name} itself). find(name) is the first node
// of that name, through an index push_back keeps (the reader refuses a
// repeated name with it, and run_graph looks names up in it rather than
// hashing every name once more).
// Complexity: push_back O(text + lists) amortised; views O(1); find O(1)
// expected; operator[] O(node). Throws numgap::error (error_kind::limit)
// past 2^31 - 1 nodes or 4 GiB of text; std::bad_alloc.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/core/interned_texts.hpp>
#include <numgap/core/key_index.hpp>
#include <numgap/core/list_pool.hpp>
#include <numgap/core/text_arena.hpp>

namespace numgap::io {

struct node_spec {
    std::string name, op;
    std::vector<std::string> inputs, outputs; // graph.json's reader defaults outputs to {name}
    std::vector<std::int64_t> debug_handles;
};

class node_table {
    using text_ref = numgap::detail::text_ref;

public:
    using text_list = numgap::detail::text_list;

    std::size_t size() const noexcept { return names_.size(); }
    bool empty() const noexcept { return names_.empty(); }

    std::string_view name(std::size_t i) const noexcept { return chars_[names_[i]]; }
    std::string_view op(std::size_t i) const noexcept { return ops_texts_[ops_[i]]; }
    text_list inputs(std::size_t i) const { return texts(inputs_.get(i)); }
    text_list outputs(std::size_t i) const {
        return outputs_are_name_[i] ? texts(std::span<const text_ref>(&names_[i], 1)) : texts(outputs_.get(i));
    }
    std::span<const std::int64_t> debug_handles(std::size_t i) const noexcept { return handles_.get(i); }

    // Node i copied out whole.
    node_spec operator[](std::size_t i) const {
        node_spec node{std::string(name(i)), std::string(op(i)), {}, {}, {}};
        for (std::string_view input : inputs(i)) node.inputs.emplace_back(input);
        for (std::string_view output : outputs(i)) node.outputs.emplace_back(output);
        node.debug_handles.assign(debug_handles(i).begin(), debug_handles(i).end());
        return node;
    }

    // The first node called `name`, or nullopt.
    std::optional<std::size_t> find(std::string_view name) const {
        const std::uint32_t* found = name_index_.find(name, name_equals{this});
        return found == nullptr ? std::nullopt : std::optional<std::size_t>(*found);
    }

    // Room for `nodes` nodes of one input each. The name index is memory
    // touched at once, not address space, so a generous guess reserves it
    // for at most 2^22 names (it grows past that as nodes come).
    void reserve(std::size_t nodes) {
        name_index_.reserve(std::min<std::size_t>(nodes, std::size_t(1) << 22));
        names_.reserve(nodes);
        ops_.reserve(nodes);
        outputs_are_name_.reserve(nodes);
        inputs_.reserve(nodes, nodes);
        outputs_.reserve(nodes, 0);
        handles_.reserve(nodes, 0);
    }

    // Adds `node`; false when an earlier node has its name (it is added all the same).
    bool push_back(const node_spec& node) {
        return push_back(node.name, node.op, node.inputs, node.outputs, node.debug_handles);
    }
    // The same from its parts (a reader reusing its buffers node after node).
    bool push_back(std::string_view name, std::string_view op, std::span<const std::string> inputs,
                   std::span<const std::string> outputs, std::span<const std::int64_t> debug_handles) {
        const std::size_t index = names_.size();
        if (index >= numgap::detail::max_key_positions)
            throw error(error_kind::limit, "graph.json: more than 2^31 - 1 nodes",
                        error_location::of_item(std::string(name)));
        const bool outputs_are_name = outputs.size() == 1 && outputs[0] == name;
        name_index_.reserve(index + 1);
        // Every member grows by one node or none: a throw midway takes back what was added.
        const std::size_t chars = chars_.size();
        try {
            const std::uint32_t op_position = ops_texts_.intern(op, "graph.json: more than 2^31 - 1 distinct ops");
            const text_ref name_ref = store(name);
            std::vector<text_ref>& refs = scratch_;
            refs.clear();
            for (const std::string& input : inputs) refs.push_back(store(input));
            inputs_.push_list(refs.begin(), refs.end());
            refs.clear();
            if (!outputs_are_name)
                for (const std::string& output : outputs) refs.push_back(store(output));
            outputs_.push_list(refs.begin(), refs.end());
            handles_.push_list(debug_handles.begin(), debug_handles.end());
            outputs_are_name_.push_back(outputs_are_name);
            ops_.push_back(op_position);
            names_.push_back(name_ref);
        } catch (...) {
            inputs_.truncate(index);
            outputs_.truncate(index);
            handles_.truncate(index);
            outputs_are_name_.resize(index);
            ops_.resize(index);
            chars_.truncate(chars);
            throw;
        }
        // Room was made first, so this cannot throw once the node is in. The
        // stored copy is indexed: `name` may have viewed text that storing moved.
        return name_index_.insert(chars_[names_[index]], std::uint32_t(index), name_equals{this}).second;
    }

    // Frees every node (run_directory::release_nodes).
    void clear() noexcept { *this = node_table(); }

private:
    struct name_equals {
        const node_table* table;
        bool operator()(std::uint32_t node, std::string_view name) const { return table->name(node) == name; }
    };
    text_list texts(std::span<const text_ref> refs) const { return chars_.list(refs); }
    // Stores `text`, or reuses an equal text stored lately: an input is
    // mostly the name of a node just before (a fan-out's q, k and v read
    // one norm), so most inputs cost a reference and no characters.
    text_ref store(std::string_view text) {
        return chars_.store_shared(text, "graph.json: more than 4 GiB of node names, inputs and outputs");
    }

    // Node i is position i of names_, ops_ (positions in ops_texts_),
    // outputs_are_name_, and list i of each pool.
    numgap::detail::text_arena chars_;
    std::vector<text_ref> names_;
    std::vector<std::uint32_t> ops_;
    numgap::detail::interned_texts ops_texts_;
    numgap::detail::list_pool<text_ref> inputs_{"inputs"};
    numgap::detail::list_pool<text_ref> outputs_{"outputs"};
    numgap::detail::list_pool<std::int64_t> handles_{"debug handles"};
    std::vector<bool> outputs_are_name_;
    std::vector<text_ref> scratch_; // push_back's lists before they go into a pool
    numgap::detail::key_index name_index_; // payload: the first node of a name
};

} // namespace numgap::io
