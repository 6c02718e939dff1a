#pragma once
// The function types of the per-architecture entry points a kernel_table
// holds (table/kernel_table.hpp), named once. The plan layer stores two of
// them (widen_f32, transpose_f32) without knowing about tables, so they live
// below both. Argument meanings are documented at kernel_table.
// Complexity: none (types only). Throws: nothing.
#include <cstddef>
#include <cstdint>

#include <numgap/core/dtype.hpp>

namespace numgap::kernels {

struct kernel_options;
struct pair_moments;
struct stored_run;

template <class T>
using block_function = void(const T* reference, const T* target, std::size_t n, const kernel_options& options,
                            pair_moments& moments) noexcept;
using run_f32_function = void(const stored_run& reference, const stored_run& target, std::size_t n,
                              const kernel_options& options, pair_moments& moments) noexcept;
using runs_f32_function = void(const float* const* references, const float* const* targets, const std::size_t* lengths,
                               std::size_t count, const kernel_options& options, pair_moments& moments) noexcept;
using widen_f32_function = void(const void* source, dtype type, std::size_t n, bool quantized, float scale,
                                std::int32_t zero_point, float* out) noexcept;
using transpose_f32_function = void(const float* in, std::int64_t in_stride, std::size_t rows, std::size_t cols,
                                    float* out, std::int64_t out_stride) noexcept;
// One side of a band of a transposed pair (kernel_table::band_f32): element
// (row c, column j) at data[c * row_stride + j * column_stride]; the row-major
// side has column_stride 1, the column-major side row_stride 1.
// prefetch_offset: where the caller reads a few pieces later, as elements
// from data (the kernel prefetches there, as it reads here), or 0: none.
struct band_side {
    const float* data;
    std::int64_t row_stride, column_stride;
    std::int64_t prefetch_offset;
};
using band_f32_function = void(const band_side& reference, const band_side& target, std::size_t columns,
                               const kernel_options& options, pair_moments& moments) noexcept;
using read_two_streams_function = std::uint64_t(const void* first, std::size_t first_bytes, const void* second,
                                                std::size_t second_bytes, bool prefetch) noexcept;

} // namespace numgap::kernels
