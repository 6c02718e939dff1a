// The branch-free parameter scans of validate_view (numgap/kernels/plan/parameter_scan.hpp)
// against a plain loop: every kind of bad scale and zero point, at the start,
// inside and at the edges of a scan block and in the tail, over lengths
// around the block size; the first of several bad values is the one named.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/kernels/plan/parameter_scan.hpp>

namespace {

std::size_t oracle_invalid_scale(const std::vector<float>& scales, bool nan_allowed) {
    for (std::size_t i = 0; i < scales.size(); ++i) {
        const float s = scales[i];
        if (s == 0.0f || std::isinf(s) || (std::isnan(s) && !nan_allowed)) return i;
    }
    return scales.size();
}

std::size_t oracle_zero_point_beyond(const std::vector<std::int32_t>& zero_points, std::int32_t limit) {
    for (std::size_t i = 0; i < zero_points.size(); ++i)
        if (zero_points[i] < -limit || zero_points[i] > limit) return i;
    return zero_points.size();
}

constexpr std::size_t scan_size = numgap::detail::scan_block;
const std::size_t scan_lengths[] = {
    0, 1, 2, 7, scan_size - 1, scan_size, scan_size + 1, 2 * scan_size, 3 * scan_size + 5, 5000};

std::vector<std::size_t> positions_for(std::size_t n) {
    std::vector<std::size_t> positions;
    for (const std::size_t p :
         {std::size_t(0), std::size_t(1), scan_size - 1, scan_size, scan_size + 1, 2 * scan_size - 1, n / 2, n - 1})
        if (p < n) positions.push_back(p);
    return positions;
}

} // namespace

TEST_SUITE("kernels") {
TEST_CASE("first_invalid_scale finds the first zero, infinite or (unless allowed) NaN scale") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float bad[] = {
        0.0f, -0.0f, std::numeric_limits<float>::infinity(),      -std::numeric_limits<float>::infinity(),
        nan,  -nan,  std::numeric_limits<float>::signaling_NaN(), std::bit_cast<float>(0x7fffffffu)};
    // Valid, though at the edges of the bit tests: the smallest subnormal,
    // the largest finite, negative values, the smallest normal.
    const float good[] = {0.5f,
                          std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max(),
                          -1.0f,
                          std::numeric_limits<float>::min()};
    for (const std::size_t n : scan_lengths) {
        std::vector<float> scales(n);
        for (std::size_t i = 0; i < n; ++i) scales[i] = good[i % std::size(good)];
        for (const bool nan_allowed : {false, true}) {
            CAPTURE(n);
            CAPTURE(nan_allowed);
            CHECK(numgap::detail::first_invalid_scale(scales, nan_allowed) == n);
            for (const std::size_t p : positions_for(n))
                for (const float value : bad) {
                    std::vector<float> with_bad = scales;
                    with_bad[p] = value;
                    CAPTURE(p);
                    CAPTURE(std::bit_cast<std::uint32_t>(value));
                    const std::size_t found = numgap::detail::first_invalid_scale(with_bad, nan_allowed);
                    CHECK(found == oracle_invalid_scale(with_bad, nan_allowed));
                    CHECK(found == (std::isnan(value) && nan_allowed ? n : p));
                    // A second bad value later does not hide the first.
                    if (p + scan_size < n) {
                        with_bad[p + scan_size] = 0.0f;
                        CHECK(numgap::detail::first_invalid_scale(with_bad, nan_allowed) ==
                              oracle_invalid_scale(with_bad, nan_allowed));
                    }
                }
        }
    }
}

TEST_CASE("first_zero_point_beyond finds the first zero point outside [-limit, limit]") {
    constexpr std::int32_t limit = 1 << 24;
    const std::int32_t bad[] = {limit + 1, -limit - 1, std::numeric_limits<std::int32_t>::max(),
                                std::numeric_limits<std::int32_t>::min(),
                                std::numeric_limits<std::int32_t>::min() + limit};
    const std::int32_t good[] = {0, limit, -limit, 1, -128, 255};
    for (const std::size_t n : scan_lengths) {
        std::vector<std::int32_t> zero_points(n);
        for (std::size_t i = 0; i < n; ++i) zero_points[i] = good[i % std::size(good)];
        CAPTURE(n);
        CHECK(numgap::detail::first_zero_point_beyond(zero_points, limit) == n);
        for (const std::size_t p : positions_for(n))
            for (const std::int32_t value : bad) {
                std::vector<std::int32_t> with_bad = zero_points;
                with_bad[p] = value;
                CAPTURE(p);
                CAPTURE(value);
                CHECK(numgap::detail::first_zero_point_beyond(with_bad, limit) == p);
                CHECK(oracle_zero_point_beyond(with_bad, limit) == p);
            }
    }
    // Other limits, the largest included.
    const std::vector<std::int32_t> edges = {std::numeric_limits<std::int32_t>::max(),
                                             std::numeric_limits<std::int32_t>::min() + 1};
    CHECK(numgap::detail::first_zero_point_beyond(edges, std::numeric_limits<std::int32_t>::max()) == 2);
    CHECK(numgap::detail::first_zero_point_beyond(edges, 0) == 0);
    const std::vector<std::int32_t> minimum = {0, std::numeric_limits<std::int32_t>::min()};
    CHECK(numgap::detail::first_zero_point_beyond(minimum, std::numeric_limits<std::int32_t>::max()) == 1);
}
} // TEST_SUITE("kernels")
