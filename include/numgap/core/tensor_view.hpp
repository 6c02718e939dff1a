#pragma once
// A non-owning view of one tensor as stored: data pointer, dtype, shape,
// strides in elements, optional affine quantization, and an optional
// axis_order saying how its stored dimensions map onto the reference's
// (stored dimension i is reference dimension axis_order[i]; [0,2,3,1] is NHWC
// storage of an NCHW tensor). Views hold everything inline and never allocate.
// Throws (constructors): numgap::error for a rank above max_rank (limit), a
// negative dimension or a strides count other than the rank (shape), and
// non-zero dimensions whose product exceeds 2^63 - 1 (limit); with_axis_order
// for an order of the wrong length (shape).
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <numgap/core/config.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/half.hpp>
#include <numgap/core/quantization.hpp>
#include <numgap/core/shape.hpp>

namespace numgap {

namespace detail {
// Anything with xtensor's storage interface: xarray, xtensor, adapt(), and
// strided views that expose data() + data_offset().
template <class E>
concept strided_expression = requires(const E& e) {
    e.data();
    e.shape();
    e.strides();
    requires known_element<std::remove_cvref_t<decltype(*e.data())>>;
};
} // namespace detail

class tensor_view {
public:
    tensor_view() = default;

    // Raw memory with a shape; strides default to row-major contiguous.
    tensor_view(const void* data, dtype type, std::span<const std::int64_t> shape,
                std::span<const std::int64_t> strides = {})
        : data_(data), type_(type) {
        if (shape.size() > std::size_t(max_rank))
            throw error(error_kind::limit, "tensor of rank " + std::to_string(shape.size()) +
                                               " exceeds numgap's maximum rank " + std::to_string(max_rank));
        if (!strides.empty() && strides.size() != shape.size())
            throw error(error_kind::shape, "tensor has " + std::to_string(shape.size()) + " dimensions but " +
                                               std::to_string(strides.size()) + " strides");
        rank_ = static_cast<std::int8_t>(shape.size());
        for (int i = 0; i < rank_; ++i) shape_[i] = shape[i];
        count_elements(); // refuses negative dimensions
        if (strides.empty())
            set_contiguous_strides();
        else
            for (int i = 0; i < rank_; ++i) strides_[i] = strides[i];
    }

    tensor_view(const void* data, dtype type, std::initializer_list<std::int64_t> shape)
        : tensor_view(data, type, std::span<const std::int64_t>(shape.begin(), shape.size())) {}

    // A 1-D view of typed contiguous memory.
    template <known_element T>
    explicit tensor_view(std::span<const T> values)
        : tensor_view(values.data(), dtype_of<T>::value,
                      {static_cast<std::int64_t>(values.size())}) {}
    template <known_element T>
    explicit tensor_view(std::span<T> values) : tensor_view(std::span<const T>(values)) {}

    template <known_element T>
    tensor_view(const T* data, std::span<const std::int64_t> shape,
                std::span<const std::int64_t> strides = {})
        : tensor_view(static_cast<const void*>(data), dtype_of<T>::value, shape, strides) {}
    template <known_element T>
    tensor_view(const T* data, std::initializer_list<std::int64_t> shape)
        : tensor_view(static_cast<const void*>(data), dtype_of<T>::value, shape) {}

    // xtensor containers, adaptors and strided views: no copy, strides kept.
    template <detail::strided_expression E>
    explicit tensor_view(const E& expression) {
        using element = std::remove_cvref_t<decltype(*expression.data())>;
        const auto& shape = expression.shape();
        const auto& strides = expression.strides();
        if (shape.size() > std::size_t(max_rank))
            throw error(error_kind::limit, "xtensor expression of rank " + std::to_string(shape.size()) +
                                               " exceeds numgap's maximum rank " + std::to_string(max_rank));
        const element* base = expression.data();
        if constexpr (requires { expression.data_offset(); }) base += expression.data_offset();
        data_ = base;
        type_ = dtype_of<element>::value;
        rank_ = static_cast<std::int8_t>(shape.size());
        for (int i = 0; i < rank_; ++i) {
            shape_[i] = static_cast<std::int64_t>(shape[i]);
            strides_[i] = static_cast<std::int64_t>(strides[i]);
        }
        count_elements();
    }

    const void* data() const noexcept { return data_; }
    dtype type() const noexcept { return type_; }
    int rank() const noexcept { return rank_; }
    std::span<const std::int64_t> shape() const noexcept { return {shape_.data(), std::size_t(rank_)}; }
    std::span<const std::int64_t> strides() const noexcept { return {strides_.data(), std::size_t(rank_)}; }
    std::int64_t shape(int dimension) const noexcept { return shape_[dimension]; }
    std::int64_t stride(int dimension) const noexcept { return strides_[dimension]; }

