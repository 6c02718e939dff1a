#pragma once
// Shape helpers every reader needs: a shape as Python writes it ("(2, 3)",
// "(4,)", "()": what .npy headers and NumPy users read) and the byte count of
// a shape with overflow checked (checked_storage_bytes: of a shape of a
// dtype, packed types included), so a hostile header's shape can be refused
// before anything is allocated from it.
// Complexity: O(rank). Throws: shape_text only std::bad_alloc.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <numgap/core/dtype.hpp>

namespace numgap::detail {

// "(2, 3)"; a one-dimensional shape keeps Python's trailing comma: "(4,)".
inline std::string shape_text(std::span<const std::int64_t> shape) {
    std::string text = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i != 0) text += ", ";
        text += std::to_string(shape[i]);
    }
    if (shape.size() == 1) text += ",";
    return text + ")";
}

// Product of the dimensions and byte count; nullopt when any product, including
// the one that skips zero dimensions (strides are built from it), overflows.
inline std::optional<std::uint64_t> checked_byte_count(std::span<const std::int64_t> shape,
                                                       std::size_t item_size) {
    std::int64_t nonzero_product = static_cast<std::int64_t>(item_size);
    bool has_zero = false;
    for (std::int64_t dimension : shape) {
        if (dimension < 0) return std::nullopt;
        if (dimension == 0) {
            has_zero = true;
            continue;
        }
        if (__builtin_mul_overflow(nonzero_product, dimension, &nonzero_product))
            return std::nullopt;
    }
    return has_zero ? 0 : static_cast<std::uint64_t>(nonzero_product);
}

// Bytes a tensor of `shape` and `type` occupies (packed 4-bit types round up
// to whole bytes, see dtype.hpp); nullopt on overflow as checked_byte_count.
inline std::optional<std::uint64_t> checked_storage_bytes(std::span<const std::int64_t> shape, dtype type) {
    if (!is_packed(type)) return checked_byte_count(shape, size_of(type));
    const std::optional<std::uint64_t> elements = checked_byte_count(shape, 1);
    if (!elements) return std::nullopt;
    return storage_bytes(type, *elements);
}

} // namespace numgap::detail
