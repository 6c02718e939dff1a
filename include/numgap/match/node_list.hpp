#pragma once
// numgap::node_list: the node set of one side of a match group: a sequence of
// node indices (std::size_t) that keeps up to two of them inside the object
// and moves to the heap beyond.
//
// Why not std::vector: almost every group is one-to-one, and name or handle
// matching of a million-node graph builds a million groups. With vectors
// that is two heap allocations (and two frees) per group, about a third of
// the time of the whole match; inline storage makes those groups
// allocation-free. node_list is the same size as std::vector (24 bytes) and
// offers the part of its interface node sets need: contiguous storage with
// pointer iterators (so <algorithm> works on it), size/empty/front/back/[],
// push_back/reserve/clear, equality and ordering with another node_list or a
// std::vector<std::size_t> (either side), construction from an
// initializer_list, an iterator range or a std::vector, and conversion to a
// std::vector (so code that stores node sets in vectors keeps compiling).
//
// Complexity: as std::vector (push_back amortised O(1), copy O(n)); the
// first two elements never allocate. Throws std::bad_alloc, and
// std::length_error beyond 2^32 - 1 elements (a group larger than any graph
// numgap can match); moves and everything else never throw.
#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <utility>
#include <vector>

#include <numgap/core/config.hpp>

namespace numgap {

class node_list {
public:
    using value_type = std::size_t;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using reference = std::size_t&;
    using const_reference = const std::size_t&;
    using pointer = std::size_t*;
    using const_pointer = const std::size_t*;
    using iterator = std::size_t*;
    using const_iterator = const std::size_t*;
    using reverse_iterator = std::reverse_iterator<iterator>;
    using const_reverse_iterator = std::reverse_iterator<const_iterator>;

    // Elements held without a heap allocation.
    static constexpr std::size_t inline_capacity = 2;

    node_list() noexcept : inline_{} {}

    node_list(std::initializer_list<std::size_t> nodes) : node_list(nodes.begin(), nodes.end()) {}

    // Implicit on purpose: `group.reference_nodes = some_vector;` and
    // functions taking a node_list keep accepting vectors.
    node_list(const std::vector<std::size_t>& nodes) : node_list(nodes.begin(), nodes.end()) {}

    template <std::input_iterator Iterator, std::sentinel_for<Iterator> Sentinel>
    node_list(Iterator first, Sentinel last) : node_list() {
        if constexpr (std::forward_iterator<Iterator>) reserve(static_cast<std::size_t>(std::ranges::distance(first, last)));
        for (; first != last; ++first) push_back(static_cast<std::size_t>(*first));
    }

    node_list(const node_list& other) : node_list() {
        reserve(other.size_);
        copy_from(other);
    }

    node_list(node_list&& other) noexcept : node_list() { take(other); }

    node_list& operator=(const node_list& other) {
        if (this == &other) return *this;
        size_ = 0;
        reserve(other.size_);
        copy_from(other);
        return *this;
    }

    node_list& operator=(node_list&& other) noexcept {
        if (this == &other) return *this;
        release();
        take(other);
        return *this;
    }

    node_list& operator=(std::initializer_list<std::size_t> nodes) {
        clear();
        reserve(nodes.size());
        for (auto node : nodes) push_back(node);
        return *this;
    }

    ~node_list() { release(); }

    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    std::size_t capacity() const noexcept { return capacity_; }

    std::size_t* data() noexcept { return is_inline() ? inline_ : heap_; }
    const std::size_t* data() const noexcept { return is_inline() ? inline_ : heap_; }

    iterator begin() noexcept { return data(); }
    iterator end() noexcept { return data() + size_; }
    const_iterator begin() const noexcept { return data(); }
    const_iterator end() const noexcept { return data() + size_; }
    const_iterator cbegin() const noexcept { return begin(); }
    const_iterator cend() const noexcept { return end(); }
    reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
    reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
    const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
    const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

    std::size_t& operator[](std::size_t i) noexcept {
        NUMGAP_ASSERT(i < size_);
        return data()[i];
    }
    const std::size_t& operator[](std::size_t i) const noexcept {
        NUMGAP_ASSERT(i < size_);
        return data()[i];
    }
    std::size_t& front() noexcept { return (*this)[0]; }
    const std::size_t& front() const noexcept { return (*this)[0]; }
    std::size_t& back() noexcept { return (*this)[size_ - 1]; }
    const std::size_t& back() const noexcept { return (*this)[size_ - 1]; }

    void push_back(std::size_t node) {
        if (size_ == capacity_) grow(static_cast<std::size_t>(capacity_) * 2);
        data()[size_++] = node;
    }

    void reserve(std::size_t count) {
        if (count > capacity_) grow(count);
    }

    // Keeps the capacity (as std::vector::clear).
    void clear() noexcept { size_ = 0; }

    operator std::vector<std::size_t>() const { return std::vector<std::size_t>(begin(), end()); }

    friend bool operator==(const node_list& a, const node_list& b) noexcept { return equal(a, b.begin(), b.size()); }
    friend bool operator==(const node_list& a, const std::vector<std::size_t>& b) noexcept {
        return equal(a, b.data(), b.size());
    }
    // Lexicographic, as std::vector's: node_list can key a std::map.
    friend std::strong_ordering operator<=>(const node_list& a, const node_list& b) noexcept {
        return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
    }
    friend std::strong_ordering operator<=>(const node_list& a, const std::vector<std::size_t>& b) noexcept {
        return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
    }

private:
    bool is_inline() const noexcept { return capacity_ == inline_capacity; }

    static bool equal(const node_list& a, const std::size_t* b, std::size_t count) noexcept {
        return a.size_ == count && std::equal(a.begin(), a.end(), b);
    }

    // Moves other's elements into this list, which holds no heap block, and
    // leaves other empty and inline.
    void take(node_list& other) noexcept {
        size_ = other.size_;
        capacity_ = other.capacity_;
        if (other.is_inline())
            for (std::uint32_t k = 0; k < other.size_; ++k) inline_[k] = other.inline_[k];
        else
            heap_ = other.heap_;
        other.size_ = 0;
        other.capacity_ = inline_capacity;
    }

    // Requires capacity_ >= other.size_.
    void copy_from(const node_list& other) noexcept {
        if (other.size_ > 0) std::memcpy(data(), other.data(), other.size_ * sizeof(std::size_t));
        size_ = other.size_;
    }

    void grow(std::size_t wanted) {
        if (wanted > max_size) {
            if (capacity_ == max_size)
                throw std::length_error("numgap::node_list: a node set cannot hold more than 2^32 - 1 nodes");
            wanted = max_size;
        }
        // Heap capacities are always above inline_capacity, so capacity_
        // alone tells where the elements live.
        auto* fresh = new std::size_t[wanted];
        if (size_ > 0) std::memcpy(fresh, data(), size_ * sizeof(std::size_t));
        release();
        heap_ = fresh;
        capacity_ = static_cast<std::uint32_t>(wanted);
    }

    void release() noexcept {
        if (!is_inline()) delete[] heap_;
        capacity_ = inline_capacity;
    }

    static constexpr std::size_t max_size = 0xffffffffu;

    // 32-bit counts keep node_list as small as a std::vector.
    std::uint32_t size_ = 0;
    std::uint32_t capacity_ = inline_capacity;
    union {
        std::size_t inline_[inline_capacity];
        std::size_t* heap_;
    };
};

} // namespace numgap
