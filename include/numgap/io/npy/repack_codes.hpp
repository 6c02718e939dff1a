#pragma once
// repack_float4_codes: float4_e2m1fn codes stored one a byte (what NumPy
// writes for ml_dtypes.float4_e2m1fn arrays: '|V1', read as uint8 by
// io/npy/header.hpp when graph.json declares float4_e2m1fn) packed into
// numgap's layout, two a byte, element 2k in the low nibble (core/dtype.hpp),
// in row-major order of the view (a fortran_order file's strides included).
// Bits 4-7 of each stored byte are ignored, as the spare bits of every small
// format are (core/float_mx.hpp). The kernels read packed codes only, so this
// one copy at load, half the file's size, is the price of the unpacked file.
// Complexity: O(elements), one allocation. Throws: std::bad_alloc.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <numgap/core/config.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/tensor_view.hpp>

namespace numgap::io::detail {

// `codes`: a uint8 view (any strides); `storage` receives the packed bytes
// the returned view points to (contiguous, dtype float4_e2m1fn, same shape).
inline tensor_view repack_float4_codes(const tensor_view& codes, std::vector<std::byte>& storage) {
    NUMGAP_ASSERT(codes.type() == dtype::uint8);
    const std::int64_t count = codes.size();
    storage.assign(std::size_t(storage_bytes(dtype::float4_e2m1fn, std::uint64_t(count))), std::byte{0});
    const auto* source = static_cast<const std::uint8_t*>(codes.data());
    std::array<std::int64_t, max_rank> index{};
    std::int64_t offset = 0; // of the current element, in bytes (uint8: one per element)
    for (std::int64_t e = 0; e < count; ++e) {
        const auto nibble = std::uint8_t(source[offset] & 0xf);
        storage[std::size_t(e / 2)] |= std::byte(e % 2 == 0 ? nibble : std::uint8_t(nibble << 4));
        // Next index in row-major order, carrying into outer dimensions.
        for (int d = codes.rank() - 1; d >= 0; --d) {
            offset += codes.stride(d);
            if (++index[std::size_t(d)] < codes.shape(d)) break;
            offset -= codes.stride(d) * codes.shape(d);
            index[std::size_t(d)] = 0;
        }
    }
    return tensor_view(storage.data(), dtype::float4_e2m1fn, codes.shape());
}

} // namespace numgap::io::detail
