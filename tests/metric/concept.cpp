// Pins the metric concept (metric/concept.hpp): every built-in satisfies it,
// user types of both tiers do, a metric_traits specialisation adapts a type
// that cannot be edited, and incomplete types are rejected.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/metric.hpp>

namespace {

struct largest_target { // tier 1
    static constexpr std::string_view name = "largest_target";
    static constexpr numgap::direction better = numgap::direction::lower_is_better;
    static constexpr std::optional<numgap::pass_rule> default_rule = std::nullopt;
    double operator()(const numgap::tensor_view&, const numgap::tensor_view& target) const {
        return double(target.size());
    }
};

struct count_positive { // tier 2
    static constexpr std::string_view name = "count_positive";
    static constexpr numgap::direction better = numgap::direction::higher_is_better;
    static constexpr std::optional<numgap::pass_rule> default_rule = numgap::pass_rule{numgap::comparison::ge, 1};
    using state_type = std::int64_t;
    void accumulate(state_type& s, std::span<const float> r, std::span<const float>) const {
        for (const float x : r) s += x > 0;
    }
    void merge(state_type& s, const state_type& o) const { s += o; }
    double finalize(const state_type& s) const { return double(s); }
};

// A third-party type we cannot edit...
struct foreign_distance {
    double scale = 2.0;
};
struct missing_compute {
    static constexpr std::string_view name = "x";
    static constexpr numgap::direction better = numgap::direction::lower_is_better;
    static constexpr std::optional<numgap::pass_rule> default_rule = std::nullopt;
};
struct nothing_at_all {};

} // namespace

// ...adapted through metric_traits.
template <>
struct numgap::metric_traits<foreign_distance> {
    static constexpr std::string_view name = "foreign";
    static constexpr numgap::direction better = numgap::direction::lower_is_better;
    static constexpr std::optional<numgap::pass_rule> default_rule = std::nullopt;
    static double compute(const foreign_distance& m, const numgap::tensor_view& r, const numgap::tensor_view&) {
        return m.scale * double(r.size());
    }
};

TEST_SUITE("metric") {
TEST_CASE("every built-in satisfies numgap::metric, in the documented tier") {
    static_assert(numgap::reduction_metric<numgap::cosine> && numgap::reduction_metric<numgap::atol> &&
                  numgap::reduction_metric<numgap::mse> && numgap::reduction_metric<numgap::max_abs> &&
                  numgap::reduction_metric<numgap::l1> && numgap::reduction_metric<numgap::snr_db> &&
                  numgap::reduction_metric<numgap::psnr_db> && numgap::reduction_metric<numgap::norm_l2> &&
                  numgap::reduction_metric<numgap::max_rel> && numgap::reduction_metric<numgap::allclose>);
    static_assert(numgap::whole_tensor_metric<numgap::kl_div> && numgap::whole_tensor_metric<numgap::topk>);
    static_assert(numgap::require_metric<numgap::topk>());
    CHECK(numgap::builtin_metric_names().size() == 12);
}

TEST_CASE("user types of both tiers and a metric_traits adaptation are metrics; incomplete types are not") {
    static_assert(numgap::whole_tensor_metric<largest_target> && !numgap::reduction_metric<largest_target>);
    static_assert(numgap::reduction_metric<count_positive> && !numgap::whole_tensor_metric<count_positive>);
    static_assert(numgap::metric<foreign_distance>);
    static_assert(!numgap::metric<missing_compute> && numgap::described_metric<missing_compute>);
    static_assert(!numgap::metric<nothing_at_all> && !numgap::described_metric<nothing_at_all>);
    static_assert(!numgap::metric<int>);

    const std::vector<float> r = {1, -2, 3}, t = {1, 2, 3};
    const numgap::tensor_view rv{std::span<const float>(r)}, tv{std::span<const float>(t)};
    const auto results = numgap::evaluate(rv, tv, largest_target{}, count_positive{}, foreign_distance{}, numgap::cosine{});
    CHECK(results[0].value == 3);
    CHECK(results[1].value == 2);
    CHECK(results[1].passed);
    CHECK(results[2].name == "foreign");
    CHECK(results[2].value == 6);
    CHECK(results[3].name == "cosine");
}
} // TEST_SUITE("metric")
