#pragma once
// describe_quantization: a short human-readable summary of a view's
// quantization for reports ("scale=0.0235 zero_point=128",
// "per-channel axis=3, 64 scales, scale 0.001..0.02", "blocks of 32 along
// axis=-1, 128 scales, scale ..."), empty when the view is
// not quantized. Why a summary and not the arrays: a report row must stay one
// line; the full parameters are in the run's graph.json.
// Complexity: O(channels). Throws: std::bad_alloc.
#include <algorithm>
#include <string>

#include <numgap/core/tensor_view.hpp>
#include <numgap/report/format_double.hpp>

namespace numgap {

inline std::string describe_quantization(const tensor_view& view) {
    if (!view.is_quantized()) return {};
    const quantization& q = view.quant();
    if (!q.per_channel() && !q.per_block())
        return "scale=" + format_double_short(q.scale) + " zero_point=" + std::to_string(q.zero_point);
    const auto [smallest, largest] = std::minmax_element(q.scales.begin(), q.scales.end());
    const std::string form =
        q.per_block() ? "blocks of " + std::to_string(q.block_size) + " along axis=" : std::string("per-channel axis=");
    std::string text = form + std::to_string(q.axis) + ", " +
                       std::to_string(q.scales.size()) + " scales, scale " +
                       format_double_short(*smallest) + ".." + format_double_short(*largest);
    if (!q.zero_points.empty()) {
        const auto [low, high] = std::minmax_element(q.zero_points.begin(), q.zero_points.end());
        text += ", zero_point " + std::to_string(*low) + ".." + std::to_string(*high);
    }
    return text;
}

} // namespace numgap
