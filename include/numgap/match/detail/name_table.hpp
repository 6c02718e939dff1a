#pragma once
// numgap::detail::name_table: groups the candidate nodes of both graphs by
// name key for name matching. Keys live in one character arena; each key is
// hashed when it is added (while it is still in cache), and grouping orders
// the (64-bit hash, key) pairs with one counting-sort pass on the hash's top
// bits plus an insertion sort of each (tiny) bucket, instead of probing a
// hash table: at a million nodes sequential passes beat a million cache
// misses. O(K) expected for K keys, no per-key allocation. Node indices
// must fit in 31 bits (asserted by the caller).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/error.hpp>

namespace numgap::detail {

class name_table {
public:
    explicit name_table(std::size_t expected_keys) {
        offsets_.reserve(expected_keys + 1);
        offsets_.push_back(0);
        nodes_.reserve(expected_keys);
        hashes_.reserve(expected_keys);
        // Typical names are 10-30 characters: growing from empty would copy
        // the arena about twenty times at a million nodes.
        arena_.reserve(expected_keys * 16);
    }

    // The key being built: append to it, then call add().
    std::string& scratch() { return arena_; }

    // Registers `node` of `side` (0 reference, 1 target) under the key
    // appended since the last add; an empty key is dropped.
    void add(int side, std::uint32_t node) {
        if (arena_.size() == offsets_.back()) return;
        if (arena_.size() - offsets_.back() > 0xffffffffu)
            throw error("match_by_name: a node name key is longer than 4 GiB; names that long cannot be matched");
        // sorted_key packs the node index into 31 bits.
        if (node > 0x7fffffffu)
            throw error("match_by_name: graphs of more than 2^31 nodes cannot be matched by name");
        offsets_.push_back(arena_.size());
        nodes_.push_back({node, static_cast<std::uint32_t>(side)});
        hashes_.push_back(std::hash<std::string_view>{}(key(static_cast<std::uint32_t>(nodes_.size() - 1))));
    }

    // Calls visit(key, reference_nodes, target_nodes) once per distinct key,
    // each node list in insertion order.
    template <class Visit>
    void for_each_key(Visit&& visit) const {
        const std::vector<sorted_key> order = sorted_by_hash();
        std::vector<std::uint32_t> references, targets;
        std::vector<char> done;
        for (std::size_t begin = 0, end = 0; begin < order.size(); begin = end) {
            end = begin + 1;
            while (end < order.size() && order[end].hash == order[begin].hash) ++end;
            // Within one hash run (almost always a single key), split by the
            // actual key.
            done.assign(end - begin, 0);
            for (std::size_t i = begin; i < end; ++i) {
                if (done[i - begin]) continue;
                references.clear();
                targets.clear();
                const std::string_view this_key = key(order[i]);
                for (std::size_t j = i; j < end; ++j) {
                    // j == i is the key itself: skipping the self-compare saves
                    // a random arena access per key.
                    if (done[j - begin] || (j != i && key(order[j]) != this_key)) continue;
                    done[j - begin] = 1;
                    (order[j].side == 0 ? references : targets).push_back(order[j].node);
                }
                visit(this_key, references, targets);
            }
        }
    }

private:
    // What grouping needs of a key, carried along so the hash-ordered walk
    // does not make a random access per key into the node list.
    // The key's place in the arena rides along too: comparing two keys then
    // reads only their characters, not the offset table.
    struct sorted_key {
        std::uint64_t hash;
        std::uint64_t offset; // in the arena; increases with the key index
        std::uint32_t length;
        std::uint32_t node : 31;
        std::uint32_t side : 1;
        friend bool operator<(const sorted_key& a, const sorted_key& b) noexcept {
            return a.hash < b.hash || (a.hash == b.hash && a.offset < b.offset);
        }
    };

    std::string_view key(const sorted_key& sorted) const {
        return std::string_view(arena_.data() + sorted.offset, sorted.length);
    }

    // Keys ordered by (hash, index): the same order a comparison sort gives,
    // in linear expected time. Hashes are close to uniform, so with about
    // one bucket per two keys the buckets hold a few entries each; a
    // pathological hash only makes the buckets slower.
    std::vector<sorted_key> sorted_by_hash() const {
        const std::size_t count = hashes_.size();
        std::vector<sorted_key> order(count);
        if (count == 0) return order;
        int bits = 1;
        while (bits < 24 && (std::size_t{2} << bits) < count) ++bits;
        const int shift = 64 - bits;
        // end[b]: one past bucket b; filled backwards, so entries of a bucket
        // keep index order without a second cursor array.
        std::vector<std::uint32_t> end((std::size_t{1} << bits), 0);
        for (auto hash : hashes_) ++end[hash >> shift];
        for (std::size_t b = 1; b < end.size(); ++b) end[b] += end[b - 1];
        for (std::size_t k = count; k-- > 0;) {
            const registered_node& registered = nodes_[k];
            order[--end[hashes_[k] >> shift]] = {hashes_[k], offsets_[k],
                                                 static_cast<std::uint32_t>(offsets_[k + 1] - offsets_[k]),
                                                 registered.node & 0x7fffffffu, registered.side & 1u};
        }
        // end[b] is now the start of bucket b.
        for (std::size_t b = 0; b < end.size(); ++b) {
            const std::size_t first = end[b], last = b + 1 < end.size() ? end[b + 1] : count;
            if (last - first > 16) {
                // Crowded bucket (colliding or adversarial hashes): keep it
                // O(B log B). (hash, key) pairs are unique, so the order is the same.
                std::sort(order.begin() + static_cast<std::ptrdiff_t>(first), order.begin() + static_cast<std::ptrdiff_t>(last));
                continue;
            }
            // Entries of a bucket are in index order, so equal hashes are
            // already ordered by index; a stable insertion sort keeps that.
            for (std::size_t i = first + 1; i < last; ++i) {
                const auto item = order[i];
                std::size_t j = i;
                for (; j > first && order[j - 1].hash > item.hash; --j) order[j] = order[j - 1];
                order[j] = item;
            }
        }
        return order;
    }

    struct registered_node {
        std::uint32_t node;
        std::uint32_t side;
    };

    std::string_view key(std::uint32_t k) const {
        return std::string_view(arena_.data() + offsets_[k], offsets_[k + 1] - offsets_[k]);
    }

    std::string arena_;
    std::vector<std::size_t> offsets_;
    std::vector<registered_node> nodes_;
    std::vector<std::uint64_t> hashes_; // one per key
};

} // namespace numgap::detail
