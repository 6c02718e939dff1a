// Pins read_two_streams (numgap/kernels/source/read_two_streams.hpp), the benchmarks'
// bandwidth ceiling, on every arch this CPU runs: it reads every byte of both
// buffers, whatever their lengths and ratio (equal, 2:1, 4:1, either side
// larger, odd byte tails, empty), which shows up as the XOR of their
// little-endian 64-bit words (zero-padded tail) matching a byte-wise fold.
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/kernels/dispatch/dispatch.hpp>

namespace {
std::uint64_t fold_bytes(const std::vector<unsigned char>& bytes) {
    std::uint64_t folded = 0;
    for (std::size_t i = 0; i < bytes.size(); ++i) folded ^= std::uint64_t(bytes[i]) << (8 * (i % 8));
    return folded;
}
} // namespace

TEST_SUITE("kernels") {
TEST_CASE("read_two_streams folds every byte of both buffers on every available arch") {
    for (const auto& table : numgap::kernels::available_kernels()) {
        const std::string_view arch = table.arch_name;
        CAPTURE(arch);
        for (const auto& sizes : {std::pair<std::size_t, std::size_t>{4096, 4096}, {4096, 2048}, {4096, 1024},
                                  {1000, 4003}, {8192 + 13, 2048 + 7}, {0, 0}, {77, 0}, {0, 129}, {5, 3}}) {
            CAPTURE(sizes.first);
            CAPTURE(sizes.second);
            std::vector<unsigned char> first(sizes.first), second(sizes.second);
            std::uint32_t state = 12345;
            for (auto& b : first) b = static_cast<unsigned char>((state = state * 1664525u + 1013904223u) >> 24);
            for (auto& b : second) b = static_cast<unsigned char>((state = state * 1664525u + 1013904223u) >> 24);
            const std::uint64_t want = fold_bytes(first) ^ fold_bytes(second);
            for (const bool prefetch : {true, false}) {
                CAPTURE(prefetch);
                CHECK(table.read_two_streams(first.data(), first.size(), second.data(), second.size(), prefetch) ==
                      want);
            }
            // Flipping one byte anywhere changes the result, so none is skipped.
            if (!second.empty()) {
                second[second.size() - 1] ^= 0x40;
                for (const bool prefetch : {true, false})
                    CHECK(table.read_two_streams(first.data(), first.size(), second.data(), second.size(), prefetch) !=
                          want);
            }
        }
    }
}
} // TEST_SUITE("kernels")
