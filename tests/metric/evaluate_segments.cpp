// Pins evaluate_segments (metric/evaluate_segments.hpp): a tensor split into
// segments along axis 0, a middle axis and the last, in 1, 2, uneven and 8
// pieces, on either side or both, gives what the unsplit comparison gives (and
// the long-double oracle's values within each metric's stated bound); user
// reductions merge; row metrics combine off the row axis and are refused on
// it; whole-tensor user metrics and layouts it cannot slice are refused.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/core/segmented_view.hpp>
#include <numgap/metric.hpp>
#include <numgap/metric/evaluate_segments.hpp>

#include "../core/caught_error.hpp"
#include "oracle_check.hpp"
#include "test_support.hpp"

using namespace numgap_test;

namespace {

template <class Action>
std::string error_of(Action&& action) {
    const auto failure = caught_error(std::forward<Action>(action));
    return failure ? failure->what() : "<no numgap::error>";
}
bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// `values` of row-major `shape` cut along `axis` into contiguous pieces of
// `lengths` (a copy per piece, as separate shard files would hold them).
template <class T>
std::vector<std::vector<T>> split(const std::vector<T>& values, const std::vector<std::int64_t>& shape, int axis,
                                  const std::vector<std::int64_t>& lengths) {
    std::int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= shape[std::size_t(d)];
    for (std::size_t d = std::size_t(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    const std::int64_t length = shape[std::size_t(axis)];
    std::vector<std::vector<T>> pieces;
    std::int64_t offset = 0;
    for (const std::int64_t piece_length : lengths) {
        std::vector<T> piece;
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t i = 0; i < piece_length * inner; ++i)
                piece.push_back(values[std::size_t((o * length + offset) * inner + i)]);
        pieces.push_back(std::move(piece));
        offset += piece_length;
    }
    return pieces;
}

// Segments over `pieces`, which must outlive them.
template <class T>
std::vector<numgap::tensor_segment> segments_of(const std::vector<std::vector<T>>& pieces,
                                                std::vector<std::int64_t> shape, int axis,
                                                const std::vector<std::int64_t>& lengths) {
    std::vector<numgap::tensor_segment> segments;
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        shape[std::size_t(axis)] = lengths[i];
        segments.push_back({numgap::tensor_view(pieces[i].data(), shape), offset});
        offset += lengths[i];
    }
    return segments;
}

numgap::metric_set sum_builtins() {
    numgap::metric_set set;
    for (const std::string_view name : numgap::builtin_metric_names())
        if (name != "kl_div" && name != "topk") set.add_builtin(name);
    return set;
}

// Sums regroup into other float32 chunks than the unsplit pass's: equal up to
// the kernel's bound; extremes and counts exactly. The metrics alone (no
// side statistics asked for):
void check_same_metrics(const numgap::evaluation& split_result, const numgap::evaluation& whole) {
    REQUIRE(split_result.metrics.size() == whole.metrics.size());
    CHECK(split_result.count == whole.count);
    for (std::size_t i = 0; i < whole.metrics.size(); ++i) {
        CAPTURE(whole.metrics[i].name);
        const double a = split_result.metrics[i].value, b = whole.metrics[i].value;
        if (whole.metrics[i].name == "max_abs" || whole.metrics[i].name == "max_rel" ||
            whole.metrics[i].name == "allclose")
            CHECK(same_value(a, b));
        else
            CHECK((same_value(a, b) || std::fabs(a - b) <= 2e-7 * std::max(std::fabs(a), std::fabs(b))));
        CHECK(split_result.metrics[i].passed == whole.metrics[i].passed);
    }
}

// The metrics and the side statistics.
void check_same(const numgap::evaluation& split_result, const numgap::evaluation& whole) {
    check_same_metrics(split_result, whole);
    CHECK(same_value(split_result.reference.min, whole.reference.min));
    CHECK(same_value(split_result.target.max, whole.target.max));
    CHECK(std::fabs(split_result.target.mean - whole.target.mean) <= 1e-7 * whole.target.std);
    CHECK(split_result.target.nan_count == whole.target.nan_count);
}

// uint8 codes, a float reference near their dequantized values, and
// `channels` per-channel scales and zero points.
struct coded_pair {
    std::vector<float> reference;
    std::vector<std::uint8_t> codes;
    std::vector<float> scales;
    std::vector<std::int32_t> zero_points;
};
coded_pair make_coded(std::size_t n, std::size_t channels) {
    coded_pair pair{std::vector<float>(n), std::vector<std::uint8_t>(n), std::vector<float>(channels),
                    std::vector<std::int32_t>(channels)};
    for (std::size_t i = 0; i < n; ++i) {
        pair.codes[i] = std::uint8_t((i * 37) % 251);
        pair.reference[i] = 0.05f * (float(pair.codes[i]) - 128.0f) + 0.001f * float(i % 7);
    }
    for (std::size_t c = 0; c < channels; ++c) {
        pair.scales[c] = 0.04f + 0.001f * float(c);
        pair.zero_points[c] = std::int32_t(120 + c % 9);
    }
    return pair;
}

const std::vector<std::int64_t> shape{24, 301, 11};

std::vector<std::vector<std::int64_t>> cuts_of(std::int64_t length) {
    std::vector<std::vector<std::int64_t>> cuts{{length}, {length / 2, length - length / 2}, {1, 5, length - 6}};
    std::vector<std::int64_t> eight(8, length / 8);
    eight.back() += length % 8;
    cuts.push_back(eight);
    return cuts;
}

} // namespace

