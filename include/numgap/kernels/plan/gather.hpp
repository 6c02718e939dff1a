#pragma once
// gather: fills a block buffer with n elements of one side of a pair_plan,
// starting at a flat reference-order position and crossing rows of the
// innermost dimension as needed, converted to T (float, or double for
// float64 pairs); direct_pointer() is the zero-copy alternative for a side
// that already is contiguous T without quantization.
// Conversion: unit-stride runs of the narrow types go through the plan's
// optional per-arch widen_f32 (table/kernel_table.hpp), everything else
// through the portable loops below. Dequantization is float32 arithmetic,
// scale * float(q - zero_point), rounded once, whatever the block type, so
// every pass sees the same values (q - zero_point is formed exactly, never in
// int32; above 2^24 in magnitude, i.e. int32 data or an extreme zero point, it
// rounds to float32); per-channel parameters are looked up by the element's
// channel index. Packed 4-bit data, block-quantized sides and scaled MX
// element sides (scale * decode(code)) are converted
// element by element (convert_coded_run: the block of each element from its
// stored index, plan_side's formula): correct for every layout, not fast;
// blocks along the last axis usually go through the in-register path instead
// (for_each_run.hpp).
// Complexity: O(n) plus O(rank) per row crossed, no allocation. Throws: nothing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <numgap/core/config.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/float8.hpp>
#include <numgap/core/half.hpp>
#include <numgap/kernels/entry_points.hpp>
#include <numgap/kernels/isa/generic.hpp>
#include <numgap/kernels/plan/pair_plan.hpp>
#include <numgap/kernels/plan/stored_run.hpp>

namespace numgap::kernels::detail {

template <class Source, class T>
void convert_run_typed(const plan_side& side, std::int64_t offset, std::int64_t stride,
                       std::size_t n, std::int64_t channel, std::int64_t channel_step,
                       T* out) noexcept {
    // bool is read as its byte: a stored byte other than 0 or 1 (C, numpy
    // views) would be undefined behaviour through a bool lvalue; nonzero is true.
    using stored = std::conditional_t<std::is_same_v<Source, bool>, std::uint8_t, Source>;
    const stored* source = reinterpret_cast<const stored*>(side.base) + offset;
    auto raw = [&](std::size_t i) -> T {
        const stored value = source[std::int64_t(i) * stride];
        if constexpr (is_stored_float<Source>)
            return T(to_float(value));
        else if constexpr (std::is_same_v<Source, bool>)
            return value != 0 ? T(1) : T(0);
        else
            return T(value);
    };
    if constexpr (std::is_integral_v<Source> && !std::is_same_v<Source, bool>) {
        if (side.quantized) {
            if (side.scales == nullptr || channel_step == 0) {
                const float scale = side.scales ? side.scales[channel] : side.scale;
                const std::int64_t zero_point =
                    side.scales ? (side.zero_points ? side.zero_points[channel] : 0) : side.zero_point;
                // q - zero_point spans up to 2^33 (int32 q, int32 zero point), so
                // int32 arithmetic would overflow; double holds it exactly (53-bit
                // mantissa), so float(difference) rounds once, as from int64, and
                // the unit-stride loop still vectorises (int32 -> double converts
                // natively, int64 -> float does not before AVX-512DQ).
                const double zero = double(zero_point);
                if (stride == 1) {
                    if constexpr (sizeof(Source) < 4) {
                        if (zero_point >= -(1 << 24) && zero_point <= (1 << 24)) {
                            // The everyday case: int32 is exact here and
                            // vectorises at full float width.
                            const std::int32_t zero32 = std::int32_t(zero_point);
                            for (std::size_t i = 0; i < n; ++i)
                                out[i] = T(scale * float(std::int32_t(source[i]) - zero32));
                            return;
                        }
                    }
                    for (std::size_t i = 0; i < n; ++i) out[i] = T(scale * float(double(source[i]) - zero));
                    return;
                }
                for (std::size_t i = 0; i < n; ++i)
                    out[i] = T(scale * float(double(source[std::int64_t(i) * stride]) - zero));
            } else {
                for (std::size_t i = 0; i < n; ++i) {
                    const std::int64_t c = channel + std::int64_t(i);
                    const std::int64_t zero_point = side.zero_points ? side.zero_points[c] : 0;
                    out[i] = T(side.scales[c] * float(double(source[std::int64_t(i) * stride]) - double(zero_point)));
                }
            }
            return;
        }
    }
    if (stride == 1) {
        // Unit stride, spelled out so the compiler vectorises the conversion.
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr (is_stored_float<Source>)
                out[i] = T(to_float(source[i]));
            else if constexpr (std::is_same_v<Source, bool>)
                out[i] = source[i] != 0 ? T(1) : T(0);
            else
                out[i] = T(source[i]);
        }
        return;
    }
    for (std::size_t i = 0; i < n; ++i) out[i] = raw(i);
}

