#pragma once
// accumulate_bands: the fused pass over a transposed float32 pair (NHWC
// against NCHW, a matrix against its transpose) read straight from memory
// in bands (kernel_table::band_f32, source/band_source.hpp). The pair's last
// two dimensions are rows x columns (channels x pixels for NHWC); one side
// stores each row contiguously, the other each column. The rows of one
// outer index (one image) are cut into bands of band_rows rows (the vector
// width), the columns into blocks of band_piece_elements / band_rows; a
// band over a block (a piece) is walked column by column, one vector a
// column, four columns a step (sixteen with the square kernel, below).
// Walk order: positions [begin, end) count in this order, not in reference
// order. Outer block by outer block (rows x columns positions each, where
// reference order puts them too); in one, column block by column block
// (rows x block-width positions each); in one, its bands one after the
// other (band b at [b, b + 1) * band_rows * width, position
// j * band_rows + c being row c of the block's column j), then the rows
// left over (fewer than band_rows) likewise column by column, through
// for_each_block's tiles (fill_tile_f32). So ranges that partition
// [0, count) cover every element once, as threads need (evaluate.hpp),
// though a range is not a set of reference positions. A range that starts
// or ends inside a piece reads the part of a column it cuts element by
// element.
// Which band kernel: with at most square_most_bands bands an outer block,
// the square one (kernel_table::band_square_f32, AVX-512: sixteen columns
// a step, each row's line read whole), else band_f32 (four columns a step).
// Why blocks: all rows of a column block are read before the next block,
// so the column-major side's lines (a column's rows, contiguous) are
// fetched once and used by every band while in cache, and the row-major
// side's rows are read in bursts of a block's width. Each piece prefetches
// the piece most_pieces_ahead bands ahead (band_side::prefetch_offset),
// into the next outer block where this one ends, for pairs larger than the
// caches (band_prefetch_from).
// When (walks_in_bands): both sides plain float32, one row-major (stride 1
// along the last dimension), the other column-major (stride 1 along the
// second-to-last only), at least band_rows rows per outer index and
// shortest_band_row columns (shorter rows make short pieces, whose kernel
// calls cost more than the tiles' transposes), and the
// options ask for no tier that re-reads a chunk column by column
// (side_statistics, side_min_max, closeness: such re-reads would gather
// every column element by element, so those keep the tile walk); the
// default NaN / +-Inf counts re-read only a chunk holding one.
// Precondition: validate_pair() accepted the views behind the plan and
// walks_in_bands(plan, table, options). Complexity: O(end - begin) plus
// O(rank) per piece; no allocation. Throws: nothing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include <numgap/kernels/constants.hpp>
#include <numgap/kernels/entry_points.hpp>
#include <numgap/kernels/fused/kernel_options.hpp>
#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/kernels/plan/for_each_block.hpp>
#include <numgap/kernels/plan/pair_plan.hpp>
#include <numgap/kernels/table/kernel_table.hpp>

