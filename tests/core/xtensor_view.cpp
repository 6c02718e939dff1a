// tensor_view from xtensor containers, adaptors and strided views (through
// numgap/xtensor.hpp): compared in place — the view's data pointer is the
// expression's first element, inside the original buffer — and evaluate()
// on it agrees with the long-double oracle run on the same logical values.
#include <numgap/xtensor.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xstrided_view.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <doctest/doctest.h>

#include <numgap/kernels/scalar_reference.hpp>
#include <numgap/metric.hpp>

namespace {

std::vector<float> random_values(std::size_t n, unsigned seed) {
    std::mt19937 generator(seed);
    std::normal_distribution<float> normal(0.1f, 1.0f);
    std::vector<float> values(n);
    for (auto& value : values) value = normal(generator);
    return values;
}

// A 2-D expression's elements in row-major logical order, read through
// operator() (a copy, for the oracle only; element access, not xtensor's
// iterators, so the oracle does not depend on the machinery under test).
template <class E>
std::vector<float> logical_values(const E& expression) {
    std::vector<float> values;
    for (std::size_t i = 0; i < expression.shape()[0]; ++i)
        for (std::size_t j = 0; j < expression.shape()[1]; ++j) values.push_back(expression(i, j));
    return values;
}

// The view must start at the expression's first element, inside `buffer`.
void check_no_copy(const numgap::tensor_view& view, const float* first, const float* buffer, std::size_t size) {
    CHECK(view.data() == static_cast<const void*>(first));
    CHECK(first >= buffer);
    CHECK(first < buffer + size);
}

void check_against_oracle(const numgap::tensor_view& reference, const numgap::tensor_view& target,
                          const std::vector<float>& r, const std::vector<float>& t) {
    numgap::metric_set metrics = numgap::metric_set::defaults();
    metrics.add_builtin("max_abs").add_builtin("snr_db").add_builtin("l1");
    const numgap::evaluation e = numgap::evaluate(reference, target, metrics, {1, true, true});
    const auto oracle = numgap::kernels::scalar_reference<float>(r, t);
    CHECK(1.0 - e.find("cosine")->value == doctest::Approx(double(oracle.one_minus_cosine())).epsilon(1e-6));
    CHECK(e.find("atol")->value == doctest::Approx(double(oracle.atol())).epsilon(1e-7));
    CHECK(e.find("mse")->value == doctest::Approx(double(oracle.mse())).epsilon(1e-7));
    CHECK(e.find("max_abs")->value == double(float(oracle.max_abs())));
    CHECK(e.find("snr_db")->value == doctest::Approx(double(oracle.snr_db())).epsilon(1e-7));
    CHECK(e.find("l1")->value == doctest::Approx(double(oracle.l1())).epsilon(1e-6));
    CHECK(e.reference.min == double(oracle.reference.min));
    CHECK(e.target.max == double(oracle.target.max));
    CHECK(e.count == std::int64_t(r.size()));
}

// A target close to `reference`, same logical order.
std::vector<float> perturbed(const std::vector<float>& reference, unsigned seed) {
    std::vector<float> target = reference;
    const auto noise = random_values(reference.size(), seed);
    for (std::size_t i = 0; i < target.size(); ++i) target[i] += 0.01f * noise[i];
    return target;
}

} // namespace

