#pragma once
// Shared checks of the block-quantized walk tests (tests/kernels/source/
// block_source.cpp, mx_block_source.cpp): a float32 reference holding exactly
// the oracle's values of the target, so any differing bit shows as a non-zero
// max |r - t|; walked on every kernel, with and without the in-register entry.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <doctest/doctest.h>

#include <numgap/kernels/dispatch/dispatch.hpp>
#include <numgap/kernels/table/accumulate_plan.hpp>

namespace numgap_test {

// Row lengths the block walks are tried at: empty, single, around the vector
// widths (8, 16) and the block size (32, 64), and rows of many blocks.
inline constexpr std::size_t block_walk_lengths[] = {0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 511, 512, 1000};

// Exact agreement of every element: zero differences, equal sums of squares.
inline void check_exact(const numgap::kernels::pair_moments& m, std::size_t n) {
    CHECK(m.count == std::int64_t(n));
    CHECK(m.max_abs_diff == 0.0);
    CHECK(m.sum_squared_diff == 0.0);
    CHECK(m.sum_squared_reference == m.sum_squared_target);
}

// The whole plan on every available kernel, in registers (when the plan
// allows) and forced onto the converting block path; two calls split at an
// odd position, so runs start mid-row and mid-byte.
inline void check_exact_on_both_paths(const numgap::kernels::pair_plan& plan, std::int64_t count) {
    for (const auto& table : numgap::kernels::available_kernels()) {
        for (const bool in_registers : {true, false}) {
            CAPTURE(std::string_view(table.arch_name));
            CAPTURE(in_registers);
            numgap::kernels::kernel_table used = table;
            if (!in_registers) used.run_f32 = nullptr;
            numgap::kernels::pair_moments moments;
            const std::int64_t split = count / 2 | 1;
            numgap::kernels::accumulate_plan(plan, 0, split, used, {}, moments);
            numgap::kernels::accumulate_plan(plan, split, count, used, {}, moments);
            check_exact(moments, std::size_t(count));
        }
    }
}

} // namespace numgap_test
