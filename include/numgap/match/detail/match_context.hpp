#pragma once
// numgap::detail::match_context: the bookkeeping every strategy shares:
// topological positions of both graphs (which also validates them: cycles and
// dangling producer indices throw numgap::error), the nodes earlier
// strategies already matched (validated up front), group construction with
// the default output choice, and the final ordering of groups and unmatched
// lists. O(N + E) to build (O(N log N + E) when a graph's index order is not
// topological); finish() is O(G log G + N).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <optional>
#include <ranges>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/core/error.hpp>
#include <numgap/graph/concepts.hpp>
#include <numgap/graph/debug_handles.hpp>
#include <numgap/graph/node_name.hpp>
#include <numgap/graph/topological_order.hpp>
#include <numgap/match/detail/prefetch.hpp>
#include <numgap/match/match_kind.hpp>
#include <numgap/match/match_result.hpp>
#include <numgap/match/node_list.hpp>

namespace numgap::detail {

template <class G>
struct match_side {
    const G& graph;
    std::vector<std::size_t> order;
    std::vector<std::size_t> position;
    std::vector<char> matched;

    explicit match_side(const G& g)
        : graph(g), order(numgap::topological_order(g)), position(topological_positions(order)),
          matched(order.size(), 0) {}

    std::size_t size() const noexcept { return order.size(); }

    void sort_topologically(node_list& nodes) const {
        if (nodes.size() < 2) return;
        std::sort(nodes.begin(), nodes.end(),
                  [&](std::size_t a, std::size_t b) { return position[a] < position[b]; });
    }

    std::size_t output_count(std::size_t node) const {
        std::size_t count = 0;
        for ([[maybe_unused]] auto&& key : numgap::output_keys(graph, node)) ++count;
        return count;
    }

    // Whether output keys live in the graph (the customization returns a
    // reference to a container of lvalues), so views into them stay valid.
    using output_key_reference =
        std::ranges::range_reference_t<decltype(numgap::output_keys(std::declval<const G&>(), std::size_t{}))>;
    // Kept by the graph: the range and each key (a reference, or a view of
    // the graph's text as basic_graph's keys are).
    static constexpr bool stable_output_keys =
        stable_attribute<node_attribute::output_keys, G> &&
        (std::is_lvalue_reference_v<output_key_reference> || std::is_same_v<output_key_reference, std::string_view>);

    std::string_view last_output_key_view(std::size_t node) const
        requires stable_output_keys
    {
        std::string_view last;
        for (auto&& key : numgap::output_keys(graph, node)) last = std::string_view(key);
        return last;
    }

    std::string last_output_key(std::size_t node) const {
        std::string_view last;
        auto&& keys = numgap::output_keys(graph, node);
        for (auto&& key : keys) last = std::string_view(key);
        return std::string(last);
    }

    // The topologically last node (of a topologically sorted set) that has an
    // output; the last node when none has.
    std::size_t default_output_node(const node_list& nodes) const {
        // A single node is its own output either way: no need to visit its keys.
        if (nodes.size() == 1) return nodes.front();
        for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
            if (output_count(*it) > 0) return *it;
        return nodes.back();
    }
};

template <class R, class T>
class match_context {
public:
    match_context(const R& reference_graph, const T& target_graph, const match_result& prior,
                  std::string_view strategy)
        : reference(reference_graph), target(target_graph), strategy_(strategy) {
        groups_ = prior.groups;
        for (const auto& group : groups_) {
            mark(this->reference, group.reference_nodes, "reference");
            mark(this->target, group.target_nodes, "target");
            if (std::find(group.reference_nodes.begin(), group.reference_nodes.end(), group.reference_output_node) ==
                    group.reference_nodes.end() ||
                std::find(group.target_nodes.begin(), group.target_nodes.end(), group.target_output_node) ==
                    group.target_nodes.end())
                throw error(
                    error_kind::graph,
                    std::string(strategy) +
                        ": an earlier match group's output node is not one of its own nodes (reference output " +
                        std::to_string(group.reference_output_node) + ", target output " +
                        std::to_string(group.target_output_node) + ")");
            track_order(group);
        }
    }

    match_side<R> reference;
    match_side<T> target;