    // Elements: the product of the shape, counted once when it is set
    // (evaluate() asks several times a call).
    std::int64_t size() const noexcept { return size_; }

    bool is_contiguous() const noexcept {
        std::int64_t expected = 1;
        for (int i = rank_ - 1; i >= 0; --i) {
            if (shape_[i] != 1 && strides_[i] != expected) return false;
            expected *= shape_[i];
        }
        return true;
    }

    const quantization& quant() const noexcept { return quant_; }
    bool is_quantized() const noexcept { return quantized_; }
    tensor_view& with_quantization(const quantization& q) noexcept {
        quant_ = q;
        quantized_ = true;
        return *this;
    }

    bool has_axis_order() const noexcept { return has_axis_order_; }
    std::span<const std::int8_t> axis_order() const noexcept {
        return {axis_order_.data(), has_axis_order_ ? std::size_t(rank_) : 0};
    }
    // Checked by numgap::validate; stored as given so the error can name it.
    tensor_view& with_axis_order(std::span<const int> order) {
        if (order.size() != std::size_t(rank_))
            throw error(error_kind::shape,
                        describe() + ": axis_order has " + std::to_string(order.size()) +
                            " entries but the tensor has rank " + std::to_string(rank_),
                        error_location::of_item(std::string(name_)));
        for (int i = 0; i < rank_; ++i) axis_order_[i] = static_cast<std::int8_t>(order[i]);
        has_axis_order_ = true;
        return *this;
    }
    tensor_view& with_axis_order(std::initializer_list<int> order) {
        return with_axis_order(std::span<const int>(order.begin(), order.size()));
    }

    // Shape in the reference's dimension order (the stored shape when no axis_order).
    std::array<std::int64_t, max_rank> logical_shape() const noexcept {
        std::array<std::int64_t, max_rank> logical{};
        for (int i = 0; i < rank_; ++i)
            logical[has_axis_order_ ? axis_order_[i] : i] = shape_[i];
        return logical;
    }
    // Stride, in elements, of each reference-order dimension.
    std::array<std::int64_t, max_rank> logical_strides() const noexcept {
        std::array<std::int64_t, max_rank> logical{};
        for (int i = 0; i < rank_; ++i)
            logical[has_axis_order_ ? axis_order_[i] : i] = strides_[i];
        return logical;
    }

    // A label for error messages; views do not own it.
    std::string_view name() const noexcept { return name_; }
    tensor_view& with_name(std::string_view name) noexcept {
        name_ = name;
        return *this;
    }
    std::string describe() const {
        return name_.empty() ? std::string("tensor") : "tensor '" + std::string(name_) + "'";
    }

private:
    // size_ from shape_. Non-zero dimensions whose product exceeds int64
    // (strides are built from it) are refused, as the readers' byte counts
    // refuse them (core/shape.hpp); so is a negative one (an xtensor
    // dimension beyond int64 wraps to one).
    void count_elements() {
        bool has_zero = false;
        std::int64_t nonzero_product = 1;
        for (int i = 0; i < rank_; ++i) {
            if (shape_[i] < 0)
                throw error(error_kind::shape, "tensor has a negative dimension " + std::to_string(shape_[i]));
            if (shape_[i] == 0) {
                has_zero = true;
                continue;
            }
            if (__builtin_mul_overflow(nonzero_product, shape_[i], &nonzero_product))
                throw error(error_kind::limit, "tensor of shape " + detail::shape_text(shape()) +
                                                   ": its non-zero dimensions multiply beyond 2^63 - 1");
        }
        size_ = has_zero ? 0 : nonzero_product;
    }

    void set_contiguous_strides() noexcept {
        std::int64_t stride = 1;
        for (int i = rank_ - 1; i >= 0; --i) {
            strides_[i] = stride;
            stride *= shape_[i];
        }
    }

    const void* data_ = nullptr;
    std::int64_t size_ = 1; // rank 0: one element
    std::array<std::int64_t, max_rank> shape_{};
    std::array<std::int64_t, max_rank> strides_{};
    std::array<std::int8_t, max_rank> axis_order_{};
    quantization quant_{};
    std::string_view name_{};
    dtype type_ = dtype::float32;
    std::int8_t rank_ = 0;
    bool quantized_ = false;
    bool has_axis_order_ = false;
};

} // namespace numgap
