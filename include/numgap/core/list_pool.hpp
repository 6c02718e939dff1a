#pragma once
// numgap::detail::list_pool<T>: many short lists (a graph's producer lists,
// debug handles, output keys) kept in one array instead of a std::vector
// each. A list costs 8 bytes of reference plus its elements; a std::vector
// costs 24 bytes plus a heap block (32 bytes or more with malloc's overhead)
// even for one element, which is most of a million-node graph's memory.
//
// Lists are numbered densely; push_list appends one. A list made by
// push_list or assign occupies exactly its elements. append() grows a list
// in place while it ends the array, else moves it to the end with room for
// bit_ceil(size) elements, so appending one at a time stays amortised O(1)
// as with a vector. Slots that a moved or replaced list leaves behind are
// counted, and the array is compacted (lists in number order, no spare
// room) once they outnumber the live ones.
// get() returns a span that stays valid until the pool next changes.
// Limits: 2^31 - 1 elements a list and 2^32 - 1 slots in all; past them
// numgap::error (error_kind::limit) naming `what` (the caller's word for the
// elements: "producers", "output keys").
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <numgap/core/error.hpp>

namespace numgap::detail {

template <class T>
class list_pool {
public:
    explicit list_pool(const char* what) : what_(what) {}

    std::size_t num_lists() const noexcept { return refs_.size(); }
    std::span<const T> get(std::size_t list) const noexcept {
        const list_ref ref = refs_[list];
        return {slots_.data() + ref.first, ref.size()};
    }

    void reserve(std::size_t lists, std::size_t elements) {
        refs_.reserve(lists);
        slots_.reserve(elements);
    }

    // Appends a list holding [first, last); returns its number.
    template <class It>
    std::size_t push_list(It first, It last) {
        const std::size_t size = std::size_t(std::distance(first, last));
        check_room(size, size);
        const std::size_t start = slots_.size();
        refs_.push_back(list_ref::exact(start, size));
        try {
            slots_.insert(slots_.end(), first, last);
        } catch (...) {
            refs_.pop_back();
            throw;
        }
        return refs_.size() - 1;
    }

    // Removes the lists numbered `count` and up (their slots are left behind
    // unless they end the array).
    void truncate(std::size_t count) noexcept {
        while (refs_.size() > count) {
            const list_ref last = refs_.back();
            refs_.pop_back();
            if (last.first + last.capacity() == slots_.size()) slots_.resize(last.first);
            else discard(last);
        }
    }

    void swap_lists(std::size_t a, std::size_t b) noexcept { std::swap(refs_[a], refs_[b]); }

    // Replaces list `list` by [first, last) (which must not view this pool).
    template <class It>
    void assign(std::size_t list, It first, It last) {
        const std::size_t size = std::size_t(std::distance(first, last));
        if constexpr (std::is_nothrow_copy_assignable_v<T>) {
            const list_ref old = refs_[list];
            if (size <= old.capacity()) { // in place; slots it no longer covers are left behind
                std::copy(first, last, slots_.begin() + std::ptrdiff_t(old.first));
                refs_[list] = old.resized(size);
                garbage_ += old.capacity() - refs_[list].capacity();
                return;
            }
        }
        check_room(size, size); // may compact: refs_ are read after it
        const std::size_t start = slots_.size();
        slots_.insert(slots_.end(), first, last);
        discard(refs_[list]);
        refs_[list] = list_ref::exact(start, size);
    }

    void append(std::size_t list, T element) {
        const std::size_t size = refs_[list].size();
        if (size < refs_[list].capacity()) {
            slots_[refs_[list].first + size] = std::move(element);
            refs_[list] = refs_[list].resized(size + 1);
            return;
        }
        // Room to grow: bit_ceil keeps capacity() derivable from the size.
        const std::size_t room = std::bit_ceil(size + 1);
        check_room(size + 1, room); // may compact: refs_ are read after it
        const list_ref old = refs_[list];
        if (old.first + size == slots_.size() && !old.grown()) { // ends the array: grows there
            slots_.push_back(std::move(element));
            refs_[list] = old.resized(size + 1);
            return;
        }
        const std::size_t start = slots_.size();
        slots_.resize(start + room);
        for (std::size_t i = 0; i < size; ++i) slots_[start + i] = std::move(slots_[old.first + i]);
        slots_[start + size] = std::move(element);
        refs_[list] = list_ref::grown_list(start, size + 1);
        discard(old);
    }

    // Every slot in use or left behind (for tests and memory accounting).
    std::size_t num_slots() const noexcept { return slots_.size(); }

private:
    // Where a list lives: `first` and its size, whose top bit marks a list
    // moved by append() (its capacity is then bit_ceil(size), else size).
    struct list_ref {
        std::uint32_t first = 0;
        std::uint32_t size_and_grown = 0;
        static constexpr std::uint32_t grown_bit = 0x80000000u;

        static list_ref exact(std::size_t first, std::size_t size) {
            return {std::uint32_t(first), std::uint32_t(size)};
        }
        static list_ref grown_list(std::size_t first, std::size_t size) {
            return {std::uint32_t(first), std::uint32_t(size) | grown_bit};
        }
        std::size_t size() const noexcept { return size_and_grown & ~grown_bit; }
        bool grown() const noexcept { return (size_and_grown & grown_bit) != 0; }
        std::size_t capacity() const noexcept { return grown() ? std::bit_ceil(size()) : size(); }
        list_ref resized(std::size_t size) const { return {first, std::uint32_t(size) | (size_and_grown & grown_bit)}; }
    };
    static constexpr std::size_t max_list_size = list_ref::grown_bit - 1;
    static constexpr std::size_t max_slots = 0xffffffffu;

    // Compacting first when the leftovers outnumber the live slots; then
    // refuses what would pass the limits.
    void check_room(std::size_t list_size, std::size_t added) {
        if (list_size > max_list_size)
            throw error(error_kind::limit,
                        std::string("a graph node with more than 2^31 - 1 ") + what_ + " cannot be stored");
        if (garbage_ > slots_.size() / 2 && garbage_ > 1024) compact();
        if (added > max_slots - slots_.size())
            throw error(error_kind::limit,
                        std::string("a graph with more than 2^32 - 1 ") + what_ + " in all cannot be stored");
    }
    void discard(list_ref old) noexcept { garbage_ += old.capacity(); }
    void compact() {
        // Every slot a list owns is outside garbage_: after this reserve the
        // moves (noexcept for the element types used) cannot fail halfway.
        std::vector<T> packed;
        packed.reserve(slots_.size() - std::min(garbage_, slots_.size())); // a moved-from pool keeps its count
        for (list_ref& ref : refs_) {
            const std::size_t size = ref.size();
            const std::size_t start = packed.size();
            for (std::size_t i = 0; i < size; ++i) packed.push_back(std::move(slots_[ref.first + i]));
            ref = list_ref::exact(start, size);
        }
        slots_ = std::move(packed);
        garbage_ = 0;
    }

    const char* what_;
    std::vector<list_ref> refs_;
    std::vector<T> slots_;
    std::size_t garbage_ = 0; // slots no list owns
};

} // namespace numgap::detail
