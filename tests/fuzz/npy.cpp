// libFuzzer target: one .npy file (io/npy.hpp). The input is the file's bytes.
// Parses the header - undeclared, then, if refused, declared bfloat16 and
// float8_e4m3fn, float6_e3m2fn, float4_e2m1fn so the opaque '<V2' and '|V1' paths run too - builds the view (fortran_order strides
// included) and reads every element through the kernels (fuzz_support.hpp).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/io/npy.hpp>

#include "fuzz_support.hpp"

// A namespace of its own: the targets are compiled together (CMakeLists.txt).
namespace npy_target {

// npy_view points into the bytes, and the kernels' typed loads need the data
// aligned for its element type, which a hand-made header breaks by putting
// the data at an odd offset (UBSan: misaligned load in kernels/source/kernel_source.hpp,
// found by this target). run_directory copies such data once before making
// the view; this does the same, so the kernels see what they see in a run.
std::span<const std::byte> with_aligned_data(std::span<const std::byte> bytes, const numgap::io::npy_header& header) {
    const std::byte* data = bytes.data() + header.data_offset;
    if (reinterpret_cast<std::uintptr_t>(data) % numgap::size_of(header.type) == 0) return bytes;
    static std::vector<std::max_align_t> storage;
    constexpr std::size_t alignment = alignof(std::max_align_t);
    const std::size_t shift = (alignment - header.data_offset % alignment) % alignment;
    storage.resize((shift + bytes.size()) / sizeof(std::max_align_t) + 1);
    std::byte* shifted = reinterpret_cast<std::byte*>(storage.data()) + shift;
    std::memcpy(shifted, bytes.data(), bytes.size());
    return {shifted, bytes.size()};
}

// The one place this target calls the .npy API.
void parse_and_read(std::span<const std::byte> bytes, std::optional<numgap::dtype> declared) {
    const numgap::io::npy_header header = numgap::io::parse_npy_header(bytes, "fuzz.npy", declared);
    numgap::fuzz::read_every_element(numgap::io::npy_view(with_aligned_data(bytes, header), header));
}

NUMGAP_FUZZ_TARGET(npy) {
    const std::span<const std::byte> bytes = numgap::fuzz::as_bytes(data, size);
    try {
        parse_and_read(bytes, std::nullopt);
    } catch (const numgap::error& failure) {
        numgap::fuzz::refused(failure);
        // A declared dtype of the record's width is what makes an opaque
        // '<V2' (bfloat16) or '|V1' (float8, float6; float4_e2m1fn, read as
        // its one-a-byte codes) record readable.
        for (const numgap::dtype declared : {numgap::dtype::bfloat16, numgap::dtype::float8_e4m3fn,
                                             numgap::dtype::float6_e3m2fn, numgap::dtype::float4_e2m1fn}) {
            try {
                parse_and_read(bytes, declared);
            } catch (const numgap::error& declared_failure) {
                numgap::fuzz::refused(declared_failure);
            }
        }
    }
    return 0;
}

} // namespace npy_target
