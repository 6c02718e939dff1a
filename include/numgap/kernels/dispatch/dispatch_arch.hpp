#pragma once
// NUMGAP_DEFINE_ARCH_KERNELS(arch): defines arch_kernels<arch>::table(), the
// run-time dispatch entry for one architecture. Use it in exactly one
// translation unit per architecture, compiled with that architecture's flags
// (the files in include/numgap/kernels/dispatch/ do exactly this).
// Complexity: O(1). Throws: nothing.
#include <numgap/kernels/dispatch/dispatch.hpp>
#include <numgap/kernels/table/kernel_table.hpp>

#define NUMGAP_DEFINE_ARCH_KERNELS(arch)                                                          \
    template <>                                                                               \
    ::numgap::kernels::kernel_table numgap::kernels::arch_kernels<arch>::table() noexcept {   \
        return ::numgap::kernels::make_kernel_table<arch>();                                  \
    }
