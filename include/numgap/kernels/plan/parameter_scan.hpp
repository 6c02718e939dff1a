#pragma once
// The per-element checks validate_view makes on quantization parameters,
// written to run at memory speed: a block-quantized tensor of 2^26 elements
// has 2^21 block scales, and the branchy loop these replace took ~1 ns a scale
// (2 ms a call, a seventh of the fused pass itself; AMD EPYC Zen 4). Each
// block of `scan_block` values is reduced branch-free to one flag (a loop the
// compiler vectorises), and only a flagged block is searched for the index.
//   first_invalid_scale(scales, nan_allowed): the index of the first scale
//     that is zero, infinite, or NaN (unless nan_allowed: an MX block's NaN
//     scale is a NaN block, not an error), or scales.size() when all are valid.
//   first_zero_point_beyond(zero_points, limit): the index of the first zero
//     point outside [-limit, limit] (limit >= 0), or zero_points.size().
// Complexity: O(n), one read of the values. Throws: nothing.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace numgap::detail {

inline constexpr std::size_t scan_block = 1024;

// Scans `values` a block at a time with `flag` (value -> 0 or 1) and returns
// the first flagged index, or values.size().
template <class T, class Flag>
std::size_t first_flagged(std::span<const T> values, const Flag& flag) noexcept {
    for (std::size_t start = 0; start < values.size(); start += scan_block) {
        const std::size_t length = std::min(scan_block, values.size() - start);
        const T* block = values.data() + start;
        std::uint32_t any = 0;
        if (length == scan_block)
            for (std::size_t i = 0; i < scan_block; ++i) any |= flag(block[i]); // fixed count: vectorised at -O2
        else
            for (std::size_t i = 0; i < length; ++i) any |= flag(block[i]);
        if (any != 0)
            for (std::size_t i = 0; i < length; ++i)
                if (flag(block[i]) != 0) return start + i;
    }
    return values.size();
}

inline std::size_t first_invalid_scale(std::span<const float> scales, bool nan_allowed) noexcept {
    const std::uint32_t nan_mask = nan_allowed ? 1u : 0u;
    // Arithmetic, not comparisons, on the magnitude m <= 0x7fffffff (GCC 12
    // turned the comparisons back into branches): bit 31 of m - 1 says m == 0,
    // of m + 0x800000 that m >= 0x7f800000 (infinite or NaN), of m + 0x7fffff
    // that m > 0x7f800000 (NaN).
    return first_flagged(scales, [nan_mask](float scale) -> std::uint32_t {
        const std::uint32_t magnitude = std::bit_cast<std::uint32_t>(scale) & 0x7fffffffu;
        const std::uint32_t zero = (magnitude - 1u) >> 31;
        const std::uint32_t not_finite = (magnitude + 0x800000u) >> 31;
        const std::uint32_t nan = (magnitude + 0x7fffffu) >> 31;
        return zero | (not_finite & ~(nan & nan_mask));
    });
}

inline std::size_t first_zero_point_beyond(std::span<const std::int32_t> zero_points, std::int32_t limit) noexcept {
    return first_flagged(zero_points, [limit](std::int32_t zero_point) -> std::uint32_t {
        // In [-limit, limit] exactly when zero_point + limit, as an unsigned
        // 64-bit number, is at most 2 * limit.
        return std::uint32_t(std::uint64_t(std::int64_t(zero_point) + limit) > std::uint64_t(2 * std::int64_t(limit)));
    });
}

} // namespace numgap::detail
