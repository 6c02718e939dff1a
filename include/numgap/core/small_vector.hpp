#pragma once
// numgap::small_vector<T, N>: a vector whose first N elements live inside the
// object, so it allocates only once it grows past N. evaluation::metrics is
// one: evaluate() on a 2^10-element pair took ~15% longer with a heap block
// of results per call (AMD Zen 4).
//
// The part of std::vector's interface that results need: size, empty,
// capacity, data, begin/end (pointers), operator[], front/back, push_back,
// emplace_back, pop_back, resize, reserve, clear, copy and move, ==; and
// append_generated(count, make), which builds count elements in place from
// make(i) and counts them once (how evaluate() fills its results).
// Differences from std::vector: moving a vector that holds its elements
// inside moves them one by one, so pointers into it do not survive a move;
// capacity() is at least N.
// Exception safety: growth gives the strong guarantee unless T's move
// constructor may throw and T cannot be copied (then the basic one), as
// std::vector, and so does append_generated (a throwing make(i) destroys
// what it had built, before any old element moved); resize, copies and
// assignment the basic one.
// Complexity: as std::vector (growth at least doubles the capacity).
// Throws: std::bad_alloc, std::length_error past max_size(), whatever T's
// constructors throw.
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace numgap {

template <class T, std::size_t N>
class small_vector {
    static_assert(N > 0, "small_vector keeps at least one element inside");

public:
    using value_type = T;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using reference = T&;
    using const_reference = const T&;
    using pointer = T*;
    using const_pointer = const T*;
    using iterator = T*;
    using const_iterator = const T*;

    small_vector() noexcept : data_(inside()) {}
    small_vector(std::initializer_list<T> values) : small_vector() { append_copies(values.begin(), values.end()); }
    small_vector(const small_vector& other) : small_vector() { append_copies(other.begin(), other.end()); }
    small_vector(small_vector&& other) noexcept(std::is_nothrow_move_constructible_v<T>) : small_vector() {
        take(other);
    }
    ~small_vector() {
        clear();
        release();
    }

    small_vector& operator=(const small_vector& other) {
        if (this != &other) {
            clear();
            append_copies(other.begin(), other.end());
        }
        return *this;
    }
    small_vector& operator=(small_vector&& other) noexcept(std::is_nothrow_move_constructible_v<T>) {
        if (this != &other) {
            clear();
            release();
            take(other);
        }
        return *this;
    }

    size_type size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    size_type capacity() const noexcept { return capacity_; }
    static constexpr size_type max_size() noexcept {
        return size_type(std::numeric_limits<difference_type>::max()) / sizeof(T);
    }

    T* data() noexcept { return data_; }
    const T* data() const noexcept { return data_; }
    iterator begin() noexcept { return data_; }
    iterator end() noexcept { return data_ + size_; }
    const_iterator begin() const noexcept { return data_; }
    const_iterator end() const noexcept { return data_ + size_; }
    const_iterator cbegin() const noexcept { return data_; }
    const_iterator cend() const noexcept { return data_ + size_; }

    T& operator[](size_type i) noexcept { return data_[i]; }
    const T& operator[](size_type i) const noexcept { return data_[i]; }
    T& front() noexcept { return data_[0]; }
    const T& front() const noexcept { return data_[0]; }
    T& back() noexcept { return data_[size_ - 1]; }
    const T& back() const noexcept { return data_[size_ - 1]; }

    void reserve(size_type wanted) {
        if (wanted > capacity_) reallocate(wanted, 0, [](T*) {});
    }

    template <class... Args>
    T& emplace_back(Args&&... args) {
        if (size_ < capacity_) {
            ::new (static_cast<void*>(data_ + size_)) T(std::forward<Args>(args)...);
        } else {
            // Built in the new block before the old elements move, so an
            // argument that refers to one of them is still intact.
            reallocate(grown_capacity(size_ + 1), 1,
                       [&](T* fresh) { ::new (static_cast<void*>(fresh + size_)) T(std::forward<Args>(args)...); });
        }
        return data_[size_++];
    }
    // Appends count elements, the i-th built where it lies from make(i), a T
    // returned by value (so no temporary and no move), with the size stored
    // once at the end. Why: evaluate() at 2^10 elements took ~3 ns less
    // than with resize-then-assign (AMD Zen 5). As for emplace_back, growth
    // builds the new elements in the new block before moving the old ones,
    // so make may read the vector's elements; it must not modify the vector.
    template <class Make>
    void append_generated(size_type count, Make&& make) {
        static_assert(std::is_same_v<std::invoke_result_t<Make&, size_type>, T>,
                      "make(i) must return the element type by value");
        if (count > max_size() - size_) throw std::length_error("numgap::small_vector: more elements than max_size()");
        const auto build_at = [&](T* first) { // all or nothing
            size_type built = 0;
            try {
                for (; built < count; ++built) ::new (static_cast<void*>(first + built)) T(make(built));
            } catch (...) {
                std::destroy(first, first + built);
                throw;
            }
        };
        if (size_ + count > capacity_)
            reallocate(grown_capacity(size_ + count), count, [&](T* fresh) { build_at(fresh + size_); });
        else build_at(data_ + size_);
        size_ += count;
    }
    void push_back(const T& value) { emplace_back(value); }
    void push_back(T&& value) { emplace_back(std::move(value)); }
    void pop_back() noexcept { std::destroy_at(data_ + --size_); }

    // Value-initialises the elements added.
    void resize(size_type wanted) {
        if (wanted <= size_) {
            std::destroy(data_ + wanted, data_ + size_);
            size_ = wanted;
            return;
        }
        if (wanted > capacity_) reallocate(grown_capacity(wanted), 0, [](T*) {});
        for (; size_ < wanted; ++size_) ::new (static_cast<void*>(data_ + size_)) T();
    }
    void clear() noexcept {
        std::destroy(data_, data_ + size_);
        size_ = 0;
    }

    friend bool operator==(const small_vector& a, const small_vector& b) {
        return std::equal(a.begin(), a.end(), b.begin(), b.end());
    }

private:
    T* inside() noexcept { return reinterpret_cast<T*>(storage_); }
    bool on_heap() const noexcept { return capacity_ > N; }

    void release() noexcept {
        if (on_heap()) std::allocator<T>().deallocate(data_, capacity_);
        data_ = inside();
        capacity_ = N;
    }

    // Takes other's elements (its heap block, or each element moved) into
    // this empty vector that holds no heap block; other is left empty.
    void take(small_vector& other) noexcept(std::is_nothrow_move_constructible_v<T>) {
        if (other.on_heap()) {
            data_ = std::exchange(other.data_, other.inside());
            capacity_ = std::exchange(other.capacity_, N);
            size_ = std::exchange(other.size_, 0);
            return;
        }
        std::uninitialized_move(other.begin(), other.end(), data_);
        size_ = other.size_;
        other.clear();
    }

    // At least wanted (reallocate refuses more than max_size()).
    size_type grown_capacity(size_type wanted) const {
        return std::max(wanted, capacity_ > max_size() / 2 ? max_size() : 2 * capacity_);
    }

    template <class It>
    void append_copies(It first, It last) {
        reserve(size_ + size_type(last - first));
        for (; first != last; ++first, ++size_) ::new (static_cast<void*>(data_ + size_)) T(*first);
    }

    // Moves the elements into a new block of `capacity` elements after
    // build(fresh) has constructed what goes past them: the built_elements
    // being added from fresh[size_] on (none for reserve), which count once
    // the caller raises size_. build itself leaves nothing built if it throws.
    template <class Build>
    void reallocate(size_type capacity, size_type built_elements, Build&& build) {
        if (capacity > max_size()) throw std::length_error("numgap::small_vector: more elements than max_size()");
        std::allocator<T> allocator;
        T* fresh = allocator.allocate(capacity);
        try {
            build(fresh);
        } catch (...) {
            allocator.deallocate(fresh, capacity);
            throw;
        }
        try {
            if constexpr (std::is_nothrow_move_constructible_v<T> || !std::is_copy_constructible_v<T>)
                std::uninitialized_move(begin(), end(), fresh);
            else std::uninitialized_copy(begin(), end(), fresh);
        } catch (...) {
            std::destroy(fresh + size_, fresh + size_ + built_elements);
            allocator.deallocate(fresh, capacity);
            throw;
        }
        // The old elements were moved from; size_ stays, as they now live in fresh.
        std::destroy(data_, data_ + size_);
        if (on_heap()) allocator.deallocate(data_, capacity_);
        data_ = fresh;
        capacity_ = capacity;
    }

    alignas(T) std::byte storage_[N * sizeof(T)];
    T* data_;
    size_type size_ = 0;
    size_type capacity_ = N;
};

} // namespace numgap