namespace numgap::kernels {

// Columns (pixels, for NHWC) below which the tiles stay faster: at 16
// columns the band walk took 1.2-1.7x the tiles' time, at 64 0.9-1.1x, at
// 128 and more 0.6-0.7x (16 to 2048 rows, in cache, AMD Zen 5).
inline constexpr std::int64_t shortest_band_row = 128;

// Most bands an outer block may have for the square band kernel. Against
// the four-column one (AVX-512, Zen 5, 0.1-67 Mi elements, band_rows 16),
// square: 16 to 64 rows (one to four bands) 0-32% faster (the four-column
// kernel reads each row's line on four steps; in cache, rows a multiple of
// 4 KiB apart then compete for one L1 set; 16 rows of 4096000 pixels took
// 0.40 ns an element, 0.29 square, of 2^22 pixels 0.28 either way); 128 to
// 1024 rows 0-8% faster over short planes (196 to 3136 pixels) but 12-17%
// slower over planes of 4096 pixels and more (a step's sixteen lines of
// each side in flight at once).
inline constexpr std::int64_t square_most_bands = 4;

inline bool walks_in_bands(const pair_plan& plan, const kernel_table& table, const kernel_options& options) noexcept {
    if (table.band_f32 == nullptr || table.band_rows == 0 || plan.rank < 2) return false;
    if ((options.features & ~kernel_feature::side_counts) != 0) return false;
    if (!detail::tile_by_transpose(plan)) return false; // plain float32 on both sides
    const std::size_t last = std::size_t(plan.rank - 1);
    const auto row_major = [&](const plan_side& side) { return side.strides[last] == 1; };
    const auto column_major = [&](const plan_side& side) {
        return side.strides[last - 1] == 1 && side.strides[last] != 1;
    };
    return plan.shape[last - 1] >= std::int64_t(table.band_rows) && plan.shape[last] >= shortest_band_row &&
           ((row_major(plan.reference) && column_major(plan.target)) ||
            (column_major(plan.reference) && row_major(plan.target)));
}

namespace detail {

// Elements of a band piece: 512 columns of 16 rows with AVX-512 (four kernel
// chunks). Measured on Zen 5 against 128-2048 columns at 2^26 elements:
// within noise for 16 rows, 5-15% faster than 128 for 64 to 1024 rows.
inline constexpr std::int64_t band_piece_elements = 4 * std::int64_t(flush_interval);
// How many bands ahead a piece prefetches (fewer when a block has fewer
// bands: then the same band of the next block). 4 ran 10-20% faster than 1
// for 64 to 1024 rows, 8 and 16 no better; for 16 rows (one band) the next
// block was best (Zen 5, 2^26 elements).
inline constexpr std::int64_t most_pieces_ahead = 4;

// One outer block's walk (see the top of this file), for one range of it.
class band_walk {
public:
    band_walk(const pair_plan& plan, const kernel_table& table, const kernel_options& options,
              pair_moments& moments) noexcept
        : plan_(plan), table_(table), options_(options), moments_(moments), last_(std::size_t(plan.rank - 1)),
          columns_(plan.shape[last_]), rows_per_outer_(plan.shape[last_ - 1]), rows_(std::int64_t(table.band_rows)),
          bands_(rows_per_outer_ / rows_), block_columns_(band_piece_elements / rows_),
          band_kernel_(table.band_square_f32 != nullptr && bands_ <= square_most_bands ? table.band_square_f32
                                                                                       : table.band_f32),
          outer_blocks_(plan.count / (rows_per_outer_ * columns_)), prefetching_(plan.count > band_prefetch_from) {}

    std::int64_t outer_size() const noexcept { return rows_per_outer_ * columns_; }
    std::int64_t block_columns() const noexcept { return block_columns_; }

