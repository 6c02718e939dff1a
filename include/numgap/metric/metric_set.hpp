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
#include <utility>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/kernel_options.hpp>
#include <numgap/kernels/pair_moments.hpp>
#include <numgap/metric/allclose.hpp>
#include <numgap/metric/atol.hpp>
#include <numgap/metric/concept.hpp>
#include <numgap/metric/cosine.hpp>
#include <numgap/metric/fused_builtin.hpp>
#include <numgap/metric/kl_div.hpp>
#include <numgap/metric/l1.hpp>
#include <numgap/metric/max_abs.hpp>
#include <numgap/metric/max_rel.hpp>
#include <numgap/metric/mse.hpp>
#include <numgap/metric/norm_l2.hpp>
#include <numgap/metric/psnr_db.hpp>
#include <numgap/metric/rule.hpp>
#include <numgap/metric/snr_db.hpp>
#include <numgap/metric/topk.hpp>

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

struct metric_entry {
    std::string name;
    direction better = direction::higher_is_better;
    std::optional<pass_rule> rule;
    // Sum-based built-ins set from_moments, and reduction as a fallback used
    // when the fused pass cannot serve them (two allclose with different
    // tolerances); user reduction metrics set only reduction; whole-tensor
    // metrics only whole_tensor.
    std::function<double(const kernels::pair_moments&)> from_moments;
    kernels::kernel_options fused_options{};
    std::shared_ptr<const erased_reduction> reduction;
    std::function<double(const tensor_view&, const tensor_view&)> whole_tensor;
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
        entry.name = std::string(traits::name);
        entry.better = traits::better;
        entry.rule = rule_override ? rule_override : traits::default_rule;
        if constexpr (detail::fused_metric<M>) {
            entry.fused_options = m.kernel_options();
            entry.from_moments = [m](const kernels::pair_moments& moments) { return double(m.from_moments(moments)); };
            entry.reduction = std::make_shared<detail::reduction_model<M>>(m);
        } else if constexpr (reduction_metric<M>) {
            entry.reduction = std::make_shared<detail::reduction_model<M>>(std::move(m));
        } else {
            entry.whole_tensor = [m](const tensor_view& r, const tensor_view& t) {
                return double(metric_traits<M>::compute(m, r, t));
            };
        }
        entries_.push_back(std::move(entry));
    }

public:
    bool empty() const noexcept { return entries_.empty(); }
    std::vector<std::string> names() const {
        std::vector<std::string> result;
        result.reserve(entries_.size());
        for (const auto& entry : entries_) result.push_back(entry.name);
        return result;
    }
    const std::vector<detail::metric_entry>& entries() const noexcept { return entries_; }

    // cosine, atol, mse: the Qualcomm AI Engine debugger's three.
    static metric_set defaults() {
        metric_set set;
        set.add(cosine{}).add(atol{}).add(mse{});
        return set;
    }

private:
    std::vector<detail::metric_entry> entries_;
};

inline std::vector<std::string_view> builtin_metric_names() {
    return {cosine::name,  atol::name,    mse::name,    max_abs::name,  l1::name,
            snr_db::name,  psnr_db::name, norm_l2::name, max_rel::name, allclose::name,
            kl_div::name,  topk::name};
}

inline metric_set& metric_set::add_builtin(std::string_view name, std::optional<pass_rule> rule_override) {
    if (name == cosine::name) return add(cosine{}, rule_override);
    if (name == atol::name) return add(atol{}, rule_override);
    if (name == mse::name) return add(mse{}, rule_override);
    if (name == max_abs::name) return add(max_abs{}, rule_override);
    if (name == l1::name) return add(l1{}, rule_override);
    if (name == snr_db::name) return add(snr_db{}, rule_override);
    if (name == psnr_db::name) return add(psnr_db{}, rule_override);
    if (name == norm_l2::name) return add(norm_l2{}, rule_override);
    if (name == max_rel::name) return add(max_rel{}, rule_override);
    if (name == allclose::name) return add(allclose{}, rule_override);
    if (name == kl_div::name) return add(kl_div{}, rule_override);
    if (name == topk::name) return add(topk{}, rule_override);
    std::string valid;
    for (const std::string_view candidate : builtin_metric_names())
        valid += (valid.empty() ? "" : ", ") + std::string(candidate);
    throw error(error_kind::usage, "unknown metric '" + std::string(name) + "'; valid names are: " + valid,
                error_location::of_item(std::string(name)));
}

} // namespace numgap
