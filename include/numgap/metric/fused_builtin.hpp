#pragma once
// detail::fused_builtin<Derived>: what the sum-based built-in metrics share.
// Each is finalised from kernels::pair_moments (from_moments), so evaluate()
// computes all of them from one fused pass; used on its own (e.g. by a caller's
// generic code) each is also a reduction metric whose state is pair_moments.
// detail::fused_metric recognises such types.
// Complexity: O(block) per accumulate, O(1) otherwise. Throws: nothing.
#include <span>

#include <numgap/kernels/fused/fused_kernel.hpp>
#include <numgap/kernels/fused/kernel_options.hpp>
#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/kernels/scalar_arch.hpp>

namespace numgap::detail {

template <class Derived>
struct fused_builtin {
    using state_type = kernels::pair_moments;

    // Only allclose reads the tolerances, and it overrides this.
    kernels::kernel_options kernel_options() const noexcept {
        kernels::kernel_options options{Derived::kernel_features};
        options.uses_tolerance = false;
        return options;
    }
    void accumulate(state_type& state, std::span<const float> reference,
                    std::span<const float> target) const noexcept {
        kernels::accumulate_pair_block(kernels::native_arch{}, reference.data(), target.data(),
                                       reference.size(), self().kernel_options(), state);
    }
    void merge(state_type& state, const state_type& other) const noexcept { state.merge(other); }
    double finalize(const state_type& state) const noexcept { return self().from_moments(state); }

private:
    const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
};

template <class M>
concept fused_metric = requires(const M& m, const kernels::pair_moments& moments) {
    { M::kernel_features } -> std::convertible_to<unsigned>;
    { m.kernel_options() } -> std::convertible_to<kernels::kernel_options>;
    { m.from_moments(moments) } -> std::convertible_to<double>;
};

} // namespace numgap::detail
