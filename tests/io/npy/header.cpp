// Pins down what a program gets from a bad .npy besides the message: the
// kind (format for bad bytes, dtype for descr problems, limit for absurd
// shapes), the file, and where in it the problem is.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/io/npy/header.hpp>
#include <numgap/io/npy/writer.hpp>

TEST_SUITE("io") {

namespace {
std::vector<std::byte> npy_bytes(const std::string& preamble, std::size_t data_bytes) {
    std::vector<std::byte> bytes(preamble.size() + data_bytes, std::byte{0});
    for (std::size_t i = 0; i < preamble.size(); ++i) bytes[i] = std::byte(static_cast<unsigned char>(preamble[i]));
    return bytes;
}

numgap::error header_error(const std::vector<std::byte>& bytes) {
    try {
        (void)numgap::io::parse_npy_header(bytes, "run/b.npy");
    } catch (const numgap::error& failure) {
        return failure;
    }
    FAIL("parse_npy_header accepted the bytes");
    return numgap::error("unreachable");
}
} // namespace

TEST_CASE("npy truncated data is a format error at the end of the file") {
    const std::vector<std::int64_t> shape{2, 3};
    const std::string preamble = numgap::io::detail::npy_preamble(numgap::dtype::float32, shape);
    const numgap::error failure = header_error(npy_bytes(preamble, 20)); // 24 needed
    CHECK(failure.kind() == numgap::error_kind::format);
    CHECK(failure.where().file == "run/b.npy");
    CHECK(failure.where().offset == preamble.size() + 20);
    CHECK(std::string(failure.what()).find("truncated .npy file") != std::string::npos);
}

TEST_CASE("npy header syntax errors are format errors at their file offset") {
    std::string preamble = numgap::io::detail::npy_preamble(numgap::dtype::float32, std::vector<std::int64_t>{4});
    const std::size_t key = preamble.find("'fortran_order'");
    REQUIRE(key != std::string::npos);
    preamble[key] = '@';
    const numgap::error failure = header_error(npy_bytes(preamble, 16));
    CHECK(failure.kind() == numgap::error_kind::format);
    CHECK(failure.where().file == "run/b.npy");
    CHECK(failure.where().offset == key);
}

TEST_CASE("npy unsupported descr is a dtype error naming descr") {
    std::string preamble = numgap::io::detail::npy_preamble(numgap::dtype::float32, std::vector<std::int64_t>{4});
    const std::size_t descr = preamble.find("<f4");
    REQUIRE(descr != std::string::npos);
    preamble.replace(descr, 3, ">f4");
    const numgap::error failure = header_error(npy_bytes(preamble, 16));
    CHECK(failure.kind() == numgap::error_kind::dtype);
    CHECK(failure.where().item == "descr");
    CHECK(failure.where().file == "run/b.npy");
}

TEST_CASE("npy shape overflowing 64 bits is a limit error") {
    const std::vector<std::int64_t> shape{std::int64_t(1) << 40, std::int64_t(1) << 40};
    const numgap::error failure = header_error(npy_bytes(numgap::io::detail::npy_preamble(numgap::dtype::float32, shape), 0));
    CHECK(failure.kind() == numgap::error_kind::limit);
    CHECK(failure.where().item == "shape");
}

TEST_CASE("npy missing magic is a format error in the file") {
    const numgap::error failure = header_error(npy_bytes("not a numpy file at all", 0));
    CHECK(failure.kind() == numgap::error_kind::format);
    CHECK(failure.where().file == "run/b.npy");
    CHECK_FALSE(failure.where().has_offset());
}

} // TEST_SUITE
