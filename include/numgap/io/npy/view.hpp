#pragma once
// npy_view: a tensor_view of a parsed .npy file's data (io/npy/header.hpp),
// pointing into the file's bytes. fortran_order=True becomes reversed
// (column-major) strides, not a copy.
// Complexity: O(rank). Throws: nothing.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include <numgap/core/config.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/io/npy/header.hpp>

namespace numgap::io {

// A view of the data described by `header`, pointing into `bytes` (no copy).
// The view does not own the bytes: they must outlive it.
inline tensor_view npy_view(std::span<const std::byte> bytes, const npy_header& header) {
    NUMGAP_ASSERT(header.data_offset + header.data_bytes <= bytes.size());
    const std::byte* data = bytes.data() + header.data_offset;
    if (!header.fortran_order) return tensor_view(data, header.type, header.shape);
    std::array<std::int64_t, max_rank> strides{};
    std::int64_t stride = 1;
    for (std::size_t i = 0; i < header.shape.size(); ++i) {
        strides[i] = stride;
        stride *= std::max<std::int64_t>(header.shape[i], 1);
    }
    return tensor_view(data, header.type, header.shape,
                       std::span<const std::int64_t>(strides.data(), header.shape.size()));
}

} // namespace numgap::io