TEST_SUITE("metric") {
TEST_CASE("evaluate_segments: a split side equals the unsplit comparison along axis 0, 1 and the last") {
    const auto pair = make_pair(std::size_t(24 * 301 * 11), 21);
    const numgap::tensor_view r(pair.reference.data(), shape), t(pair.target.data(), shape);
    numgap::metric_set all = all_builtins(), sums = sum_builtins();
    const numgap::tensor_segment whole_reference{r, 0}, whole_target{t, 0};
    const numgap::segmented_view unsplit_reference{std::span(&whole_reference, 1), 0},
        unsplit_target{std::span(&whole_target, 1), 0};
    for (int axis = 0; axis < 3; ++axis) {
        for (const std::vector<std::int64_t>& lengths : cuts_of(shape[std::size_t(axis)])) {
            CAPTURE(axis);
            CAPTURE(lengths.size());
            const bool rows_whole = axis != 2 || lengths.size() == 1;
            const numgap::metric_set& set = rows_whole ? all : sums;
            const auto whole = numgap::evaluate(r, t, set, {1, true, true});
            const auto target_pieces = split(pair.target, shape, axis, lengths);
            const auto target_segments = segments_of(target_pieces, shape, axis, lengths);
            const numgap::segmented_view split_target{target_segments, axis};
            const auto split_target_result =
                numgap::evaluate_segments(unsplit_reference, split_target, set, {1, true, true});
            check_same(split_target_result, whole);
            if (rows_whole)
                check_against_oracle(split_target_result, pair.reference, pair.target, std::size_t(shape[2]), true);

            const auto reference_pieces = split(pair.reference, shape, axis, lengths);
            const auto reference_segments = segments_of(reference_pieces, shape, axis, lengths);
            const numgap::segmented_view split_reference{reference_segments, axis};
            check_same(numgap::evaluate_segments(split_reference, unsplit_target, set, {1, true, true}), whole);

            // Both split, at different cuts: the pieces are the union of both.
            std::vector<std::int64_t> other(lengths.rbegin(), lengths.rend());
            const auto other_pieces = split(pair.target, shape, axis, other);
            const auto other_segments = segments_of(other_pieces, shape, axis, other);
            check_same(numgap::evaluate_segments(split_reference, {other_segments, axis}, set, {2, true, true}), whole);
        }
    }
}

TEST_CASE("evaluate_segments: quantized shards against a float reference, per tensor and per channel on the axis") {
    const std::vector<std::int64_t> matrix{64, 40};
    const auto [reference, codes, scales, zero_points] = make_coded(64 * 40, 40);
    const numgap::metric_set set = sum_builtins();
    const std::vector<std::int64_t> lengths{13, 27};
    const auto pieces = split(codes, matrix, 1, lengths);
    for (const bool per_channel : {false, true}) {
        CAPTURE(per_channel);
        numgap::tensor_view whole_target(codes.data(), matrix);
        const auto q = per_channel ? numgap::quantization::along(1, scales, zero_points)
                                   : numgap::quantization::per_tensor(0.05f, 128);
        whole_target.with_quantization(q);
        const numgap::tensor_view r(reference.data(), matrix);
        const auto whole = numgap::evaluate(r, whole_target, set, {1, true, true});
        auto segments = segments_of(pieces, matrix, 1, lengths);
        for (std::size_t i = 0; i < segments.size(); ++i) {
            const std::size_t begin = i == 0 ? 0 : std::size_t(lengths[0]);
            segments[i].view.with_quantization(
                per_channel ? numgap::quantization::along(1, std::span<const float>(scales).subspan(begin, std::size_t(lengths[i])),
                                                          std::span<const std::int32_t>(zero_points).subspan(begin, std::size_t(lengths[i])))
                            : q);
        }
        const numgap::tensor_segment unsplit{r, 0};
        check_same(numgap::evaluate_segments({std::span(&unsplit, 1), 0}, {segments, 1}, set, {1, true, true}), whole);
        // The unsplit side quantized per channel along the axis: its slices narrow the scales.
        const auto reference_pieces = split(reference, matrix, 1, lengths);
        const auto reference_segments = segments_of(reference_pieces, matrix, 1, lengths);
        const numgap::tensor_segment quantized_whole{whole_target, 0};
        check_same(
            numgap::evaluate_segments({reference_segments, 1}, {std::span(&quantized_whole, 1), 0}, set, {1, true, true}),
            whole);
    }
}

TEST_CASE("evaluate_segments: shards of long rows are walked together in reference order, on 1 to 4 threads") {
    // Rows of 768 and 2048 elements (read in runs, so the pieces are walked
    // row by row together) and 300000 elements in all (several workers);
    // float32 pieces of 96, 64 (shortest_batched_row: still walked together)
    // and 63 elements a row (piece by piece, in blocks).
    for (const std::vector<std::int64_t>& shape :
         {std::vector<std::int64_t>{150, 2048}, std::vector<std::int64_t>{3, 130, 768},
          std::vector<std::int64_t>{300, 512}, std::vector<std::int64_t>{2, 150, 504}}) {
        const int axis = int(shape.size()) - 1;
        const std::int64_t length = shape.back();
        std::size_t n = 1;
        for (const std::int64_t d : shape) n *= std::size_t(d);
        const auto pair = make_pair(n, 5);
        const numgap::tensor_view r(pair.reference.data(), shape), t(pair.target.data(), shape);
        const numgap::metric_set set = sum_builtins();
        const numgap::tensor_segment whole_reference{r, 0};
        for (const std::vector<std::int64_t>& lengths :
             {std::vector<std::int64_t>{length / 2, length / 2}, std::vector<std::int64_t>(8, length / 8),
              length > 512 ? std::vector<std::int64_t>{256, length - 512, 256}
                           : std::vector<std::int64_t>{length / 4, length / 2, length - length / 4 - length / 2}}) {
            const auto pieces = split(pair.target, shape, axis, lengths);
            const auto segments = segments_of(pieces, shape, axis, lengths);
            for (const std::size_t threads : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(4)}) {
                CAPTURE(shape.size());
                CAPTURE(length);
                CAPTURE(lengths.size());
                CAPTURE(threads);
                const auto whole = numgap::evaluate(r, t, set, {threads, true, true});
                const auto split_result = numgap::evaluate_segments({std::span(&whole_reference, 1), 0},
                                                                    {segments, axis}, set, {threads, true, true});
                check_same(split_result, whole);
                check_against_oracle(split_result, pair.reference, pair.target, 0, true);
                // Without side statistics the runs are batched into one
                // stream (kernels::accumulate_runs), not compared one by one.
                const auto moments_only = numgap::evaluate_segments({std::span(&whole_reference, 1), 0},
                                                                    {segments, axis}, set, {threads, false});
                check_same_metrics(moments_only, numgap::evaluate(r, t, set, {threads, false}));
            }
        }
    }
    // uint8 shards quantized per channel along the rows (an outer axis): each
    // row's run keeps its channel's scale and zero point.
    const std::vector<std::int64_t> matrix{96, 1024};
    const auto [reference, codes, scales, zero_points] = make_coded(96 * 1024, 96);
    const auto q = numgap::quantization::along(0, scales, zero_points);
    numgap::tensor_view whole_target(codes.data(), matrix);
    whole_target.with_quantization(q);
    const numgap::tensor_view r(reference.data(), matrix);
    const numgap::metric_set set = sum_builtins();
    const std::vector<std::int64_t> lengths{256, 512, 256};
    const auto pieces = split(codes, matrix, 1, lengths);
    auto segments = segments_of(pieces, matrix, 1, lengths);
    for (numgap::tensor_segment& segment : segments) segment.view.with_quantization(q);
    const numgap::tensor_segment unsplit{r, 0};
    for (const std::size_t threads : {std::size_t(1), std::size_t(2)}) {
        CAPTURE(threads);
        check_same(numgap::evaluate_segments({std::span(&unsplit, 1), 0}, {segments, 1}, set, {threads, true, true}),
                   numgap::evaluate(r, whole_target, set, {threads, true, true}));
    }
}

