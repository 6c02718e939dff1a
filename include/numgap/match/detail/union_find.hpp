#pragma once
// numgap::detail::union_find: disjoint sets over 0..n-1 with union by size and
// path halving: near-constant amortised time per operation (inverse
// Ackermann). Used to turn "shares a debug handle" / "named in one explicit
// pair" into groups without an all-pairs scan. Never throws except
// std::bad_alloc at construction.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace numgap::detail {

class union_find {
public:
    explicit union_find(std::size_t n) : parent_(n), size_(n, 1) {
        for (std::size_t i = 0; i < n; ++i) parent_[i] = static_cast<std::uint32_t>(i);
    }

    std::size_t find(std::size_t x) noexcept {
        while (parent_[x] != x) {
            parent_[x] = parent_[parent_[x]];
            x = parent_[x];
        }
        return x;
    }

    void unite(std::size_t a, std::size_t b) noexcept {
        a = find(a);
        b = find(b);
        if (a == b) return;
        if (size_[a] < size_[b]) std::swap(a, b);
        parent_[b] = static_cast<std::uint32_t>(a);
        size_[a] += size_[b];
    }

private:
    // 32-bit links halve the memory traffic; graphs beyond 4e9 nodes are out
    // of scope (checked by callers through NUMGAP_ASSERT).
    std::vector<std::uint32_t> parent_;
    std::vector<std::uint32_t> size_;
};

} // namespace numgap::detail
