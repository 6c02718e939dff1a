#pragma once
// numgap::detail::key_index: a hash index from string keys to 32-bit
// payloads (usually a node's index) that does not store the keys. The keys
// stay where their owner keeps them (a graph's node names, a manifest's
// output keys); every lookup passes `equals(payload, key)`, which tells
// whether the entry with that payload has the key being looked up.
//
// Why: a std::unordered_map<std::string, ...> copies every key and allocates
// a node per entry. A run of a million nodes built several such maps per
// name (graph names, output keys, producers), a few hundred bytes and
// allocations per node; here an entry is 8 bytes (a 32-bit hash and the
// payload) in one array, at most half full.
//
// Open addressing with linear probing; a slot whose hash is 0 is empty
// (stored hashes are never 0). Growing rehashes from the stored hashes, so
// no key is read back. erase() shifts the following entries back, so no
// tombstones are left. The payload is opaque here: callers may keep flags
// in it (basic_graph marks ambiguous names in its top bit).
//
// Complexity: insert/find/erase O(1) expected, O(n) worst case (many
// equal 32-bit hashes: keys from a file are not trusted, but a collision
// only costs comparisons, never a wrong answer, since `equals` decides).
//
// positional_key_index: the common use, a key_index whose payloads are
// positions in the caller's own sequence (key_at(position) gives the key
// stored there), so callers write neither `equals` nor the 32-bit bound.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/core/error.hpp>

namespace numgap::detail {

class key_index {
public:
    key_index() = default;
    explicit key_index(std::size_t expected) { reserve(expected); }
    key_index(const key_index&) = default;
    key_index& operator=(const key_index&) = default;
    // A moved-from index is empty (its count and shift would otherwise
    // describe slots it no longer has, and a lookup would read past them).
    key_index(key_index&& other) noexcept
        : slots_(std::move(other.slots_)), size_(std::exchange(other.size_, 0)),
          shift_(std::exchange(other.shift_, 0)) {
        other.slots_.clear();
    }
    key_index& operator=(key_index&& other) noexcept {
        if (this != &other) {
            slots_ = std::move(other.slots_);
            other.slots_.clear();
            size_ = std::exchange(other.size_, 0);
            shift_ = std::exchange(other.shift_, 0);
        }
        return *this;
    }
    ~key_index() = default;

    // Room for `expected` entries without growing.
    void reserve(std::size_t expected) {
        if (expected <= slots_.size() / 2) return; // the common call: room already
        std::size_t wanted = 16;
        while (wanted / 2 < expected) wanted *= 2;
        if (wanted > slots_.size()) rehash(wanted);
    }

    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    void clear() noexcept {
        slots_.assign(slots_.size(), slot{});
        size_ = 0;
    }

    // The payload of the entry whose key equals `key`, or nullptr.
    template <class Equals>
    const std::uint32_t* find(std::string_view key, Equals&& equals) const {
        const std::size_t at = locate(key, equals);
        return at == npos ? nullptr : &slots_[at].payload;
    }
    template <class Equals>
    std::uint32_t* find(std::string_view key, Equals&& equals) {
        const std::size_t at = locate(key, equals);
        return at == npos ? nullptr : &slots_[at].payload;
    }

    // Adds key -> payload unless the key is present. Returns the payload
    // now stored for the key (the new one, or the existing one to read or
    // update) and whether it was added.
    template <class Equals>
    std::pair<std::uint32_t*, bool> insert(std::string_view key, std::uint32_t payload, Equals&& equals) {
        if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.empty() ? 16 : slots_.size() * 2);
        const std::uint32_t hash = hash_of(key);
        for (std::size_t at = home(hash);; at = (at + 1) & mask()) {
            slot& entry = slots_[at];
            if (entry.hash == 0) {
                entry = slot{hash, payload};
                ++size_;
                return {&entry.payload, true};
            }
            if (entry.hash == hash && equals(entry.payload, key)) return {&entry.payload, false};
        }
    }

