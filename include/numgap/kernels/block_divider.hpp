#pragma once
// block_divider: a / block for 0 <= a < 2^31 and 1 <= block < 2^31 as
// (a * multiplier) >> shift, exactly: the block a position falls in, per
// vector in the block-quantized sources (source/block_source.hpp), where an
// integer division would cost more than the rest of the vector's work.
// Granlund & Montgomery (1994), Thm 4.2 with N = 31: shift = 31 + ceil(log2
// block), multiplier = floor(2^shift / block) + 1, so multiplier * block lies
// in (2^shift, 2^shift + 2^(shift - 31)] and multiplier < 2^33 keeps
// a * multiplier below 2^64. Rows and blocks the in-register path reads stay
// below longest_block_row so both bounds hold.
// Complexity: make_block_divider O(log block), divide O(1). Throws: nothing.
#include <cstdint>

#include <numgap/core/isa_namespace.hpp>

namespace numgap::kernels {

struct block_divider {
    std::uint64_t multiplier = 1;
    int shift = 0;
};

inline constexpr std::int64_t longest_block_row = std::int64_t(1) << 31;

inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

constexpr block_divider make_block_divider(std::uint32_t block) noexcept {
    int ceil_log2 = 0;
    while ((std::uint64_t(1) << ceil_log2) < block) ++ceil_log2;
    const int shift = 31 + ceil_log2;
    return {(std::uint64_t(1) << shift) / block + 1, shift};
}

constexpr std::uint32_t divide(std::uint32_t a, const block_divider& divider) noexcept {
    return std::uint32_t((std::uint64_t(a) * divider.multiplier) >> divider.shift);
}

} // namespace NUMGAP_ISA_NAMESPACE

} // namespace numgap::kernels
