#pragma once
// write_npy(): writes version 1.0 .npy files with the data 64-byte aligned
// like NumPy. Views of any supported dtype and any strides are written in
// row-major order (non-contiguous views are gathered through a 64 KiB
// buffer); quantization and axis_order are not stored. bfloat16 is written as
// '<V2', exactly what NumPy+ml_dtypes writes (np.load(...).view(
// ml_dtypes.bfloat16) recovers it), and the float8 types as '|V1', as NumPy
// writes ml_dtypes' float8 arrays; reading such a file back needs the
// declared dtype (io/npy/header.hpp). NumPy has no packed 4-bit type: int4
// and uint4 (contiguous, as every packed view) are written unpacked, one
// element per byte, as '|i1' / '|u1' (ml_dtypes' int4 stores them so too);
// float4_e2m1fn likewise, one code per byte as '|V1' (ml_dtypes'
// float4_e2m1fn layout), and the float6 types as '|V1' too.
// Complexity: O(elements). Throws: numgap::error of kind `io` naming the path
// and the errno text (a partial file is removed); std::bad_alloc.
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/core/shape.hpp>
#include <numgap/core/tensor_view.hpp>

namespace numgap::io {

namespace detail {

inline std::string_view descr_of(dtype type) noexcept {
    switch (type) {
    case dtype::float32: return "<f4";
    case dtype::float64: return "<f8";
    case dtype::float16: return "<f2";
    case dtype::bfloat16: return "<V2";
    case dtype::int8: return "|i1";
    case dtype::uint8: return "|u1";
    case dtype::int16: return "<i2";
    case dtype::uint16: return "<u2";
    case dtype::int32: return "<i4";
    case dtype::boolean: return "|b1";
    case dtype::float8_e4m3fn:
    case dtype::float8_e5m2:
    case dtype::float8_e8m0fnu:
    case dtype::float6_e2m3fn:
    case dtype::float6_e3m2fn:
    case dtype::float4_e2m1fn: return "|V1";
    case dtype::int4: return "|i1";
    case dtype::uint4: return "|u1";
    }
    return "";
}

// The complete version 1.0 preamble (magic .. '\n') for a C-order array.
inline std::string npy_preamble(dtype type, std::span<const std::int64_t> shape) {
    std::string dict = "{'descr': '" + std::string(descr_of(type)) +
                       "', 'fortran_order': False, 'shape': " + numgap::detail::shape_text(shape) + ", }";
    // Pad with spaces so the data starts on a 64-byte boundary, as NumPy does.
    const std::size_t unpadded = 10 + dict.size() + 1;
    dict.append((64 - unpadded % 64) % 64, ' ');
    dict += '\n';
    if (dict.size() > 0xffff)
        throw error(error_kind::limit, ".npy header too long for format version 1.0 (shape " + numgap::detail::shape_text(shape) + ")");
    std::string preamble = "\x93NUMPY\x01";
    preamble += '\0';
    preamble += static_cast<char>(dict.size() & 0xff);
    preamble += static_cast<char>(dict.size() >> 8);
    return preamble + dict;
}

} // namespace detail

// Writes `view`'s stored data as a .npy file (see the top of this header).
inline void write_npy(const std::filesystem::path& path, const tensor_view& view) {
    const std::string preamble = detail::npy_preamble(view.type(), view.shape());
    const auto failure = [&](const char* what, int code) {
        return error(error_kind::io, std::string(what) + " '" + path.string() + "': " +
                                         std::generic_category().message(code),
                     error_location::in_file(path.string()));
    };
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (file == nullptr) throw failure("cannot create", errno);
    bool ok = std::fwrite(preamble.data(), 1, preamble.size(), file) == preamble.size();
    const std::size_t item = size_of(view.type());
    const std::int64_t count = view.size();
    if (ok && count > 0) {
        if (is_packed(view.type())) {
            // One byte per element, sign-extended for int4 (dtype.hpp's layout).
            std::vector<std::uint8_t> buffer;
            buffer.reserve(std::size_t(1) << 16);
            const auto* packed = static_cast<const std::uint8_t*>(view.data());
            const bool is_signed = view.type() == dtype::int4;
            for (std::int64_t n = 0; n < count && ok; ++n) {
                const unsigned nibble = (packed[n / 2] >> (4 * (n % 2))) & 0xfu;
                buffer.push_back(std::uint8_t(is_signed && nibble >= 8 ? nibble | 0xf0u : nibble));
                if (buffer.size() >= (std::size_t(1) << 16) || n + 1 == count) {
                    ok = std::fwrite(buffer.data(), 1, buffer.size(), file) == buffer.size();
                    buffer.clear();
                }
            }
        } else if (view.is_contiguous()) {
            ok = std::fwrite(view.data(), item, std::size_t(count), file) == std::size_t(count);
        } else {
            // Gather in row-major order through a small buffer.
            std::vector<std::byte> buffer;
            buffer.reserve(std::size_t(1) << 16);
            std::array<std::int64_t, max_rank> index{};
            const auto* base = static_cast<const std::byte*>(view.data());
            for (std::int64_t n = 0; n < count && ok; ++n) {
                std::int64_t offset = 0;
                for (int d = 0; d < view.rank(); ++d) offset += index[d] * view.stride(d);
                const std::byte* element = base + offset * std::int64_t(item);
                buffer.insert(buffer.end(), element, element + item);
                for (int d = view.rank() - 1; d >= 0; --d) {
                    if (++index[d] < view.shape(d)) break;
                    index[d] = 0;
                }
                if (buffer.size() >= (std::size_t(1) << 16) || n + 1 == count) {
                    ok = std::fwrite(buffer.data(), 1, buffer.size(), file) == buffer.size();
                    buffer.clear();
                }
            }
        }
    }
    const int write_errno = errno;
    if (std::fclose(file) != 0 && ok) {
        const int close_errno = errno;
        std::remove(path.c_str());
        throw failure("cannot write", close_errno);
    }
    if (!ok) {
        std::remove(path.c_str());
        throw failure("cannot write", write_errno);
    }
}

// Convenience for the common float32 case (demo runs, --dump-failing).
inline void write_npy(const std::filesystem::path& path, const float* data,
                      std::span<const std::int64_t> shape) {
    write_npy(path, tensor_view(data, shape));
}

} // namespace numgap::io
