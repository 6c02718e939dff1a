#pragma once
// transpose_tile: out[j * out_stride + i] = in[i * in_stride + j] for
// i < rows, j < cols (float32). The iteration engine uses it to pair a side
// stored transposed (NHWC against NCHW) with the other side's rows without
// gathering element by element.
// Why in-register blocks: a scalar transpose moves one element per store
// (about a cycle each); 16x16 blocks on AVX-512 (64 shuffles per 256
// elements), 8x8 on AVX/AVX2 and 4x4 on SSE2 move whole vectors, so the
// transposed side costs a fraction of a cycle per element (the blocks are
// isa::transpose_block in kernels/isa/). Edges that do not fill a block, and
// architectures without a block routine (NEON, scalar), use the scalar loop.
// Copies bits exactly (NaN payloads included).
// Complexity: O(rows * cols), no allocation. Throws: nothing.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include <numgap/core/isa_namespace.hpp>
#include <numgap/kernels/isa.hpp>
#include <numgap/kernels/scalar_arch.hpp>

namespace numgap::kernels {

namespace detail {
inline namespace NUMGAP_ISA_NAMESPACE { // per instruction set: core/isa_namespace.hpp

inline void transpose_scalar(const float* in, std::int64_t in_stride, std::size_t rows, std::size_t cols, float* out,
                             std::int64_t out_stride) noexcept {
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) out[std::int64_t(j) * out_stride + std::int64_t(i)] = in[std::int64_t(i) * in_stride + std::int64_t(j)];
}

} // namespace NUMGAP_ISA_NAMESPACE
} // namespace detail

template <class Arch>
void transpose_tile(Arch, const float* in, std::int64_t in_stride, std::size_t rows, std::size_t cols, float* out,
                    std::int64_t out_stride) noexcept {
    constexpr std::size_t width = detail::isa::transpose_block_width(Arch{});
    std::size_t i = 0;
    if constexpr (width > 1) {
        for (; i + width <= rows; i += width) {
            const float* in_rows = in + std::int64_t(i) * in_stride;
            std::size_t j = 0;
            for (; j + width <= cols; j += width) {
                float* out_block = out + std::int64_t(j) * out_stride + std::int64_t(i);
                detail::isa::transpose_block(Arch{}, in_rows + j, in_stride, out_block, out_stride);
            }
            detail::transpose_scalar(in_rows + j, in_stride, width, cols - j, out + std::int64_t(j) * out_stride + std::int64_t(i),
                                     out_stride);
        }
    }
    detail::transpose_scalar(in + std::int64_t(i) * in_stride, in_stride, rows - i, cols, out + std::int64_t(i), out_stride);
}

} // namespace numgap::kernels