    // Removes the entry for `key`; false when there is none.
    template <class Equals>
    bool erase(std::string_view key, Equals&& equals) {
        std::size_t hole = locate(key, equals);
        if (hole == npos) return false;
        // Backward-shift deletion: move up each following entry whose home
        // is not between the hole and its place, so every probe chain stays
        // unbroken without tombstones.
        for (std::size_t next = (hole + 1) & mask();; next = (next + 1) & mask()) {
            const slot& candidate = slots_[next];
            if (candidate.hash == 0) break;
            const std::size_t wanted = home(candidate.hash);
            const bool stays = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next);
            if (stays) continue;
            slots_[hole] = candidate;
            hole = next;
        }
        slots_[hole] = slot{};
        --size_;
        return true;
    }

private:
    struct slot {
        std::uint32_t hash = 0; // 0: empty
        std::uint32_t payload = 0;
    };

    static constexpr std::size_t npos = std::size_t(-1);

    template <class Equals>
    std::size_t locate(std::string_view key, Equals& equals) const {
        if (size_ == 0) return npos;
        const std::uint32_t hash = hash_of(key);
        for (std::size_t at = home(hash);; at = (at + 1) & mask()) {
            const slot& entry = slots_[at];
            if (entry.hash == 0) return npos;
            if (entry.hash == hash && equals(entry.payload, key)) return at;
        }
    }

    static std::uint32_t hash_of(std::string_view key) noexcept {
        const std::uint64_t full = std::hash<std::string_view>{}(key);
        const auto folded = std::uint32_t(full ^ (full >> 32));
        return folded == 0 ? 1 : folded;
    }
    std::size_t mask() const noexcept { return slots_.size() - 1; }
    // Fibonacci hashing: the top bits of hash * 2^64/phi spread any hash
    // over the table, so a weak low-bit pattern does not cluster.
    std::size_t home(std::uint32_t hash) const noexcept {
        return std::size_t((std::uint64_t(hash) * 0x9E3779B97F4A7C15ull) >> (64 - shift_)) & mask();
    }

    void rehash(std::size_t count) {
        if (count > (std::size_t(1) << 33))
            throw error(error_kind::limit, "key_index: more than 2^32 keys cannot be indexed");
        std::vector<slot> old = std::move(slots_);
        slots_.assign(count, slot{});
        shift_ = 0;
        while ((std::size_t(1) << shift_) < count) ++shift_;
        for (const slot& entry : old) {
            if (entry.hash == 0) continue;
            std::size_t at = home(entry.hash);
            while (slots_[at].hash != 0) at = (at + 1) & mask();
            slots_[at] = entry;
        }
    }

    std::vector<slot> slots_;
    std::size_t size_ = 0;
    int shift_ = 0;
};

// Positions a positional_key_index takes are below this: payloads are 32
// bits, and their top bit stays free for flags (basic_graph's ambiguity
// mark). Callers check it against their own count, naming what overflowed.
inline constexpr std::size_t max_key_positions = 0x7fffffff;

template <class KeyAt> // std::size_t position -> something convertible to std::string_view
class positional_key_index {
public:
    explicit positional_key_index(KeyAt key_at, std::size_t expected = 0)
        : key_at_(std::move(key_at)), index_(expected) {}

    std::size_t size() const noexcept { return index_.size(); }

    // Indexes `position` under `key` (what key_at(position) gives, now or
    // once the caller has stored it) unless an equal key is indexed. Returns
    // the position indexed under the key and whether it is `position`.
    std::pair<std::uint32_t, bool> insert(std::string_view key, std::size_t position) {
        NUMGAP_ASSERT(position < max_key_positions);
        const auto [payload, inserted] = index_.insert(key, std::uint32_t(position), equals());
        return {*payload, inserted};
    }

    std::optional<std::uint32_t> find(std::string_view key) const {
        const std::uint32_t* payload = index_.find(key, equals());
        return payload == nullptr ? std::nullopt : std::optional<std::uint32_t>(*payload);
    }

private:
    auto equals() const {
        return [this](std::uint32_t position, std::string_view key) {
            return std::string_view(key_at_(std::size_t(position))) == key;
        };
    }

    KeyAt key_at_;
    key_index index_;
};

} // namespace numgap::detail