namespace {
struct first_target_value { // tier 1: sees the whole tensor at once
    static constexpr std::string_view name = "first_target_value";
    static constexpr numgap::direction better = numgap::direction::higher_is_better;
    static constexpr std::optional<numgap::pass_rule> default_rule = std::nullopt;
    double operator()(const numgap::tensor_view&, const numgap::tensor_view& t) const {
        return double(*static_cast<const float*>(t.data()));
    }
};
} // namespace

TEST_CASE("evaluate_segments: default options count each side's NaN and +-Inf over every piece, walked together") {
    // 2^18 elements: two threads get a range each, and their counts merge.
    const std::vector<std::int64_t> shape{256, 1024};
    auto pair = make_pair(256 * 1024, 9);
    pair.target[5] = std::numeric_limits<float>::quiet_NaN();
    pair.target[200000] = std::numeric_limits<float>::quiet_NaN();
    pair.target[65535] = std::numeric_limits<float>::infinity();
    pair.reference[1024 + 700] = -std::numeric_limits<float>::infinity();
    const numgap::tensor_view r(pair.reference.data(), shape), t(pair.target.data(), shape);
    const numgap::tensor_segment whole_reference{r, 0};
    const std::vector<std::int64_t> lengths{256, 512, 256};
    const auto pieces = split(pair.target, shape, 1, lengths);
    const auto segments = segments_of(pieces, shape, 1, lengths);
    for (const std::size_t threads : {std::size_t(1), std::size_t(2)}) {
        CAPTURE(threads);
        const numgap::evaluate_options options{threads};
        const auto split_result =
            numgap::evaluate_segments({std::span(&whole_reference, 1), 0}, {segments, 1}, sum_builtins(), options);
        CHECK(split_result.target.nan_count == 2);
        CHECK(split_result.target.positive_inf_count == 1);
        CHECK(split_result.reference.negative_inf_count == 1);
        CHECK(split_result.reference.nan_count == 0);
        CHECK(std::isnan(split_result.target.mean));
        check_same_metrics(split_result, numgap::evaluate(r, t, sum_builtins(), options));
    }
}