// The stored integer at element index e of an integer side.
inline std::int64_t stored_integer(const plan_side& side, std::int64_t e) noexcept {
    switch (side.type) {
    case dtype::int4: return isa::nibble_code<int4_codes>(side.base, std::size_t(e));
    case dtype::uint4: return isa::nibble_code<uint4_codes>(side.base, std::size_t(e));
    case dtype::int8: return reinterpret_cast<const std::int8_t*>(side.base)[e];
    case dtype::uint8: return side.base[e];
    case dtype::int16: return reinterpret_cast<const std::int16_t*>(side.base)[e];
    case dtype::uint16: return reinterpret_cast<const std::uint16_t*>(side.base)[e];
    case dtype::int32: return reinterpret_cast<const std::int32_t*>(side.base)[e];
    default: NUMGAP_ASSERT(false && "only integer and MX element sides are packed or block-quantized"); return 0;
    }
}

// The decoded value at element index e of an MX element side (is_mx_element).
inline float stored_mx_value(const plan_side& side, std::int64_t e) noexcept {
    switch (side.type) {
    case dtype::float4_e2m1fn: return isa::mx_code_value<e2m1_codes>(side.base, std::size_t(e));
    case dtype::float6_e2m3fn: return isa::mx_code_value<float6_e2m3fn>(side.base, std::size_t(e));
    case dtype::float6_e3m2fn: return isa::mx_code_value<float6_e3m2fn>(side.base, std::size_t(e));
    case dtype::float8_e4m3fn: return to_float(reinterpret_cast<const float8_e4m3fn*>(side.base)[e]);
    case dtype::float8_e5m2: return to_float(reinterpret_cast<const float8_e5m2*>(side.base)[e]);
    default: NUMGAP_ASSERT(false && "stored_mx_value reads MX element sides only"); return 0.0f;
    }
}

// Packed or block-quantized sides, element by element (see the top).
template <class T>
void convert_coded_run(const plan_side& side, std::int64_t offset, std::int64_t stride, std::size_t n,
                       std::int64_t channel, std::int64_t channel_step, T* out) noexcept {
    const bool mx_element = is_mx_element(side.type);
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t e = offset + std::int64_t(i) * stride;
        if (!side.quantized) {
            out[i] = mx_element ? T(stored_mx_value(side, e)) : T(stored_integer(side, e));
            continue;
        }
        float scale = side.scale;
        std::int64_t zero_point = side.zero_point;
        if (side.block_scales != nullptr) {
            const std::int64_t row_length = side.block_axis_length * side.block_inner;
            const std::int64_t in_row = e % row_length;
            const std::int64_t block = ((e / row_length) * side.blocks_per_row + in_row / side.block_inner / side.block_size) *
                                           side.block_inner + in_row % side.block_inner;
            scale = side.block_scales[block];
            zero_point = side.block_zero_points ? side.block_zero_points[block] : 0;
        } else if (side.scales != nullptr) {
            const std::int64_t c = channel + std::int64_t(i) * channel_step;
            scale = side.scales[c];
            zero_point = side.zero_points ? side.zero_points[c] : 0;
        }
        if (mx_element) {
            out[i] = T(scale * stored_mx_value(side, e)); // validate_view: MX elements have no zero point
            continue;
        }
        // q - zero_point exact in double; one rounding to float, as everywhere.
        out[i] = T(scale * float(double(stored_integer(side, e)) - double(zero_point)));
    }
}

