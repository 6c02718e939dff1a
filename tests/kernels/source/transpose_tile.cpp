// Pins transpose_tile (numgap/kernels/source/transpose_tile.hpp) through kernel_table's
// transpose_f32 on every arch this CPU runs: out[j * out_stride + i] equals
// in[i * in_stride + j] bit for bit (NaN payloads included) for shapes that
// fill whole 4/8/16 blocks, leave ragged edges, or are smaller than a block,
// with padded strides on both sides, and nothing outside the tile is written.
#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/kernels/dispatch/dispatch.hpp>
#include <numgap/kernels/source/transpose_tile.hpp>

TEST_SUITE("kernels") {
TEST_CASE("transpose_f32 transposes exactly, edges included, on every available arch") {
    const float sentinel = std::bit_cast<float>(0x7fa5a5a5u); // a signalling NaN pattern nothing else uses
    for (const auto& table : numgap::kernels::available_kernels()) {
        const std::string_view arch = table.arch_name;
        CAPTURE(arch);
        for (const auto& shape : {std::pair<std::size_t, std::size_t>{16, 16}, {32, 48}, {8, 8}, {4, 4}, {17, 33},
                                  {3, 128}, {128, 3}, {1, 1}, {64, 31}, {0, 5}}) {
            const std::size_t rows = shape.first, cols = shape.second;
            CAPTURE(rows);
            CAPTURE(cols);
            const std::int64_t in_stride = std::int64_t(cols) + 5, out_stride = std::int64_t(rows) + 3;
            std::vector<float> in(rows * std::size_t(in_stride) + 1);
            for (std::size_t k = 0; k < in.size(); ++k)
                // Distinct bit patterns, some of them NaNs with payloads.
                in[k] = k % 7 == 3 ? std::bit_cast<float>(0x7f800001u + std::uint32_t(k)) : float(k) * 0.5f - 3.0f;
            std::vector<float> out(cols * std::size_t(out_stride) + 1, sentinel);
            table.transpose_f32(in.data(), in_stride, rows, cols, out.data(), out_stride);
            bool exact = true, untouched = true;
            for (std::size_t j = 0; j < cols; ++j)
                for (std::int64_t i = 0; i < out_stride; ++i) {
                    const float got = out[j * std::size_t(out_stride) + std::size_t(i)];
                    if (i < std::int64_t(rows))
                        exact = exact && std::bit_cast<std::uint32_t>(got) ==
                                             std::bit_cast<std::uint32_t>(in[std::size_t(i * in_stride) + j]);
                    else
                        untouched = untouched && std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(sentinel);
                }
            CHECK(exact);
            CHECK(untouched);
            CHECK(std::bit_cast<std::uint32_t>(out.back()) == std::bit_cast<std::uint32_t>(sentinel));
        }
    }
}
} // TEST_SUITE("kernels")
