// Pins the iteration engine (kernels/pair_plan.hpp): coalescing, zero-copy
// blocks for contiguous float32, block sizes, and exact coverage of ranges.
#include <cstdint>
#include <numeric>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/kernels/dispatch.hpp>
#include <numgap/kernels/pair_plan.hpp>

TEST_CASE("contiguous pairs coalesce to one flat dimension and are handed over zero-copy") {
    std::vector<float> r(3 * 4 * 1000), t(r.size());
    std::iota(r.begin(), r.end(), 0.0f);
    const numgap::tensor_view rv(r.data(), {3, 1, 4, 1000}), tv(t.data(), {3, 1, 4, 1000});
    const auto plan = numgap::kernels::make_pair_plan(rv, tv);
    CHECK(plan.rank == 1);
    CHECK(plan.shape[0] == 12000);
    std::int64_t covered = 0;
    numgap::kernels::for_each_block<float>(plan, 0, plan.count, [&](std::span<const float> a, std::span<const float> b) {
        CHECK(a.data() == r.data() + covered); // zero copy
        CHECK(b.data() == t.data() + covered);
        CHECK(a.size() <= numgap::kernels::flush_interval);
        covered += std::int64_t(a.size());
    });
    CHECK(covered == 12000);
}

TEST_CASE("any sub-range is covered exactly once with matching pairs, for a permuted (NHWC-like) target") {
    // Transposed layouts are walked in tiles, so only pairing and exact
    // coverage are guaranteed, not the order of positions.
    const std::int64_t n = 3, c = 70, hw = 90;
    std::vector<float> r(std::size_t(n * c * hw)), t(r.size());
    std::iota(r.begin(), r.end(), 0.0f);
    for (std::int64_t in = 0; in < n; ++in)
        for (std::int64_t ic = 0; ic < c; ++ic)
            for (std::int64_t is = 0; is < hw; ++is)
                t[std::size_t((in * hw + is) * c + ic)] = r[std::size_t((in * c + ic) * hw + is)];
    const numgap::tensor_view rv(r.data(), {n, c, hw});
    numgap::tensor_view tv(t.data(), {n, hw, c});
    tv.with_axis_order({0, 2, 1});
    const auto plan = numgap::kernels::make_pair_plan(rv, tv);
    CHECK(plan.rank == 3);
    for (const auto& range : {std::pair<std::int64_t, std::int64_t>{0, n * c * hw}, {17, 9000}, {6999, 7001},
                              {6300, 18900}, {2048, 4096}}) {
        // Plain variables: clang 14 cannot capture structured bindings.
        const std::int64_t begin = range.first, end = range.second;
        CAPTURE(begin);
        CAPTURE(end);
        std::vector<int> seen(r.size(), 0);
        bool paired = true;
        numgap::kernels::for_each_block<float>(plan, begin, end, [&](std::span<const float> a, std::span<const float> b) {
            CHECK(a.size() <= numgap::kernels::flush_interval);
            for (std::size_t i = 0; i < a.size(); ++i) {
                paired = paired && a[i] == b[i];
                ++seen[std::size_t(a[i])];
            }
        });
        CHECK(paired);
        bool exact = true;
        for (std::int64_t p = 0; p < std::int64_t(seen.size()); ++p) exact = exact && seen[std::size_t(p)] == (p >= begin && p < end);
        CHECK(exact);
    }
}

TEST_CASE("a size-1 per-channel axis folds into per-tensor quantization") {
    const std::vector<std::uint8_t> q = {1, 2, 3};
    const float scale[] = {0.5f};
    const std::int32_t zero_point[] = {1};
    numgap::tensor_view tv(q.data(), {1, 3});
    tv.with_quantization(numgap::quantization::along(0, scale, zero_point));
    const std::vector<float> r(3);
    const auto plan = numgap::kernels::make_pair_plan(numgap::tensor_view(r.data(), {1, 3}), tv);
    CHECK(plan.target.scales == nullptr);
    std::vector<float> seen;
    numgap::kernels::for_each_block<float>(plan, 0, 3, [&](std::span<const float>, std::span<const float> b) {
        seen.assign(b.begin(), b.end());
    });
    CHECK(seen == std::vector<float>{0.0f, 0.5f, 1.0f});
}

TEST_CASE("transposed float32 tiles built by every available transpose pair each position exactly once") {
    // The tile path copies rows of the row-contiguous side and transposes the
    // column-contiguous side (kernels/transpose_tile.hpp); channel counts
    // below, at and above the 4/8/16 block widths and the 64-row group limit
    // exercise full blocks, ragged edges and partial groups, with either side
    // being the transposed one.
    for (const auto& table : numgap::kernels::available_kernels()) {
        const std::string_view arch = table.arch_name;
        CAPTURE(arch);
        for (const std::int64_t c : {std::int64_t(3), std::int64_t(16), std::int64_t(64), std::int64_t(70), std::int64_t(130)}) {
            for (const bool target_transposed : {true, false}) {
                CAPTURE(c);
                CAPTURE(target_transposed);
                const std::int64_t n = 2, hw = 157;
                std::vector<float> row_major(std::size_t(n * c * hw)), channels_last(row_major.size());
                std::iota(row_major.begin(), row_major.end(), 0.0f);
                for (std::int64_t in = 0; in < n; ++in)
                    for (std::int64_t ic = 0; ic < c; ++ic)
                        for (std::int64_t is = 0; is < hw; ++is)
                            channels_last[std::size_t((in * hw + is) * c + ic)] = row_major[std::size_t((in * c + ic) * hw + is)];
                numgap::tensor_view plain(row_major.data(), {n, c, hw});
                numgap::tensor_view permuted(channels_last.data(), {n, hw, c});
                permuted.with_axis_order({0, 2, 1});
                auto plan = target_transposed ? numgap::kernels::make_pair_plan(plain, permuted)
                                              : numgap::kernels::make_pair_plan(permuted, plain);
                plan.transpose_f32 = table.transpose_f32;
                for (const auto& range : {std::pair<std::int64_t, std::int64_t>{0, n * c * hw}, {5, n * c * hw - 7}}) {
                    const std::int64_t begin = range.first, end = range.second;
                    CAPTURE(begin);
                    std::vector<int> seen(row_major.size(), 0);
                    bool paired = true, in_range = true;
                    numgap::kernels::for_each_block<float>(plan, begin, end, [&](std::span<const float> a, std::span<const float> b) {
                        CHECK(a.size() <= numgap::kernels::flush_interval);
                        for (std::size_t i = 0; i < a.size(); ++i) {
                            paired = paired && a[i] == b[i];
                            const auto p = std::int64_t(a[i]);
                            in_range = in_range && p >= 0 && p < std::int64_t(seen.size());
                            if (in_range) ++seen[std::size_t(p)];
                        }
                    });
                    CHECK(paired);
                    CHECK(in_range);
                    bool exact = true;
                    for (std::int64_t p = 0; p < std::int64_t(seen.size()); ++p)
                        exact = exact && seen[std::size_t(p)] == (p >= begin && p < end);
                    CHECK(exact);
                }
            }
        }
    }
}
