#pragma once
// metric_set: a runtime, type-erased, ordered collection of metrics with their
// pass rules, for callers that choose metrics at run time (the CLI, the
// comparison layer). evaluate() computes every sum-based built-in from one
// fused pass, runs user reduction metrics on the same blocks in that pass, and
// calls whole-tensor metrics afterwards.
// add(m, rule) accepts any numgap::metric (static_asserts explain a type that
// is not one); add_builtin(name, rule) adds a built-in by name with its default
// parameters (topk k = 1, allclose atol 1e-8 rtol 1e-5).
// Complexity: add O(1) amortised; names() O(size). Throws: add_builtin throws
// numgap::error for an unknown name, listing the valid ones; std::bad_alloc.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/fused/kernel_options.hpp>
#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/metric/builtin_metrics.hpp>
#include <numgap/metric/concept.hpp>
#include <numgap/metric/evaluate_options.hpp>
#include <numgap/metric/evaluation.hpp>
#include <numgap/metric/fused_builtin.hpp>
#include <numgap/metric/pass_layout.hpp>
#include <numgap/metric/rule.hpp>

namespace numgap {

namespace detail {

// A user reduction metric behind a virtual interface; one state per thread.
struct reduction_state {
    virtual ~reduction_state() = default;
};
struct erased_reduction {
    virtual ~erased_reduction() = default;
    virtual std::unique_ptr<reduction_state> make_state() const = 0;
    virtual void accumulate(reduction_state&, std::span<const float>, std::span<const float>) const = 0;
    virtual void merge(reduction_state&, const reduction_state&) const = 0;
    virtual double finalize(const reduction_state&) const = 0;
};

template <class M>
struct reduction_model final : erased_reduction {
    using traits = metric_traits<M>;
    using state_type = typename traits::state_type;
    struct state final : reduction_state {
        state_type value{};
    };
    M metric;
    explicit reduction_model(M m) : metric(std::move(m)) {}
    std::unique_ptr<reduction_state> make_state() const override { return std::make_unique<state>(); }
    void accumulate(reduction_state& s, std::span<const float> r, std::span<const float> t) const override {
        traits::accumulate(metric, static_cast<state&>(s).value, r, t);
    }
    void merge(reduction_state& s, const reduction_state& o) const override {
        traits::merge(metric, static_cast<state&>(s).value, static_cast<const state&>(o).value);
    }
    double finalize(const reduction_state& s) const override {
        return double(traits::finalize(metric, static_cast<const state&>(s).value));
    }
};

struct metric_set_access;

struct metric_entry {
    std::string_view name; // metric_traits<M>::name: static (metric_result.hpp)
    direction better = direction::higher_is_better;
    std::optional<pass_rule> rule;
    // Sum-based built-ins set from_moments, and reduction as a fallback used
    // when the fused pass cannot serve them (two allclose with different
    // tolerances); user reduction metrics set only reduction; whole-tensor
    // metrics only whole_tensor.
    std::function<double(const kernels::pair_moments&)> from_moments;
    // The same for a stateless metric (every fused built-in but allclose),
    // as a plain function: no std::function call on evaluate()'s hot path.
    double (*from_moments_of_type)(const kernels::pair_moments&) = nullptr;
    kernels::kernel_options fused_options{};
    std::shared_ptr<const erased_reduction> reduction;
    std::function<double(const tensor_view&, const tensor_view&)> whole_tensor;
    // A whole-tensor metric that is the mean of a per-row value over the rows
    // of the last axis (kl_div, topk: `static constexpr bool mean_over_rows`):
    // evaluate_segments may then combine pieces that hold whole rows.
    bool mean_over_rows = false;
};

} // namespace detail

class metric_set {
public:
    template <class M>
    metric_set& add(M m, std::optional<pass_rule> rule_override = std::nullopt) {
        static_assert(require_metric<M>());
        if constexpr (metric<M>) add_entry(std::move(m), rule_override);
        return *this;
    }

    metric_set& add_builtin(std::string_view name, std::optional<pass_rule> rule_override = std::nullopt);

    std::size_t size() const noexcept { return entries_.size(); }

private:
    // Only instantiated for real metrics, so a failed require_metric shows its
    // sentence and nothing else.
    template <class M>
    void add_entry(M m, std::optional<pass_rule> rule_override) {
        using traits = metric_traits<M>;
        detail::metric_entry entry;
        entry.name = traits::name;
        entry.better = traits::better;
        entry.rule = rule_override ? rule_override : traits::default_rule;
        if constexpr (detail::fused_metric<M>) {
            entry.fused_options = m.kernel_options();
            entry.from_moments = [m](const kernels::pair_moments& moments) { return double(m.from_moments(moments)); };
            if constexpr (std::is_empty_v<M> && std::is_default_constructible_v<M>)
                entry.from_moments_of_type = [](const kernels::pair_moments& moments) {
                    return double(M{}.from_moments(moments));
                };
            entry.reduction = std::make_shared<detail::reduction_model<M>>(m);
        } else if constexpr (reduction_metric<M>) {
            entry.reduction = std::make_shared<detail::reduction_model<M>>(std::move(m));
        } else {
            entry.whole_tensor = [m](const tensor_view& r, const tensor_view& t) {
                return double(metric_traits<M>::compute(m, r, t));
            };
            if constexpr (requires { requires bool(M::mean_over_rows); }) entry.mean_over_rows = true;
        }
        entries_.reserve(entries_.size() + 1); // then push_back cannot fail after layout_ changed
        layout_.add(entry.from_moments ? &entry.fused_options : nullptr, entry.reduction.get());
        entries_.push_back(std::move(entry));
    }

public:
    bool empty() const noexcept { return entries_.empty(); }
    std::vector<std::string> names() const {
        std::vector<std::string> result;
        result.reserve(entries_.size());
        for (const auto& entry : entries_) result.emplace_back(entry.name);
        return result;
    }

    // cosine, atol, mse: the Qualcomm AI Engine debugger's three.
    static metric_set defaults() {
        metric_set set;
        set.add(cosine{}).add(atol{}).add(mse{});
        return set;
    }

private:
    // The type-erased entries and the pass layout are evaluate()'s and
    // prepared_metric_set's business, not a public API.
    friend struct detail::metric_set_access;

    std::vector<detail::metric_entry> entries_;
    detail::pass_layout layout_;
};

namespace detail {
// The one door to a metric_set's internals, for evaluate() and
// prepared_metric_set (an access struct rather than friend functions, whose
// templated signatures would have to be repeated here).
struct metric_set_access {
    static const std::vector<metric_entry>& entries(const metric_set& set) noexcept { return set.entries_; }
    static const pass_layout& layout(const metric_set& set) noexcept { return set.layout_; }
};
} // namespace detail

inline metric_set& metric_set::add_builtin(std::string_view name, std::optional<pass_rule> rule_override) {
    const bool found = for_each_builtin_metric([&](auto metric) {
        if (name != decltype(metric)::name) return false;
        add(std::move(metric), rule_override);
        return true;
    });
    if (found) return *this;
    std::string valid;
    for (const std::string_view candidate : builtin_metric_names())
        valid += (valid.empty() ? "" : ", ") + std::string(candidate);
    throw error(error_kind::usage, "unknown metric '" + std::string(name) + "'; valid names are: " + valid,
                error_location::of_item(std::string(name)));
}

} // namespace numgap
