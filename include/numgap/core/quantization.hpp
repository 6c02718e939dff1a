#pragma once
// Affine quantization of an integer tensor: real = scale * (q - zero_point),
// per tensor or per channel along one stored dimension. Non-owning, like the
// view that carries it: per-channel arrays must outlive the view.
#include <cstdint>
#include <span>

namespace numgap {

struct quantization {
    float scale = 1.0f;
    std::int32_t zero_point = 0;
    // Per-channel parameters; non-empty `scales` means per-channel along `axis`
    // (a stored dimension of the view). `zero_points` may be empty (all zero).
    std::span<const float> scales{};
    std::span<const std::int32_t> zero_points{};
    int axis = -1;

    constexpr bool per_channel() const noexcept { return !scales.empty(); }

    static constexpr quantization per_tensor(float scale, std::int32_t zero_point = 0) noexcept {
        return quantization{scale, zero_point, {}, {}, -1};
    }
    static constexpr quantization along(int axis, std::span<const float> scales,
                                        std::span<const std::int32_t> zero_points = {}) noexcept {
        return quantization{1.0f, 0, scales, zero_points, axis};
    }
};

} // namespace numgap
