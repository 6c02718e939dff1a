#pragma once
// numgap::consumer_lists: the reverse adjacency of an adapted graph (for each
// node, the nodes that consume its output), built once in compressed
// sparse-row form because graph concepts only expose producers.
// Construction O(N + E) time and memory; consumers(i) is O(1) and returns a
// span in ascending consumer index, one entry per edge (x + x lists the
// consumer twice). Throws numgap::error when a producer index is out of range.
#include <cstddef>
#include <span>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/graph/concepts.hpp>
#include <numgap/graph/topological_order.hpp>

namespace numgap {

class consumer_lists {
public:
    consumer_lists() = default;

    template <class G>
    explicit consumer_lists(const G& g) {
        detail::check_graph<G>();
        const std::size_t n = numgap::num_nodes(g);
        offsets_.assign(n + 1, 0);
        for (std::size_t node = 0; node < n; ++node) {
            for (auto raw : numgap::producers(g, node)) {
                detail::check_producer_index(g, node, static_cast<std::size_t>(raw), n);
                ++offsets_[static_cast<std::size_t>(raw) + 1];
            }
        }
        for (std::size_t i = 0; i < n; ++i) offsets_[i + 1] += offsets_[i];
        consumers_.resize(offsets_[n]);
        std::vector<std::size_t> cursor(offsets_.begin(), offsets_.end() - 1);
        for (std::size_t node = 0; node < n; ++node)
            for (auto raw : numgap::producers(g, node))
                consumers_[cursor[static_cast<std::size_t>(raw)]++] = node;
    }

    std::span<const std::size_t> consumers(std::size_t node) const {
        NUMGAP_ASSERT(node + 1 < offsets_.size());
        return {consumers_.data() + offsets_[node], offsets_[node + 1] - offsets_[node]};
    }
    std::size_t num_nodes() const noexcept { return offsets_.empty() ? 0 : offsets_.size() - 1; }

private:
    std::vector<std::size_t> offsets_;
    std::vector<std::size_t> consumers_;
};

} // namespace numgap