// Converts n elements starting at element `offset`, `stride` apart; channel is
// the channel index of the first element, advancing by channel_step per element.
template <class T>
void convert_run(const plan_side& side, std::int64_t offset, std::int64_t stride, std::size_t n,
                 std::int64_t channel, std::int64_t channel_step, T* out,
                 widen_f32_function* widen_f32 = nullptr) noexcept {
    if (is_packed(side.type) || side.block_scales != nullptr || (side.quantized && is_mx_element(side.type)))
        return convert_coded_run(side, offset, stride, n, channel, channel_step, out);
    if constexpr (std::is_same_v<T, float>) {
        if (widen_f32 != nullptr && stride == 1 && side.scales == nullptr && widens_to_f32(side.type)) {
            widen_f32(side.base + offset * std::int64_t(size_of(side.type)), side.type, n, side.quantized, side.scale,
                      side.zero_point, out);
            return;
        }
    }
    switch (side.type) {
    case dtype::float32: return convert_run_typed<float>(side, offset, stride, n, channel, channel_step, out);
    case dtype::float64: return convert_run_typed<double>(side, offset, stride, n, channel, channel_step, out);
    case dtype::float16: return convert_run_typed<float16>(side, offset, stride, n, channel, channel_step, out);
    case dtype::bfloat16: return convert_run_typed<bfloat16>(side, offset, stride, n, channel, channel_step, out);
    case dtype::int8: return convert_run_typed<std::int8_t>(side, offset, stride, n, channel, channel_step, out);
    case dtype::uint8: return convert_run_typed<std::uint8_t>(side, offset, stride, n, channel, channel_step, out);
    case dtype::int16: return convert_run_typed<std::int16_t>(side, offset, stride, n, channel, channel_step, out);
    case dtype::uint16: return convert_run_typed<std::uint16_t>(side, offset, stride, n, channel, channel_step, out);
    case dtype::int32: return convert_run_typed<std::int32_t>(side, offset, stride, n, channel, channel_step, out);
    case dtype::boolean: return convert_run_typed<bool>(side, offset, stride, n, channel, channel_step, out);
    case dtype::float8_e4m3fn: return convert_run_typed<float8_e4m3fn>(side, offset, stride, n, channel, channel_step, out);
    case dtype::float8_e5m2: return convert_run_typed<float8_e5m2>(side, offset, stride, n, channel, channel_step, out);
    case dtype::float8_e8m0fnu: return convert_run_typed<float8_e8m0fnu>(side, offset, stride, n, channel, channel_step, out);
    case dtype::float6_e2m3fn: return convert_run_typed<float6_e2m3fn>(side, offset, stride, n, channel, channel_step, out);
    case dtype::float6_e3m2fn: return convert_run_typed<float6_e3m2fn>(side, offset, stride, n, channel, channel_step, out);
    case dtype::int4:
    case dtype::uint4:
    case dtype::float4_e2m1fn: break; // convert_coded_run above
    }
    NUMGAP_ASSERT(false && "validate_pair rejects unknown dtypes");
}

template <class T>
constexpr bool is_direct(const plan_side& side, const pair_plan& plan) noexcept {
    return !side.quantized && side.type == dtype_of<T>::value && plan.shape[std::size_t(plan.rank - 1)] > 0 &&
           side.strides[std::size_t(plan.rank - 1)] == 1;
}
// Fills `out` with n elements of `side` starting at flat position `position`,
// crossing rows of the innermost dimension as needed.
template <class T>
void gather(const pair_plan& plan, const plan_side& side, std::int64_t position, std::size_t n,
            T* out) noexcept {
    const int last = plan.rank - 1;
    const std::int64_t inner = plan.shape[std::size_t(last)];
    while (n > 0) {
        const std::int64_t offset_in_row = position % inner;
        const std::size_t length = std::size_t(std::min<std::int64_t>(std::int64_t(n), inner - offset_in_row));
        const row_start start = locate_row(plan, side, position / inner);
        const std::int64_t element = start.element + offset_in_row * side.strides[std::size_t(last)];
        std::int64_t channel = start.channel;
        std::int64_t channel_step = 0;
        if (side.channel_dim == last) {
            channel = offset_in_row;
            channel_step = 1;
        }
        convert_run(side, element, side.strides[std::size_t(last)], length, channel, channel_step, out,
                    plan.widen_f32);
        out += length;
        n -= length;
        position += std::int64_t(length);
    }
}

template <class T>
const T* direct_pointer(const pair_plan& plan, const plan_side& side, std::int64_t position) noexcept {
    const int last = plan.rank - 1;
    const std::int64_t inner = plan.shape[std::size_t(last)];
    return reinterpret_cast<const T*>(side.base) + locate_row(plan, side, position / inner).element + position % inner;
}


} // namespace numgap::kernels::detail