TEST_SUITE("core") {
TEST_CASE("xtensor: xt::xarray against xt::xtensor, compared in place") {
    const std::vector<float> values = random_values(6 * 7 * 33, 1);
    xt::xarray<float> reference = xt::adapt(values, std::vector<std::size_t>{6, 7, 33});
    const std::vector<float> target_values = perturbed(values, 2);
    xt::xtensor<float, 3> target = xt::adapt(target_values, std::array<std::size_t, 3>{6, 7, 33});
    const numgap::tensor_view r = numgap::view_of_xtensor(reference), t = numgap::view_of_xtensor(target);
    CHECK(r.rank() == 3);
    CHECK(r.shape(2) == 33);
    CHECK(r.is_contiguous());
    check_no_copy(r, &reference(0, 0, 0), reference.data(), reference.size());
    check_no_copy(t, &target(0, 0, 0), target.data(), target.size());
    check_against_oracle(r, t, values, target_values);
}

TEST_CASE("xtensor: xt::adapt over a std::vector and over a raw pointer points at the caller's memory") {
    std::vector<float> values = random_values(4 * 1000, 3);
    std::vector<float> target_values = perturbed(values, 4);
    auto over_vector = xt::adapt(values, std::vector<std::size_t>{4, 1000});
    auto over_pointer =
        xt::adapt(target_values.data(), target_values.size(), xt::no_ownership(), std::vector<std::size_t>{4, 1000});
    const numgap::tensor_view r(over_vector), t = numgap::view_of_xtensor(over_pointer);
    CHECK(r.data() == values.data());
    CHECK(t.data() == target_values.data());
    check_against_oracle(r, t, values, target_values);
}

TEST_CASE("xtensor: strided and reversed xt::view, xt::transpose and xt::strided_view are walked in place") {
    // Reference: every other column of a 24 x 130 buffer, rows reversed.
    // Target: the transpose of a column-major-stored copy, so its logical
    // order matches the reference while its memory order does not.
    const std::size_t rows = 24, columns = 65;
    const std::vector<float> buffer_values = random_values(rows * columns * 2, 5);
    xt::xarray<float> buffer = xt::adapt(buffer_values, std::vector<std::size_t>{rows, columns * 2});
    auto reference = xt::view(buffer, xt::range(rows - 1, xt::placeholders::_, -1), xt::range(0, columns * 2, 2));
    const std::vector<float> r = logical_values(reference);
    const std::vector<float> t = perturbed(r, 6);
    xt::xarray<float> stored_transposed = xt::transpose(xt::xarray<float>(xt::adapt(t, std::vector<std::size_t>{rows, columns})));
    auto target = xt::transpose(stored_transposed);

    const numgap::tensor_view reference_view = numgap::view_of_xtensor(reference);
    const numgap::tensor_view target_view = numgap::view_of_xtensor(target);
    CHECK_FALSE(reference_view.is_contiguous());
    CHECK_FALSE(target_view.is_contiguous());
    CHECK(reference_view.stride(0) < 0);
    check_no_copy(reference_view, &reference(0, 0), buffer.data(), buffer.size());
    CHECK(reference_view.size() == std::int64_t(rows * columns));
    check_no_copy(target_view, &target(0, 0), stored_transposed.data(), stored_transposed.size());
    REQUIRE(logical_values(target) == t);
    check_against_oracle(reference_view, target_view, r, t);

    // xt::strided_view: one plane of a 3-D tensor, every third element.
    xt::xarray<float> cube = xt::adapt(random_values(3 * 40 * 90, 7), std::vector<std::size_t>{3, 40, 90});
    auto plane = xt::strided_view(cube, {1, xt::all(), xt::range(0, 90, 3)});
    const std::vector<float> plane_values = logical_values(plane);
    const std::vector<float> plane_target = perturbed(plane_values, 8);
    const numgap::tensor_view plane_view = numgap::view_of_xtensor(plane);
    CHECK(plane_view.rank() == 2);
    check_no_copy(plane_view, &plane(0, 0), cube.data(), cube.size());
    const numgap::tensor_view plane_target_view(plane_target.data(), {40, 30});
    check_against_oracle(plane_view, plane_target_view, plane_values, plane_target);
}

TEST_CASE("xtensor: a column-major container keeps its strides") {
    xt::xarray<float, xt::layout_type::column_major> matrix = xt::zeros<float>({3, 5});
    const numgap::tensor_view view(matrix);
    CHECK(view.stride(0) == 1);
    CHECK(view.stride(1) == 3);
    CHECK(view.data() == matrix.data());
}

TEST_CASE("xtensor: expressions without strided storage are no tensor_view (evaluate them first)") {
    xt::xarray<float> a = xt::ones<float>({2, 3});
    using lazy_difference = decltype(a - a);
    using kept_rows = decltype(xt::view(a, xt::keep(0, 1)));
    static_assert(!std::is_constructible_v<numgap::tensor_view, const lazy_difference&>);
    static_assert(!std::is_constructible_v<numgap::tensor_view, const kept_rows&>);
    const xt::xarray<float> evaluated = a - a;
    CHECK(numgap::view_of_xtensor(evaluated).data() == evaluated.data());
}
}
