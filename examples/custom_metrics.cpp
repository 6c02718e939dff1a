// Two user-defined metrics used next to the built-ins:
//  - sign_agreement, a whole-tensor (tier 1) metric: the fraction of elements
//    whose sign matches, computed from the two views however it likes;
//  - max_ulp_gap, a reduction (tier 2) metric: numgap hands it dequantized
//    float32 blocks in the same single pass as the built-ins, across threads,
//    and merges its partial states.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <numgap/core.hpp>
#include <numgap/kernels/plan/copy_as_float.hpp>
#include <numgap/metric.hpp>

struct sign_agreement {
    static constexpr std::string_view name = "sign_agreement";
    static constexpr numgap::direction better = numgap::direction::higher_is_better;
    static constexpr std::optional<numgap::pass_rule> default_rule = numgap::pass_rule{numgap::comparison::ge, 0.999};

    double operator()(const numgap::tensor_view& reference, const numgap::tensor_view& target) const {
        std::vector<float> r(std::size_t(reference.size())), t(std::size_t(target.size()));
        numgap::copy_as_float(reference, r); // logical order, dequantized
        numgap::copy_as_float(target, t);
        std::size_t agree = 0;
        for (std::size_t i = 0; i < r.size(); ++i) agree += std::signbit(r[i]) == std::signbit(t[i]);
        return double(agree) / double(r.size());
    }
};

struct max_ulp_gap {
    static constexpr std::string_view name = "max_ulp_gap";
    static constexpr numgap::direction better = numgap::direction::lower_is_better;
    static constexpr std::optional<numgap::pass_rule> default_rule = numgap::pass_rule{numgap::comparison::le, 4};

    using state_type = std::int64_t;
    static std::int64_t ordered(float x) { // float bits mapped to a monotone integer line
        const auto bits = std::int64_t(std::bit_cast<std::int32_t>(x));
        return bits < 0 ? std::int64_t(INT32_MIN) - bits : bits;
    }
    void accumulate(state_type& worst, std::span<const float> r, std::span<const float> t) const {
        for (std::size_t i = 0; i < r.size(); ++i) {
            const std::int64_t gap = std::llabs(ordered(r[i]) - ordered(t[i]));
            worst = gap > worst ? gap : worst;
        }
    }
    void merge(state_type& worst, const state_type& other) const { worst = other > worst ? other : worst; }
    double finalize(const state_type& worst) const { return double(worst); }
};

int main() {
    std::vector<float> reference(100000), target(reference.size());
    for (std::size_t i = 0; i < reference.size(); ++i) {
        reference[i] = float(std::cos(0.001 * double(i)));
        target[i] = std::nextafter(reference[i], 2.0f); // one ulp up
    }
    target[777] = -target[777]; // one sign flip

    numgap::metric_set metrics;
    metrics.add(sign_agreement{}).add(max_ulp_gap{}, numgap::parse_pass_rule("<= 1")).add(numgap::cosine{}).add(numgap::mse{});
    const auto result = numgap::evaluate(numgap::tensor_view(std::span<const float>(reference)),
                                         numgap::tensor_view(std::span<const float>(target)), metrics, {2, true});
    for (const auto& metric : result.metrics)
        std::printf("%-15.*s %14.9g  %s\n", int(metric.name.size()), metric.name.data(), metric.value,
                    metric.passed ? "pass" : "FAIL");
    // The sign flip at element 777 is caught by both user metrics.
    std::printf("overall: %s\n", result.passed() ? "pass" : "FAIL (as intended: one sign flip)");
    return 0;
}