    // Adds a group of still-unmatched nodes (any order); picks the default
    // outputs unless reference_output is given. ambiguous_with: see
    // match_group (structural matching only; any order).
    void add_group(node_list reference_nodes, node_list target_nodes, std::string_view strategy, double confidence,
                   std::optional<std::size_t> reference_output = std::nullopt, node_list ambiguous_with = {}) {
        NUMGAP_ASSERT(!reference_nodes.empty() && !target_nodes.empty());
        reference.sort_topologically(reference_nodes);
        target.sort_topologically(target_nodes);
        for (auto node : reference_nodes) {
            NUMGAP_ASSERT(!reference.matched[node]);
            reference.matched[node] = 1;
        }
        for (auto node : target_nodes) {
            NUMGAP_ASSERT(!target.matched[node]);
            target.matched[node] = 1;
        }
        // Built in place: a moved-from match_group still costs five member
        // moves, and at a million groups that shows.
        match_group& group = groups_.emplace_back();
        group.kind = kind_of(reference_nodes.size(), target_nodes.size());
        group.strategy = strategy;
        group.confidence = confidence;
        group.reference_output_node = reference_output ? *reference_output
                                                       : reference.default_output_node(reference_nodes);
        group.target_output_node = target.default_output_node(target_nodes);
        // Copied straight from the graph's key when it keeps one (no
        // temporary std::string).
        if constexpr (match_side<R>::stable_output_keys)
            group.reference_tensor = reference.last_output_key_view(group.reference_output_node);
        else
            group.reference_tensor = reference.last_output_key(group.reference_output_node);
        if constexpr (match_side<T>::stable_output_keys)
            group.target_tensor = target.last_output_key_view(group.target_output_node);
        else
            group.target_tensor = target.last_output_key(group.target_output_node);
        group.reference_nodes = std::move(reference_nodes);
        group.target_nodes = std::move(target_nodes);
        target.sort_topologically(ambiguous_with);
        group.ambiguous_with = std::move(ambiguous_with);
        track_order(group);
    }

    // add_group for many one-to-one groups at once (name matching makes a
    // million of them). Same result as calling add_group per pair, in pair
    // order. When both graphs keep their output keys, the three dependent
    // loads behind each key (the node's key container, its last key, the
    // key's characters) are prefetched 3 d, 2 d and d pairs ahead: on a large
    // graph the cache misses then overlap instead of stalling one group at a
    // time. One steady pipeline rather than
    // bursts per block: a burst of prefetches beyond the CPU's few
    // outstanding-miss slots stalls as much as the loads it replaces.
    void add_one_to_one_groups(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs,
                               std::string_view strategy, double confidence) {
        reserve_groups(pairs.size());
        constexpr bool stable_keys = match_side<R>::stable_output_keys && match_side<T>::stable_output_keys;
        constexpr std::size_t d = 8;
        const std::size_t count = pairs.size();
        for (std::size_t i = 0; i < count; ++i) {
            if constexpr (stable_keys) {
                if (i + 3 * d < count) {
                    prefetch_attribute_container<node_attribute::output_keys>(reference.graph, pairs[i + 3 * d].first);
                    prefetch_attribute_container<node_attribute::output_keys>(target.graph, pairs[i + 3 * d].second);
                }
                if (i + 2 * d < count) {
                    prefetch_attribute_data<node_attribute::output_keys>(reference.graph, pairs[i + 2 * d].first);
                    prefetch_attribute_data<node_attribute::output_keys>(target.graph, pairs[i + 2 * d].second);
                }
                if (i + d < count) {
                    prefetch(reference.last_output_key_view(pairs[i + d].first).data());
                    prefetch(target.last_output_key_view(pairs[i + d].second).data());
                }
            }
            const auto [r, t] = pairs[i];
            NUMGAP_ASSERT(!reference.matched[r] && !target.matched[t]);
            reference.matched[r] = 1;
            target.matched[t] = 1;
            match_group& group = groups_.emplace_back();
            group.kind = match_kind::one_to_one;
            group.strategy = strategy;
            group.confidence = confidence;
            group.reference_output_node = r;
            group.target_output_node = t;
            if constexpr (stable_keys) {
                group.reference_tensor = reference.last_output_key_view(r);
                group.target_tensor = target.last_output_key_view(t);
            } else {
                group.reference_tensor = reference.last_output_key(r);
                group.target_tensor = target.last_output_key(t);
            }
            group.reference_nodes.push_back(r);
            group.target_nodes.push_back(t);
            track_order(group);
        }
    }

