#pragma once
// The `metric` concept: what a type needs so numgap can evaluate it anywhere
// a built-in works.
//
// Every metric describes itself through metric_traits<M>: `name`
// (std::string_view), `better` (numgap::direction) and `default_rule`
// (std::optional<numgap::pass_rule>). By default metric_traits reads static
// constexpr members of the same names from M; specialise metric_traits for a
// type you cannot edit.
//   - whole_tensor_metric (tier 1): metric_traits<M>::compute(m, ref, target)
//     returns a double; by default it calls m(ref, target).
//   - reduction_metric (tier 2): metric_traits<M>::state_type (value-initialised
//     to start, copyable), accumulate(m, state, ref_block, target_block) over
//     std::span<const float> blocks of dequantized float32 values, element i
//     of one block paired with element i of the other, every element exactly
//     once (numgap hands them over while they are in cache, so the metric
//     rides the same single pass as the built-ins). Blocks are in reference
//     order, except that a transposed layout (e.g. NHWC target, NCHW
//     reference) is walked in tiles of several rows, so a metric must not
//     depend on the order of elements; merge(m, state, other)
//     (partial states from threads; must be associative), finalize(m, state).
//     By default these call M's members state_type, accumulate, merge, finalize.
//   - metric: either tier. require_metric<M>() turns a failure into readable
//     static_assert messages.
// Complexity: compile time only. Throws: nothing.
#include <concepts>
#include <optional>
#include <span>
#include <string_view>

#include <numgap/core/tensor_view.hpp>
#include <numgap/metric/rule.hpp>

namespace numgap {

template <class M>
struct metric_traits {};

namespace detail {

template <class M>
concept self_described_metric = requires {
    { M::name } -> std::convertible_to<std::string_view>;
    { M::better } -> std::convertible_to<direction>;
    { M::default_rule } -> std::convertible_to<std::optional<pass_rule>>;
};

template <class M>
struct whole_tensor_forwarding {};
template <class M>
    requires requires(const M& m, const tensor_view& v) {
        { m(v, v) } -> std::convertible_to<double>;
    }
struct whole_tensor_forwarding<M> {
    static double compute(const M& m, const tensor_view& reference, const tensor_view& target) {
        return m(reference, target);
    }
};

template <class M>
struct reduction_forwarding {};
template <class M>
    requires requires { typename M::state_type; }
struct reduction_forwarding<M> {
    using state_type = typename M::state_type;
    static void accumulate(const M& m, state_type& state, std::span<const float> reference,
                           std::span<const float> target) {
        m.accumulate(state, reference, target);
    }
    static void merge(const M& m, state_type& state, const state_type& other) { m.merge(state, other); }
    static double finalize(const M& m, const state_type& state) { return m.finalize(state); }
};

} // namespace detail

template <detail::self_described_metric M>
struct metric_traits<M> : detail::whole_tensor_forwarding<M>, detail::reduction_forwarding<M> {
    static constexpr std::string_view name = M::name;
    static constexpr direction better = M::better;
    static constexpr std::optional<pass_rule> default_rule = M::default_rule;
};

template <class M>
concept described_metric = requires {
    { metric_traits<M>::name } -> std::convertible_to<std::string_view>;
    { metric_traits<M>::better } -> std::convertible_to<direction>;
    { metric_traits<M>::default_rule } -> std::convertible_to<std::optional<pass_rule>>;
};

template <class M>
concept whole_tensor_metric = described_metric<M> && requires(const M& m, const tensor_view& v) {
    { metric_traits<M>::compute(m, v, v) } -> std::convertible_to<double>;
};

template <class M>
concept reduction_metric =
    described_metric<M> && requires { typename metric_traits<M>::state_type; } &&
    std::default_initializable<typename metric_traits<M>::state_type> &&
    std::copy_constructible<typename metric_traits<M>::state_type> &&
    requires(const M& m, typename metric_traits<M>::state_type& state,
             const typename metric_traits<M>::state_type& other, std::span<const float> block) {
        metric_traits<M>::accumulate(m, state, block, block);
        metric_traits<M>::merge(m, state, other);
        { metric_traits<M>::finalize(m, other) } -> std::convertible_to<double>;
    };

template <class M>
concept metric = whole_tensor_metric<M> || reduction_metric<M>;

// Static-asserts, in full sentences, what keeps M from being a metric.
template <class M>
constexpr bool require_metric() {
    static_assert(described_metric<M>,
                  "This type is not a numgap metric: it must provide static constexpr members "
                  "`name` (std::string_view), `better` (numgap::direction) and `default_rule` "
                  "(std::optional<numgap::pass_rule>), or numgap::metric_traits must be "
                  "specialised for it to provide them.");
    static_assert(!described_metric<M> || metric<M>,
                  "This type is not a numgap metric: it describes itself but can compute nothing. "
                  "Give it either `double operator()(const numgap::tensor_view&, const "
                  "numgap::tensor_view&) const` (a whole-tensor metric) or a `state_type` with "
                  "`void accumulate(state_type&, std::span<const float>, std::span<const float>) "
                  "const`, `void merge(state_type&, const state_type&) const` and `double "
                  "finalize(const state_type&) const` (a reduction metric).");
    return true;
}

} // namespace numgap
