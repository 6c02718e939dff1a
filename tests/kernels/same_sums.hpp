#pragma once
// Equality of the fused kernel's sums (a NaN equal to a NaN, +0 to -0), for
// tests of two paths that must read the same values the same way.
#include <cmath>

#include <doctest/doctest.h>

#include <numgap/kernels/fused/pair_moments.hpp>

namespace numgap_test {

inline bool equal_or_both_nan(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// The count and the moments every pass computes (not the optional tiers).
inline void check_same_sums(const numgap::kernels::pair_moments& got, const numgap::kernels::pair_moments& want) {
    CHECK(got.count == want.count);
    CHECK(equal_or_both_nan(got.sum_squared_diff, want.sum_squared_diff));
    CHECK(equal_or_both_nan(got.sum_abs_diff, want.sum_abs_diff));
    CHECK(equal_or_both_nan(got.max_abs_diff, want.max_abs_diff));
    CHECK(equal_or_both_nan(got.sum_squared_reference, want.sum_squared_reference));
    CHECK(equal_or_both_nan(got.sum_squared_target, want.sum_squared_target));
    CHECK(equal_or_both_nan(got.sum_diff_times_sum, want.sum_diff_times_sum));
}

} // namespace numgap_test