    const std::vector<match_group>& groups() const noexcept { return groups_; }

    match_result finish() && {
        // Stable counting sort on the reference output position (ties by
        // target output position are already in order for every strategy's
        // own groups): O(N + G), no moves of whole groups beyond one pass.
        match_result result;
        const std::size_t n = reference.size();
        // Strategies mostly emit groups already in this order (name and
        // handle groups walk the reference in index order): then the vector
        // is handed over as is instead of being permuted into a second one.
        // (Tracked as groups are added: checking here would read every group
        // again, long after it left the cache.)
        const bool sorted = in_order_;
        if (sorted) {
            result.groups = std::move(groups_);
            append_unmatched(result);
            return result;
        }
        std::vector<std::size_t> start(n + 1, 0);
        for (const auto& group : groups_) ++start[reference.position[group.reference_output_node] + 1];
        for (std::size_t i = 0; i < n; ++i) start[i + 1] += start[i];
        std::vector<std::size_t> slot_of(groups_.size());
        for (std::size_t g = 0; g < groups_.size(); ++g)
            slot_of[g] = start[reference.position[groups_[g].reference_output_node]]++;
        result.groups.resize(groups_.size());
        for (std::size_t g = 0; g < groups_.size(); ++g) result.groups[slot_of[g]] = std::move(groups_[g]);
        for (std::size_t begin = 0, end = 0; begin < result.groups.size(); begin = end) {
            const auto key = reference.position[result.groups[begin].reference_output_node];
            end = begin + 1;
            while (end < result.groups.size() && reference.position[result.groups[end].reference_output_node] == key) ++end;
            if (end - begin > 1)
                std::stable_sort(result.groups.begin() + static_cast<std::ptrdiff_t>(begin),
                                 result.groups.begin() + static_cast<std::ptrdiff_t>(end),
                                 [&](const match_group& a, const match_group& b) {
                                     return target.position[a.target_output_node] < target.position[b.target_output_node];
                                 });
        }
        append_unmatched(result);
        return result;
    }

    void reserve_groups(std::size_t count) { groups_.reserve(groups_.size() + count); }

private:
    // Keeps in_order_: whether groups_ is ordered by (reference output
    // position, target output position), the order finish() returns.
    void track_order(const match_group& group) noexcept {
        const std::size_t reference_position = reference.position[group.reference_output_node];
        const std::size_t target_position = target.position[group.target_output_node];
        if (reference_position < last_reference_position_ ||
            (reference_position == last_reference_position_ && target_position < last_target_position_))
            in_order_ = false;
        last_reference_position_ = reference_position;
        last_target_position_ = target_position;
    }

    void append_unmatched(match_result& result) const {
        for (auto node : reference.order)
            if (!reference.matched[node]) result.unmatched_reference.push_back(node);
        for (auto node : target.order)
            if (!target.matched[node]) result.unmatched_target.push_back(node);
    }

    template <class G>
    void mark(match_side<G>& side, const node_list& nodes, const char* which) {
        if (nodes.empty())
            throw error(error_kind::graph, std::string(strategy_) + ": an earlier match group has no " + which +
                                               " nodes; every group needs at least one node on each side");
        for (auto node : nodes) {
            if (node >= side.size())
                throw error(error_kind::graph, std::string(strategy_) + ": an earlier match group lists " + which +
                                                   " node index " + std::to_string(node) + ", but the " + which +
                                                   " graph has " + std::to_string(side.size()) + " nodes");
            if (side.matched[node])
                throw error(
                    error_kind::graph,
                    std::string(strategy_) + ": " + which + " node " + describe_node(side.graph, node) +
                        " belongs to two earlier match groups; a node can be matched once",
                    error_location::of_item(std::string(std::string_view(numgap::node_name(side.graph, node)))));
            side.matched[node] = 1;
        }
    }

    std::string_view strategy_;
    std::vector<match_group> groups_;
    bool in_order_ = true;
    std::size_t last_reference_position_ = 0;
    std::size_t last_target_position_ = 0;
};

} // namespace numgap::detail
