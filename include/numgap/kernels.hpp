#pragma once
// The kernels: the fused one-pass SIMD reduction over a tensor pair, its
// run-time dispatch, the iteration engine that walks (and dequantizes) any
// pair of views in reference order, the row-wise pass of the row metrics, and
// the long-double scalar reference every kernel is tested against.
#include <numgap/kernels/accumulate_plan.hpp>
#include <numgap/kernels/copy_as_float.hpp>
#include <numgap/kernels/dispatch.hpp>
#include <numgap/kernels/for_each_row.hpp>
#include <numgap/kernels/for_each_run.hpp>
#include <numgap/kernels/fused_kernel.hpp>
#include <numgap/kernels/kernel_options.hpp>
#include <numgap/kernels/kernel_source.hpp>
#include <numgap/kernels/kernel_table.hpp>
#include <numgap/kernels/kl_div_rows.hpp>
#include <numgap/kernels/pair_moments.hpp>
#include <numgap/kernels/pair_plan.hpp>
#include <numgap/kernels/read_two_streams.hpp>
#include <numgap/kernels/scalar_arch.hpp>
#include <numgap/kernels/scalar_reference.hpp>
#include <numgap/kernels/side_moments.hpp>
#include <numgap/kernels/simd_lanes.hpp>
#include <numgap/kernels/stored_run.hpp>
#include <numgap/kernels/topk_rows.hpp>
#include <numgap/kernels/transpose_tile.hpp>
#include <numgap/kernels/validate_pair.hpp>