    // Walk positions [from, to) of the column block starting at `column`
    // of outer block `outer`, relative to the block's first position.
    void block(std::int64_t outer, std::int64_t column, std::int64_t from, std::int64_t to) const noexcept {
        const std::int64_t width = std::min(block_columns_, columns_ - column);
        const std::int64_t band_size = rows_ * width, banded = bands_ * band_size;
        for (std::int64_t band = from / band_size; band < bands_ && band * band_size < to; ++band) {
            const std::int64_t first = band * band_size;
            band_piece(outer, band, column, width, std::max(from, first) - first,
                       std::min(to, first + band_size) - first);
        }
        if (to > banded) rest(outer, column, width, std::max(from, banded) - banded, to - banded);
    }

private:
    band_side side_at(const plan_side& side, std::int64_t row, std::int64_t column) const noexcept {
        const float* data = reinterpret_cast<const float*>(side.base) + locate_row(plan_, side, row).element +
                            column * side.strides[last_];
        return {data, side.strides[last_ - 1], side.strides[last_], 0};
    }
    // Where the walk reads the piece most_pieces_ahead bands after this one
    // (counting on into the next column block and outer block), for
    // band_side::prefetch_offset. Stopping at the end of an outer block left
    // the first pieces of the next unprefetched: 256 images of 64 channels x
    // 784 pixels took 0.62 ns an element with the square kernel that way,
    // 0.39 prefetching on into the next image (Zen 5).
    void aim_prefetch(band_side& reference, band_side& target, std::int64_t outer, std::int64_t band,
                      std::int64_t column) const noexcept {
        if (!prefetching_) return;
        const std::int64_t pieces = (columns_ + block_columns_ - 1) / block_columns_ * bands_; // per outer block
        std::int64_t piece = column / block_columns_ * bands_ + band + std::min(most_pieces_ahead, bands_);
        outer += piece / pieces;
        piece %= pieces;
        if (outer >= outer_blocks_) return;
        column = piece / bands_ * block_columns_;
        const std::int64_t row = outer * rows_per_outer_ + piece % bands_ * rows_;
        reference.prefetch_offset = side_at(plan_.reference, row, column).data - reference.data;
        target.prefetch_offset = side_at(plan_.target, row, column).data - target.data;
    }
    // Positions [from, to) of band `band` over `width` columns from `column`:
    // element (c, j) of the band at j * rows_ + c.
    void band_piece(std::int64_t outer, std::int64_t band, std::int64_t column, std::int64_t width, std::int64_t from,
                    std::int64_t to) const noexcept {
        const std::int64_t row = outer * rows_per_outer_ + band * rows_;
        band_side reference = side_at(plan_.reference, row, column), target = side_at(plan_.target, row, column);
        const std::int64_t first_column = (from + rows_ - 1) / rows_, end_column = to / rows_;
        if (first_column >= end_column) {
            few(reference, target, rows_, from, std::min(to, first_column * rows_));
            few(reference, target, rows_, std::max(from, first_column * rows_), to);
            return;
        }
        few(reference, target, rows_, from, first_column * rows_);
        if (first_column == 0 && end_column == width) aim_prefetch(reference, target, outer, band, column);
        const auto shifted = [&](band_side side) {
            side.data += first_column * side.column_stride;
            return side;
        };
        band_kernel_(shifted(reference), shifted(target), std::size_t(end_column - first_column), options_, moments_);
        few(reference, target, rows_, end_column * rows_, to);
    }
    // The rows after the last band (fewer than rows_), positions [from, to)
    // of their `width` columns from `column`, column-major like a band: a
    // tile when whole (for_each_block.hpp's fill_tile_f32), else one by one.
    void rest(std::int64_t outer, std::int64_t column, std::int64_t width, std::int64_t from,
              std::int64_t to) const noexcept {
        const std::int64_t left = rows_per_outer_ - bands_ * rows_, row = outer * rows_per_outer_ + bands_ * rows_;
        if (from == 0 && to == left * width) {
            alignas(64) float reference_tile[flush_interval], target_tile[flush_interval];
            const std::int64_t tile_columns = std::int64_t(flush_interval) / left;
            for (std::int64_t j = 0; j < width; j += tile_columns) {
                const std::int64_t at = row * columns_ + column + j, count = std::min(tile_columns, width - j);
                const float* reference =
                    fill_tile_f32(plan_, plan_.reference, at, std::size_t(left), std::size_t(count), reference_tile);
                const float* target =
                    fill_tile_f32(plan_, plan_.target, at, std::size_t(left), std::size_t(count), target_tile);
                table_.block_f32(reference, target, std::size_t(left * count), options_, moments_);
            }
            return;
        }
        few(side_at(plan_.reference, row, column), side_at(plan_.target, row, column), left, from, to);
    }
    // Positions [from, to) of `rows`-row column-major order, element by
    // element, in kernel calls of at most flush_interval.
    void few(const band_side& reference, const band_side& target, std::int64_t rows, std::int64_t from,
             std::int64_t to) const noexcept {
        alignas(64) float reference_values[flush_interval], target_values[flush_interval];
        while (from < to) {
            const std::int64_t count = std::min(to - from, std::int64_t(flush_interval));
            for (std::int64_t k = 0; k < count; ++k) {
                const std::int64_t p = from + k;
                reference_values[k] =
                    reference.data[p % rows * reference.row_stride + p / rows * reference.column_stride];
                target_values[k] = target.data[p % rows * target.row_stride + p / rows * target.column_stride];
            }
            table_.block_f32(reference_values, target_values, std::size_t(count), options_, moments_);
            from += count;
        }
    }

    const pair_plan& plan_;
    const kernel_table& table_;
    const kernel_options& options_;
    pair_moments& moments_;
    std::size_t last_;
    std::int64_t columns_, rows_per_outer_, rows_, bands_, block_columns_;
    band_f32_function* band_kernel_;
    std::int64_t outer_blocks_;
    bool prefetching_;
};

} // namespace detail

// Precondition: walks_in_bands(plan, table, options).
inline void accumulate_bands(const pair_plan& plan, std::int64_t begin, std::int64_t end, const kernel_table& table,
                             const kernel_options& options, pair_moments& moments) noexcept {
    const detail::band_walk walk(plan, table, options, moments);
    const std::int64_t outer_size = walk.outer_size();
    const std::int64_t block_columns = walk.block_columns(),
                       block_size = block_columns * plan.shape[std::size_t(plan.rank - 2)];
    std::int64_t position = begin;
    while (position < end) {
        const std::int64_t outer = position / outer_size, within = position % outer_size;
        const std::int64_t block = within / block_size;
        const std::int64_t block_start = outer * outer_size + block * block_size;
        const std::int64_t stop = std::min({end, block_start + block_size, (outer + 1) * outer_size});
        walk.block(outer, block * block_columns, position - block_start, stop - block_start);
        position = stop;
    }
}

} // namespace numgap::kernels
