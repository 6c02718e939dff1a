#pragma once
// numgap/xtensor.hpp: compare xtensor data where it lies.
//
// numgap::tensor_view is constructible from anything with xtensor's strided
// storage interface (data(), shape(), strides(), and data_offset() for
// views): xt::xarray, xt::xtensor, xt::xtensor_fixed, xt::adapt(...) over a
// std::vector or a raw pointer, and strided views (xt::view with integers,
// ranges, xt::all and steps, negative ones included; xt::transpose;
// xt::strided_view; xt::reshape_view of a contiguous container). The view
// points at the expression's first element and keeps its strides: nothing
// is copied, and a column-major or permuted layout is walked in place.
//
// This header adds numgap::view_of_xtensor(expression), which builds that
// view from any xt::xexpression and, for an expression without strided
// storage (a lazy xfunction such as `a - b`, xt::broadcast, a view with
// xt::keep / xt::drop), stops the build with a sentence saying what to do
// instead of a list of constructor candidates. It is the one numgap header
// that includes xtensor (the umbrella header does not), which is why the
// CMake package names xtensor as a public dependency.
//
// Lifetime: the view borrows. A view of a temporary container
// (view_of_xtensor(xt::eval(a - b))) dangles at the end of the statement;
// evaluate into a named variable first.
// Complexity O(rank). Throws numgap::error when the rank exceeds max_rank.
#include <type_traits>

#include <xtensor/xexpression.hpp>

#include <numgap/core/tensor_view.hpp>

namespace numgap {

template <class E>
tensor_view view_of_xtensor(const xt::xexpression<E>& expression) {
    static_assert(detail::strided_expression<E>,
                  "This xtensor expression has no strided storage to compare in place (a lazy expression such as "
                  "a - b, a broadcast, or a view with xt::keep / xt::drop). Evaluate it into a container first "
                  "(auto values = xt::eval(expression);) and pass that container.");
    return tensor_view(expression.derived_cast());
}

} // namespace numgap
