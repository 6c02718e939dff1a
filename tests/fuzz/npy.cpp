// libFuzzer target: one .npy file (io/npy.hpp). The input is the file's bytes.
// Parses the header - undeclared, then, if refused, declared bfloat16 so the
// opaque '<V2' path runs too - builds the view (fortran_order strides
// included) and reads every element through the kernels (fuzz_support.hpp).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include <numgap/core/dtype.hpp>
#include <numgap/core/error.hpp>
#include <numgap/io/npy.hpp>

#include "fuzz_support.hpp"

namespace {

// The one place this target calls the .npy API.
void parse_and_read(std::span<const std::byte> bytes, std::optional<numgap::dtype> declared) {
    const numgap::io::npy_header header = numgap::io::parse_npy_header(bytes, "fuzz.npy", declared);
    numgap::fuzz::read_every_element(numgap::io::npy_view(bytes, header));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::byte> bytes = numgap::fuzz::as_bytes(data, size);
    try {
        parse_and_read(bytes, std::nullopt);
    } catch (const numgap::error& failure) {
        numgap::fuzz::refused(failure);
        // A declared 2-byte dtype is what makes an opaque '<V2' record readable.
        try {
            parse_and_read(bytes, numgap::dtype::bfloat16);
        } catch (const numgap::error& declared_failure) {
            numgap::fuzz::refused(declared_failure);
        }
    }
    return 0;
}
