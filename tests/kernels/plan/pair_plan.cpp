// Pins the iteration engine (numgap/kernels/plan/pair_plan.hpp): coalescing, zero-copy
// blocks for contiguous float32, block sizes, and exact coverage of ranges.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/kernels/dispatch/dispatch.hpp>
#include <numgap/kernels/plan/for_each_block.hpp>
#include <numgap/kernels/plan/pair_plan.hpp>
#include <numgap/kernels/plan/validate_pair.hpp>

TEST_SUITE("kernels") {
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
    for (const auto& range : {std::pair<std::int64_t, std::int64_t>{0, n * c * hw},
                              {17, 9000},
                              {6999, 7001},
                              {6300, 18900},
                              {2048, 4096},
                              {450, 6213},
                              {6390, 12600}}) {
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
    // column-contiguous side (numgap/kernels/source/transpose_tile.hpp); channel counts
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

namespace {
// Converts a whole view through a plan (paired with an all-zero view of the
// same shape, float32 or, for bool, bool) and returns its float32 block values
// in order.
std::vector<float> dequantized(const numgap::tensor_view& view, bool use_widen) {
    std::vector<float> zeros(std::size_t(view.size()), 0.0f);
    const auto other_type = view.type() == numgap::dtype::boolean ? numgap::dtype::boolean : numgap::dtype::float32;
    const numgap::tensor_view other(zeros.data(), other_type, view.shape());
    numgap::validate_pair(other, view);
    auto plan = numgap::kernels::make_pair_plan(other, view);
    if (use_widen) plan.widen_f32 = numgap::kernels::active_kernels().widen_f32;
    std::vector<float> out;
    numgap::kernels::for_each_block<float>(plan, 0, plan.count, [&](std::span<const float>, std::span<const float> b) {
        out.insert(out.end(), b.begin(), b.end());
    });
    return out;
}
} // namespace

TEST_CASE("dequantization forms q - zero_point exactly even where int32 would overflow (extreme zero points)") {
    // int32 q and int32 zero points differ by up to 2^32 - 1; the expected
    // values come from int64 arithmetic, rounded once to float32.
    const std::int32_t lowest = std::numeric_limits<std::int32_t>::min(), highest = std::numeric_limits<std::int32_t>::max();
    for (const bool use_widen : {false, true}) {
        CAPTURE(use_widen);
        SUBCASE("int32 data, per-tensor, contiguous and strided") {
            const std::vector<std::int32_t> q = {highest, highest - 1, 0, 1, lowest, lowest + 1, 12345};
            for (const std::int32_t zero_point : {lowest, highest}) {
                CAPTURE(zero_point);
                numgap::tensor_view t{std::span<const std::int32_t>(q)};
                t.with_quantization(numgap::quantization::per_tensor(1.0f, zero_point));
                const auto got = dequantized(t, use_widen);
                REQUIRE(got.size() == q.size());
                for (std::size_t i = 0; i < q.size(); ++i)
                    CHECK(got[i] == float(std::int64_t(q[i]) - std::int64_t(zero_point)));
                // Every other element: the strided gather loop.
                const std::int64_t shape[] = {4}, strides[] = {2};
                numgap::tensor_view s(q.data(), std::span<const std::int64_t>(shape), std::span<const std::int64_t>(strides));
                s.with_quantization(numgap::quantization::per_tensor(0.5f, zero_point));
                const auto strided = dequantized(s, use_widen);
                REQUIRE(strided.size() == 4);
                for (std::size_t i = 0; i < 4; ++i)
                    CHECK(strided[i] == 0.5f * float(std::int64_t(q[2 * i]) - std::int64_t(zero_point)));
            }
        }
        SUBCASE("uint16 / int16 / uint8 data with zero point -2^31 (widen_f32 and portable paths)") {
            std::vector<std::uint16_t> q16(1000);
            for (std::size_t i = 0; i < q16.size(); ++i) q16[i] = std::uint16_t(65535 - 67 * i);
            numgap::tensor_view t{std::span<const std::uint16_t>(q16)};
            t.with_quantization(numgap::quantization::per_tensor(1.0f, lowest));
            const auto got = dequantized(t, use_widen);
            REQUIRE(got.size() == q16.size());
            for (std::size_t i = 0; i < q16.size(); ++i)
                CHECK(got[i] == float(std::int64_t(q16[i]) - std::int64_t(lowest)));
            const std::vector<std::int16_t> s16 = {-32768, -1, 0, 32767};
            numgap::tensor_view s{std::span<const std::int16_t>(s16)};
            s.with_quantization(numgap::quantization::per_tensor(2.0f, highest));
            const auto got_signed = dequantized(s, use_widen);
            for (std::size_t i = 0; i < s16.size(); ++i)
                CHECK(got_signed[i] == 2.0f * float(std::int64_t(s16[i]) - std::int64_t(highest)));
            const std::vector<std::uint8_t> q8 = {0, 1, 255};
            numgap::tensor_view b{std::span<const std::uint8_t>(q8)};
            b.with_quantization(numgap::quantization::per_tensor(1.0f, lowest));
            const auto got8 = dequantized(b, use_widen);
            for (std::size_t i = 0; i < q8.size(); ++i)
                CHECK(got8[i] == float(std::int64_t(q8[i]) - std::int64_t(lowest)));
        }
        SUBCASE("int32 data, per-channel zero points at both extremes") {
            const std::vector<std::int32_t> q = {highest, lowest, highest, lowest};
            const float scales[] = {1.0f, 1.0f};
            const std::int32_t zero_points[] = {lowest, highest};
            const std::int64_t shape[] = {2, 2};
            numgap::tensor_view t(q.data(), std::span<const std::int64_t>(shape));
            t.with_quantization(numgap::quantization::along(1, scales, zero_points));
            const auto got = dequantized(t, use_widen);
            REQUIRE(got.size() == 4);
            CHECK(got[0] == float(std::int64_t(highest) - lowest));
            CHECK(got[1] == float(std::int64_t(lowest) - highest));
            CHECK(got[2] == float(std::int64_t(highest) - lowest));
            CHECK(got[3] == float(std::int64_t(lowest) - highest));
        }
    }
}

TEST_CASE("bool bytes other than 0 and 1 read as true, contiguous and strided") {
    // numpy and C buffers may hold any nonzero byte for true; reading it
    // through a bool would be undefined behaviour.
    const std::vector<std::uint8_t> bytes = {0, 1, 2, 255, 0, 128, 7};
    const numgap::tensor_view t(bytes.data(), numgap::dtype::boolean, {std::int64_t(bytes.size())});
    const auto got = dequantized(t, false);
    REQUIRE(got.size() == bytes.size());
    for (std::size_t i = 0; i < bytes.size(); ++i) CHECK(got[i] == (bytes[i] != 0 ? 1.0f : 0.0f));
    const std::int64_t shape[] = {3}, strides[] = {2};
    const numgap::tensor_view s(bytes.data(), numgap::dtype::boolean, std::span<const std::int64_t>(shape),
                                std::span<const std::int64_t>(strides));
    const auto strided = dequantized(s, false);
    REQUIRE(strided.size() == 3);
    CHECK(strided[0] == 0.0f);
    CHECK(strided[1] == 1.0f); // byte 2
    CHECK(strided[2] == 0.0f);
}
} // TEST_SUITE("kernels")

TEST_SUITE("kernels") {
TEST_CASE("row_cursor gives locate_row's row starts for consecutive rows from any row, wrapping after the last") {
    // Plans of every rank with uneven extents and unrelated strides on the
    // two sides (as a shard's slice of a larger reference has).
    for (int rank = 1; rank <= numgap::max_rank; ++rank) {
        CAPTURE(rank);
        numgap::kernels::pair_plan plan;
        plan.rank = rank;
        std::int64_t rows = 1;
        for (int d = 0; d < rank; ++d) {
            const auto u = std::size_t(d);
            plan.shape[u] = 1 + (d * 7 + 2) % 4; // 3, 2, 1, 4, 3, ...
            plan.reference.strides[u] = 1000 * (rank - d) + 3;
            plan.target.strides[u] = 17 * (d + 1);
            if (d < rank - 1) rows *= plan.shape[u];
        }
        for (std::int64_t start = 0; start < rows; start += std::max<std::int64_t>(1, rows / 5)) {
            numgap::kernels::detail::row_cursor cursor(plan, start);
            for (std::int64_t row = start; row < start + rows + 3; ++row, cursor.advance()) {
                CAPTURE(row);
                CHECK(cursor.reference_element() ==
                      numgap::kernels::detail::locate_row(plan, plan.reference, row % rows).element);
                CHECK(cursor.target_element() ==
                      numgap::kernels::detail::locate_row(plan, plan.target, row % rows).element);
            }
        }
    }
}
} // TEST_SUITE("kernels")
