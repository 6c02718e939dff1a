// Pins down io/base64.hpp: RFC 4648 test vectors, the decoded size from the
// text alone, and the strictness of Python's b64decode(validate=True): any
// character outside the alphabet, misplaced padding and a length that is not
// a multiple of four are refused at the right offset.
#include <doctest/doctest.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/io/base64.hpp>

namespace {

std::span<const std::byte> bytes(std::string_view text) {
    return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

// The decoded text, or "!<offset>" where decoding failed.
std::string decoded(std::string_view text) {
    const std::optional<std::size_t> size = numgap::io::base64_decoded_size(bytes(text));
    std::vector<std::byte> out(size.value_or(0));
    if (const auto failure = numgap::io::base64_decode(bytes(text), out)) return "!" + std::to_string(failure->offset);
    return std::string(reinterpret_cast<const char*>(out.data()), out.size());
}

} // namespace

TEST_SUITE("io") {
TEST_CASE("base64: RFC 4648 test vectors decode, sizes known from the text") {
    CHECK(decoded("") == "");
    CHECK(decoded("Zg==") == "f");
    CHECK(decoded("Zm8=") == "fo");
    CHECK(decoded("Zm9v") == "foo");
    CHECK(decoded("Zm9vYg==") == "foob");
    CHECK(decoded("Zm9vYmE=") == "fooba");
    CHECK(decoded("Zm9vYmFy") == "foobar");
    CHECK(decoded("+/+/") == "\xfb\xff\xbf");
    CHECK(numgap::io::base64_decoded_size(bytes("Zm9vYg==")) == 4);
    CHECK(numgap::io::base64_decoded_size(bytes("Zm9vY")) == std::nullopt);
}

TEST_CASE("base64: characters outside the alphabet and misplaced padding are refused where they are") {
    CHECK(decoded("Zm9v\nYmFy") == "!8"); // length 9: the incomplete last group is refused
    CHECK(decoded("Zm9vYm-y") == "!6");    // url-safe alphabet is not the standard one
    CHECK(decoded("Zm 9v") == "!4");
    CHECK(decoded("Zm9 ") == "!3");
    CHECK(decoded("Z===") == "!1");   // one digit cannot carry a byte
    CHECK(decoded("Zg=a") == "!2");   // '=' then a digit
    CHECK(decoded("Zg==Zm9v") == "!2"); // padding only in the last group
    CHECK(decoded("====") == "!0");
}
}
