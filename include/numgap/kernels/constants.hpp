#pragma once
// The numbers the kernel layers agree on, in one place, so no file includes a
// higher layer for a constant (kernels/README.md walks the layers).
// Complexity: none (constants only). Throws: nothing.
#include <cstddef>
#include <cstdint>

namespace numgap::kernels {

// Elements per float partial sum in the fused kernel (fused/fused_kernel.hpp
// states the error bound it gives), and the most elements a block walk hands
// over at once (plan/for_each_block.hpp): two blocks of this many floats stay
// in L1.
inline constexpr std::size_t flush_interval = 2048;

// The shortest row worth handing to a kernel on its own: rows shorter than
// this would cost one kernel call per few elements, so both walks gather
// across rows instead (plan/for_each_run.hpp: runs_in_registers;
// plan/for_each_block.hpp: zero-copy blocks).
inline constexpr std::int64_t shortest_run = 256;

// Rows of a transposed layout walked together in tiles (plan/for_each_block.hpp):
// enough to fill a block with a few columns of each row, few enough that the
// rows' streams stay in the prefetchers' reach.
inline constexpr std::int64_t most_tile_rows = 64;

// How far ahead of its reads the fused kernel asks a source to prefetch, in
// elements (fused/fused_kernel.hpp says why 512); a band source, which
// prefetches a later band piece instead (table/accumulate_bands.hpp), takes
// it off again.
inline constexpr std::size_t fused_prefetch_distance = 512;

// Transposed pairs walked in bands (table/accumulate_bands.hpp) of more
// elements than this prefetch ahead (16 MiB of float32 pairs: 16 rows of
// 2^16 columns, 8 MiB, ran 1.5x slower with the prefetches, 2^18 columns,
// 32 MiB, 1.3x faster; AMD Zen 5, 32 MiB of L3).
inline constexpr std::int64_t band_prefetch_from = std::int64_t(1) << 21;

// |q - zero_point| up to this is exact in int32 and in float32, so in-register
// widening rounds exactly like every other dequantization path
// (plan/stored_run.hpp: widens_in_registers).
inline constexpr std::int64_t exact_float_integer_limit = std::int64_t(1) << 24;

} // namespace numgap::kernels