TEST_CASE("evaluate_segments: user reductions merge over pieces; whole-tensor metrics need one piece") {
    const std::vector<std::int64_t> matrix{10, 30};
    std::vector<float> reference(300, 1.0f), target(300);
    std::iota(target.begin(), target.end(), 0.0f);
    const std::vector<std::int64_t> lengths{7, 23};
    const auto pieces = split(target, matrix, 1, lengths);
    const auto segments = segments_of(pieces, matrix, 1, lengths);
    const numgap::tensor_segment unsplit{numgap::tensor_view(reference.data(), matrix), 0};
    numgap::metric_set reduction;
    reduction.add(sum_of_target{}).add(numgap::mse{});
    const auto merged = numgap::evaluate_segments({std::span(&unsplit, 1), 0}, {segments, 1}, reduction);
    CHECK(merged.find("sum_of_target")->value == 299.0 * 300.0 / 2.0);

    numgap::metric_set whole_tensor;
    whole_tensor.add(first_target_value{});
    const auto refused = caught_error([&] {
        (void)numgap::evaluate_segments({std::span(&unsplit, 1), 0}, {segments, 1}, whole_tensor);
    });
    REQUIRE(refused);
    CHECK(refused->kind() == numgap::error_kind::usage);
    CHECK(contains(refused->what(), "'first_target_value' reads the whole tensor at once"));
    numgap::tensor_segment named_unsplit = unsplit;
    named_unsplit.view.with_name("attn.out");
    const auto named_refusal = caught_error([&] {
        (void)numgap::evaluate_segments({std::span(&named_unsplit, 1), 0}, {segments, 1}, whole_tensor);
    });
    REQUIRE(named_refusal);
    CHECK(named_refusal->where().item == "attn.out");
    // One shard is one piece: the metric sees it whole.
    const numgap::tensor_segment one_target{numgap::tensor_view(target.data(), matrix), 0};
    CHECK(numgap::evaluate_segments({std::span(&unsplit, 1), 0}, {std::span(&one_target, 1), 1}, whole_tensor)
              .find("first_target_value")->value == 0.0);

    numgap::metric_set rows;
    rows.add_builtin("kl_div");
    const auto on_rows = caught_error([&] {
        (void)numgap::evaluate_segments({std::span(&unsplit, 1), 0}, {segments, 1}, rows);
    });
    REQUIRE(on_rows);
    CHECK(contains(on_rows->what(), "'kl_div' reads whole rows of the last axis"));
}

