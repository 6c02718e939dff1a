#pragma once
// Affine quantization of an integer tensor: real = scale * (q - zero_point),
// computed as scale * float(q - zero_point) in float32 (q - zero_point exact),
// in one of three forms. Non-owning, like the view that carries it: the
// arrays must outlive the view.
//
// - Per tensor: `scale`, `zero_point`.
// - Per channel along `axis` (a stored dimension of the view): `scales` holds
//   one scale per index of that axis, `zero_points` as many or none (all 0).
// - Per block (group quantization: GPTQ/AWQ groups, Qualcomm's block
//   quantization, and the shape MX formats take): `block_size` B > 0 cuts
//   the stored dimension `axis` (length A) into blocks of B consecutive
//   indices, restarting at every index of the other dimensions, so a block
//   never crosses into another row of that axis; the last block of a row is
//   partial when A is not a multiple of B. With the view's shape
//   [outer..., A, inner...] (outer = product of the dimensions before axis,
//   inner = after), `scales` has outer * ceil(A / B) * inner entries laid out
//   row-major as a tensor of shape [outer..., ceil(A / B), inner...], i.e. the
//   view's shape with A replaced by the block count: element
//   (o, a, i) uses entry (o * ceil(A / B) + a / B) * inner + i. `zero_points`
//   has as many entries or none (all 0). axis may be negative (-1: the last).
//   Blocks along the last axis (inner = 1) are the common case and the fast
//   one (kernels/source/block_source.hpp).
// validate_view (kernels/plan/validate_pair.hpp) checks counts, axis, finite
// non-zero scales and a block-quantized view's layout (contiguous storage).
#include <cstdint>
#include <optional>
#include <span>

namespace numgap {

struct quantization {
    float scale = 1.0f;
    std::int32_t zero_point = 0;
    // Per-channel or per-block parameters; non-empty `scales` means per
    // channel along `axis` (block_size 0) or per block (block_size > 0).
    // `zero_points` may be empty (all zero).
    std::span<const float> scales{};
    std::span<const std::int32_t> zero_points{};
    int axis = -1;
    std::int64_t block_size = 0; // 0: not block-quantized

    constexpr bool per_channel() const noexcept { return !scales.empty() && block_size == 0; }
    constexpr bool per_block() const noexcept { return block_size > 0; }

    static constexpr quantization per_tensor(float scale, std::int32_t zero_point = 0) noexcept {
        return quantization{scale, zero_point, {}, {}, -1, 0};
    }
    static constexpr quantization along(int axis, std::span<const float> scales,
                                        std::span<const std::int32_t> zero_points = {}) noexcept {
        return quantization{1.0f, 0, scales, zero_points, axis, 0};
    }
    static constexpr quantization blocks(int axis, std::int64_t block_size, std::span<const float> scales,
                                         std::span<const std::int32_t> zero_points = {}) noexcept {
        return quantization{1.0f, 0, scales, zero_points, axis, block_size};
    }
};

// A possibly negative axis (-1: the last) as a dimension index of a view of `rank`.
constexpr int resolved_axis(int axis, int rank) noexcept { return axis < 0 ? axis + rank : axis; }

// How many scales block quantization of `shape` along `axis` in blocks of
// `block_size` needs: outer * ceil(length / block_size) * inner; nullopt for
// an axis out of range or a block size below 1. Never overflows: the count
// is at most the element count (or the product of the other dimensions).
constexpr std::optional<std::int64_t> block_parameter_count(std::span<const std::int64_t> shape, int axis,
                                                            std::int64_t block_size) noexcept {
    const int dimension = resolved_axis(axis, int(shape.size()));
    if (dimension < 0 || dimension >= int(shape.size()) || block_size < 1) return std::nullopt;
    const std::int64_t length = shape[std::size_t(dimension)];
    std::int64_t count = length / block_size + (length % block_size != 0 ? 1 : 0);
    for (std::size_t d = 0; d < shape.size(); ++d)
        if (int(d) != dimension) count *= shape[d];
    return count;
}

} // namespace numgap
