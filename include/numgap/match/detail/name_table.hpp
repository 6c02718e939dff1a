#pragma once
// numgap::detail::name_table: groups the candidate nodes of both graphs by
// name key for name matching. Keys live in one character arena; each key is
// hashed when it is added (while it is still in cache), and grouping orders
// the (64-bit hash, key) pairs with a counting sort on the hash's top bits
// (two cache-friendly passes beyond 2^12 buckets) plus an insertion sort of
// each (tiny) bucket, instead of probing a hash table: at a million nodes
// sequential passes beat a million cache misses. Keys are compared with
// their arena bytes prefetched a few keys ahead. O(K) expected for K keys, no per-key allocation. Node indices
// must fit in 31 bits (asserted by the caller).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/match/detail/prefetch.hpp>

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
            throw error(error_kind::limit,
                        "match_by_name: a node name key is longer than 4 GiB; names that long cannot be matched");
        // sorted_key packs the node index into 31 bits.
        if (node > 0x7fffffffu)
            throw error(error_kind::limit, "match_by_name: graphs of more than 2^31 nodes cannot be matched by name");
        offsets_.push_back(arena_.size());
        nodes_.push_back({node, static_cast<std::uint32_t>(side)});
        hashes_.push_back(std::hash<std::string_view>{}(key(static_cast<std::uint32_t>(nodes_.size() - 1))));
    }

    // Calls visit(key, reference_nodes, target_nodes) once per distinct key,
    // each node list in insertion order.
    template <class Visit>
    void for_each_key(Visit&& visit) const {
        const std::unique_ptr<sorted_key[]> sorted = sorted_by_hash();
        const std::span<const sorted_key> order(sorted.get(), hashes_.size());
        std::vector<std::uint32_t> references, targets;
        std::vector<char> done;
        // Keys are compared in hash order, that is at random places in the
        // arena: loading them `ahead` entries early overlaps the misses.
        constexpr std::size_t ahead = 16;
        std::size_t prefetched = 0;
        for (std::size_t begin = 0, end = 0; begin < order.size(); begin = end) {
            for (const std::size_t until = std::min(order.size(), begin + ahead); prefetched < until; ++prefetched)
                prefetch(arena_.data() + order[prefetched].offset);
            end = begin + 1;
            while (end < order.size() && order[end].hash == order[begin].hash) ++end;
            if (end - begin <= 2 && (end - begin == 1 || key(order[begin]) == key(order[begin + 1]))) {
                // The usual runs, one key with its one or two nodes (a name
                // on one side, or its pair): no bookkeeping of which
                // entries are done.
                references.clear();
                targets.clear();
                for (std::size_t j = begin; j < end; ++j)
                    (order[j].side == 0 ? references : targets).push_back(order[j].node);
                visit(key(order[begin]), references, targets);
                continue;
            }
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
    //
    // Past 2^12 buckets the counting sort runs as two stable passes on the
    // top bits (high half, then the low half within each high bucket): a
    // single pass into a million buckets makes every write a cache miss,
    // while 2^12 write streams stay in cache and the second pass works on
    // one cache-sized high bucket at a time (about 2x at a million keys).
    std::unique_ptr<sorted_key[]> sorted_by_hash() const {
        const std::size_t count = hashes_.size();
        // Default-initialised: every entry is written below, so zeroing
        // tens of megabytes first would be wasted.
        std::unique_ptr<sorted_key[]> order(new sorted_key[count]);
        if (count == 0) return order;
        int bits = 1;
        while (bits < 24 && (std::size_t{2} << bits) < count) ++bits;
        const int high_bits = bits > 12 ? bits / 2 : bits;
        const int low_bits = bits - high_bits;
        auto make_key = [&](std::size_t k) {
            const registered_node& registered = nodes_[k];
            return sorted_key{hashes_[k], offsets_[k], static_cast<std::uint32_t>(offsets_[k + 1] - offsets_[k]),
                              registered.node & 0x7fffffffu, registered.side & 1u};
        };
        const int high_shift = 64 - high_bits;
        // end[b]: one past bucket b; filled backwards, so entries of a bucket
        // keep index order without a second cursor array.
        std::vector<std::uint32_t> end((std::size_t{1} << high_bits), 0);
        for (auto hash : hashes_) ++end[hash >> high_shift];
        for (std::size_t b = 1; b < end.size(); ++b) end[b] += end[b - 1];
        if (low_bits == 0) {
            for (std::size_t k = count; k-- > 0;) order[--end[hashes_[k] >> high_shift]] = make_key(k);
            // end[b] is now the start of bucket b.
            for (std::size_t b = 0; b < end.size(); ++b)
                sort_bucket(order.get(), end[b], b + 1 < end.size() ? end[b + 1] : count);
            return order;
        }
        std::unique_ptr<sorted_key[]> by_high(new sorted_key[count]);
        for (std::size_t k = count; k-- > 0;) by_high[--end[hashes_[k] >> high_shift]] = make_key(k);
        const int low_shift = 64 - bits;
        const std::uint64_t low_mask = (std::uint64_t{1} << low_bits) - 1;
        std::vector<std::uint32_t> low_end(std::size_t{1} << low_bits);
        for (std::size_t b = 0; b < end.size(); ++b) {
            const std::size_t first = end[b], last = b + 1 < end.size() ? end[b + 1] : count;
            if (first == last) continue;
            std::fill(low_end.begin(), low_end.end(), 0);
            for (std::size_t i = first; i < last; ++i) ++low_end[(by_high[i].hash >> low_shift) & low_mask];
            low_end[0] += static_cast<std::uint32_t>(first);
            for (std::size_t l = 1; l < low_end.size(); ++l) low_end[l] += low_end[l - 1];
            for (std::size_t i = last; i-- > first;)
                order[--low_end[(by_high[i].hash >> low_shift) & low_mask]] = by_high[i];
            for (std::size_t l = 0; l < low_end.size(); ++l)
                sort_bucket(order.get(), low_end[l], l + 1 < low_end.size() ? low_end[l + 1] : last);
        }
        return order;
    }

    // Orders entries [first, last) of one bucket by hash; they arrive in
    // index order, which ties keep.
    static void sort_bucket(sorted_key* order, std::size_t first, std::size_t last) {
        if (last - first < 2) return;
        if (last - first > 16) {
            // Crowded bucket (colliding or adversarial hashes): keep it
            // O(B log B). (hash, key) pairs are unique, so the order is the same.
            std::sort(order + first, order + last);
            return;
        }
        // A stable insertion sort keeps equal hashes in index order.
        for (std::size_t i = first + 1; i < last; ++i) {
            const auto item = order[i];
            std::size_t j = i;
            for (; j > first && order[j - 1].hash > item.hash; --j) order[j] = order[j - 1];
            order[j] = item;
        }
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