TEST_CASE("evaluate_segments: refuses segments that do not tile, other axes, shapes and layouts it cannot slice") {
    std::vector<float> values(60, 1.0f);
    const numgap::tensor_view row_block(values.data(), {2, 10}); // [2, 10] pieces of a [2, 30] tensor
    const numgap::tensor_segment whole_reference{numgap::tensor_view(values.data(), {2, 30}), 0};
    const numgap::segmented_view unsplit{std::span(&whole_reference, 1), 0};
    const numgap::metric_set set = numgap::metric_set::defaults();
    const auto message = [&](std::vector<numgap::tensor_segment> segments, int axis) {
        return error_of([&] { (void)numgap::evaluate_segments(unsplit, {segments, axis}, set); });
    };
    CHECK(contains(message({{row_block, 0}, {row_block, 20}, {row_block, 30}}, 1), "(a gap)"));
    CHECK(contains(message({{row_block, 0}, {row_block, 5}, {row_block, 20}}, 1), "(an overlap)"));
    CHECK(contains(message({{row_block, 3}, {row_block, 13}, {row_block, 23}}, 1), "the first shard must start at 0"));
    CHECK(contains(message({{row_block, 0}, {row_block, 10}}, 1), "differs from the target's"));
    CHECK(contains(message({{row_block, 0}, {row_block, 10}, {row_block, 20}}, 2), "cannot be split along axis 2"));
    const numgap::tensor_view wrong(values.data(), {3, 10});
    CHECK(contains(message({{row_block, 0}, {wrong, 10}, {row_block, 20}}, 1), "may differ only along axis 1"));
    std::vector<double> wide(20, 1.0);
    const numgap::tensor_view other_dtype(wide.data(), {2, 10});
    CHECK(contains(message({{row_block, 0}, {other_dtype, 10}, {row_block, 20}}, 1), "share one dtype"));
    const numgap::tensor_view empty(values.data(), {2, 0});
    CHECK(contains(message({{row_block, 0}, {empty, 10}, {row_block, 10}, {row_block, 20}}, 1), "is empty along axis 1"));

    // Both sides split, along different axes.
    const numgap::tensor_view half(values.data(), {1, 30});
    const std::vector<numgap::tensor_segment> by_rows{{half, 0}, {half, 1}};
    const std::vector<numgap::tensor_segment> by_columns{{row_block, 0}, {row_block, 10}, {row_block, 20}};
    CHECK(contains(error_of([&] { (void)numgap::evaluate_segments({by_rows, 0}, {by_columns, 1}, set); }),
                   "one common axis"));

    // Errors about the pair name the tensor (the reference's first segment).
    numgap::tensor_view named_half = half;
    named_half.with_name("layer.0.out");
    const std::vector<numgap::tensor_segment> named_rows{{named_half, 0}, {half, 1}};
    const auto other_axes = caught_error([&] { (void)numgap::evaluate_segments({named_rows, 0}, {by_columns, 1}, set); });
    REQUIRE(other_axes);
    CHECK(other_axes->where().item == "layer.0.out");
    const numgap::tensor_segment named_whole{numgap::tensor_view(values.data(), {2, 20}).with_name("layer.0.out"), 0};
    const auto other_shape = caught_error([&] {
        (void)numgap::evaluate_segments({std::span(&named_whole, 1), 0}, {by_columns, 1}, set);
    });
    REQUIRE(other_shape);
    CHECK(other_shape->kind() == numgap::error_kind::shape);
    CHECK(other_shape->where().item == "layer.0.out");

    // A block-quantized unsplit side would have to be cut inside its parameters.
    std::vector<std::uint8_t> codes(60, 3);
    std::vector<float> block_scales(2 * 3, 0.5f);
    numgap::tensor_view blocks(codes.data(), {2, 30});
    blocks.with_quantization(numgap::quantization::blocks(1, 10, block_scales));
    const numgap::tensor_segment block_whole{blocks, 0};
    CHECK(contains(error_of([&] { (void)numgap::evaluate_segments({by_columns, 1}, {std::span(&block_whole, 1), 0}, set); }),
                   "block-quantized"));
    // Packed 4-bit data sliced at an odd element would start inside a byte.
    std::vector<std::uint8_t> nibbles(15, 0x11);
    const numgap::tensor_view packed(nibbles.data(), numgap::dtype::int4, {1, 30});
    CHECK(contains(error_of([&] { (void)numgap::slice_along(packed, 1, 3, 10); }), "inside a byte"));
    CHECK(numgap::slice_along(packed, 1, 4, 10).data() == nibbles.data() + 2);
}
}
