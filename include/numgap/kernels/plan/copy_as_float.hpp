#pragma once
// copy_as_float: writes a view's values, dequantized and converted to float32,
// into `out` in the view's logical (reference) order, i.e. with its axis_order
// applied. Used to dump failing tensors. float64 values are rounded to float32.
// Complexity: O(n), no allocation. Throws: numgap::error if the view is
// invalid (see validate_view) or out.size() differs from the element count.
#include <algorithm>
#include <span>
#include <string>

#include <numgap/core/error.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/kernels/constants.hpp>
#include <numgap/kernels/plan/gather.hpp>
#include <numgap/kernels/plan/pair_plan.hpp>
#include <numgap/kernels/plan/validate_pair.hpp>

namespace numgap {

inline void copy_as_float(const tensor_view& view, std::span<float> out) {
    validate_view(view);
    if (std::int64_t(out.size()) != view.size())
        throw error(error_kind::usage,
                    "cannot copy " + view.describe() + " (" + std::to_string(view.size()) +
                        " elements) into a buffer of " + std::to_string(out.size()) + " floats",
                    error_location::of_item(std::string(view.name())));
    const kernels::pair_plan plan = kernels::make_pair_plan(view, view);
    // Gathered position by position range rather than through for_each_block,
    // whose blocks leave reference order for transposed layouts.
    for (std::int64_t position = 0; position < plan.count; position += std::int64_t(kernels::flush_interval)) {
        const std::size_t length = std::size_t(std::min<std::int64_t>(std::int64_t(kernels::flush_interval), plan.count - position));
        kernels::detail::gather(plan, plan.target, position, length, out.data() + position);
    }
}

} // namespace numgap
