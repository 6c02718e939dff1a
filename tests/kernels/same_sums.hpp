#pragma once
// Bit-for-bit comparison of the fused kernel's moments (NaN equal to NaN), for
// tests of two paths that must read the same values the same way.
#include <cmath>

#include <doctest/doctest.h>

#include <numgap/kernels/fused/pair_moments.hpp>

namespace numgap_test {

inline bool same_bits(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// The count and the moments every pass computes (not the optional tiers).
inline void check_same_sums(const numgap::kernels::pair_moments& got, const numgap::kernels::pair_moments& want) {
    CHECK(got.count == want.count);
    CHECK(same_bits(got.sum_squared_diff, want.sum_squared_diff));
    CHECK(same_bits(got.sum_abs_diff, want.sum_abs_diff));
    CHECK(same_bits(got.max_abs_diff, want.max_abs_diff));
    CHECK(same_bits(got.sum_squared_reference, want.sum_squared_reference));
    CHECK(same_bits(got.sum_squared_target, want.sum_squared_target));
    CHECK(same_bits(got.sum_diff_times_sum, want.sum_diff_times_sum));
}

} // namespace numgap_test
