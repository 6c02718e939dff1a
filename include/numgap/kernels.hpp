#pragma once
// The kernels: the fused one-pass SIMD reduction over a tensor pair, its
// run-time dispatch, the iteration engine that walks (and dequantizes) any
// pair of views in reference order, the row-wise pass of the row metrics, and
// the long-double scalar reference every kernel is tested against.
// Listed in the order data flows through them (kernels/README.md).
#include <numgap/kernels/constants.hpp>
#include <numgap/kernels/entry_points.hpp>
#include <numgap/kernels/scalar_arch.hpp>

#include <numgap/kernels/isa.hpp>

#include <numgap/kernels/plan/validate_pair.hpp>
#include <numgap/kernels/plan/pair_plan.hpp>
#include <numgap/kernels/plan/stored_run.hpp>
#include <numgap/kernels/plan/for_each_run.hpp>
#include <numgap/kernels/plan/gather.hpp>
#include <numgap/kernels/plan/for_each_block.hpp>
#include <numgap/kernels/plan/copy_as_float.hpp>

#include <numgap/kernels/source/simd_lanes.hpp>
#include <numgap/kernels/source/kernel_source.hpp>
#include <numgap/kernels/source/transpose_tile.hpp>
#include <numgap/kernels/source/read_two_streams.hpp>

#include <numgap/kernels/fused/kernel_options.hpp>
#include <numgap/kernels/fused/side_moments.hpp>
#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/kernels/fused/side_chunk.hpp>
#include <numgap/kernels/fused/fused_kernel.hpp>

#include <numgap/kernels/dispatch/dispatch.hpp>
#include <numgap/kernels/table/accumulate_plan.hpp>
#include <numgap/kernels/table/accumulate_views.hpp>
#include <numgap/kernels/table/kernel_table.hpp>

#include <numgap/kernels/rows/for_each_row.hpp>
#include <numgap/kernels/rows/kl_div_rows.hpp>
#include <numgap/kernels/rows/topk_rows.hpp>

#include <numgap/kernels/scalar_reference.hpp>
