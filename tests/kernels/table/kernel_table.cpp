// Pins kernel_table (numgap/kernels/table/kernel_table.hpp): widen_f32, on every arch this
// CPU runs, converts bit-exactly like the portable conversions, for every
// float16 / bfloat16 bit pattern, every float8 code and every 8- and 16-bit integer, with and
// without per-tensor dequantization; active_kernels is the best arch's table as tuned
// for this CPU; the prefetch-free entries give their twins' sums bit for bit.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/core/float8.hpp>
#include <numgap/core/half.hpp>
#include <numgap/kernels/dispatch/dispatch.hpp>

namespace {
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The next of a fixed sequence of values k / 128, k in [-1000, 1000].
float next_value(std::uint32_t& state) {
    state = state * 1664525u + 1013904223u;
    return float(std::int32_t(state >> 8) % 2001 - 1000) / 128.0f;
}

// The first element of `values` that starts a 64-byte line (values must hold
// at least 16 floats).
const float* first_on_line(const std::vector<float>& values) {
    const std::size_t floats_past_line = reinterpret_cast<std::uintptr_t>(values.data()) % 64 / sizeof(float);
    return values.data() + (16 - floats_past_line) % 16;
}

// Each tier of kernel work the prefetch-free entries must match bit for bit.
constexpr unsigned every_feature_tier[] = {
    numgap::kernels::kernel_feature::moments, numgap::kernels::kernel_feature::side_counts,
    numgap::kernels::kernel_feature::side_statistics, numgap::kernels::kernel_feature::side_min_max,
    numgap::kernels::kernel_feature::closeness | numgap::kernels::kernel_feature::side_counts};
} // namespace

TEST_SUITE("kernels") {
TEST_CASE("widen_f32 matches the portable conversions bit for bit on every available arch") {
    const std::size_t n = 65536 + 3; // every 16-bit pattern plus a ragged tail
    std::vector<std::uint16_t> bits(n);
    for (std::size_t i = 0; i < n; ++i) bits[i] = std::uint16_t(i);
    std::vector<float> want(n), got(n);
    for (const auto& table : numgap::kernels::available_kernels()) {
        const std::string_view arch = table.arch_name;
        CAPTURE(arch);
        for (std::size_t i = 0; i < n; ++i) want[i] = numgap::to_float(numgap::float16{bits[i]});
        table.widen_f32(bits.data(), numgap::dtype::float16, n, false, 1.0f, 0, got.data());
        CHECK(same_bits(got, want)); // NaN payloads included
        for (std::size_t i = 0; i < n; ++i) want[i] = numgap::to_float(numgap::bfloat16{bits[i]});
        table.widen_f32(bits.data(), numgap::dtype::bfloat16, n, false, 1.0f, 0, got.data());
        CHECK(same_bits(got, want));
        for (std::size_t i = 0; i < n; ++i) want[i] = 0.37f * float(std::int32_t(std::int16_t(bits[i])) - 11);
        table.widen_f32(bits.data(), numgap::dtype::int16, n, true, 0.37f, 11, got.data());
        CHECK(same_bits(got, want));
        for (std::size_t i = 0; i < n; ++i) want[i] = float(bits[i]);
        table.widen_f32(bits.data(), numgap::dtype::uint16, n, false, 1.0f, 0, got.data());
        CHECK(same_bits(got, want));
        std::vector<std::uint8_t> bytes(259);
        for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = std::uint8_t(i);
        std::vector<float> want8(bytes.size()), got8(bytes.size());
        for (std::size_t i = 0; i < bytes.size(); ++i) want8[i] = 0.02f * float(std::int32_t(bytes[i]) - 128);
        table.widen_f32(bytes.data(), numgap::dtype::uint8, bytes.size(), true, 0.02f, 128, got8.data());
        CHECK(same_bits(got8, want8));
        for (std::size_t i = 0; i < bytes.size(); ++i) want8[i] = float(std::int8_t(bytes[i]));
        table.widen_f32(bytes.data(), numgap::dtype::int8, bytes.size(), false, 1.0f, 0, got8.data());
        CHECK(same_bits(got8, want8));
    }
}

TEST_CASE("widen_f32 decodes every float8 code like to_float on every available arch") {
    // Four rounds of all 256 codes at shifting offsets plus a ragged tail,
    // so every code meets every lane of every vector width.
    std::vector<std::uint8_t> codes(4 * 256 + 4 + 7);
    for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = std::uint8_t(i * (1 + 2 * (i / 256)));
    std::vector<float> want(codes.size()), got(codes.size());
    for (const auto& table : numgap::kernels::available_kernels()) {
        const std::string_view arch = table.arch_name;
        CAPTURE(arch);
        for (std::size_t i = 0; i < codes.size(); ++i) want[i] = numgap::to_float(numgap::float8_e4m3fn{codes[i]});
        table.widen_f32(codes.data(), numgap::dtype::float8_e4m3fn, codes.size(), false, 1.0f, 0, got.data());
        CHECK(same_bits(got, want)); // its NaN code included: the SIMD forms build to_float's NaN
        for (std::size_t i = 0; i < codes.size(); ++i) want[i] = numgap::to_float(numgap::float8_e5m2{codes[i]});
        table.widen_f32(codes.data(), numgap::dtype::float8_e5m2, codes.size(), false, 1.0f, 0, got.data());
        for (std::size_t i = 0; i < codes.size(); ++i) {
            CAPTURE(int(codes[i]));
            // e5m2 NaNs may come out quiet (vcvtph2ps), as float16's in run_f32.
            if (std::isnan(want[i])) CHECK(std::isnan(got[i]));
            else CHECK(std::bit_cast<std::uint32_t>(got[i]) == std::bit_cast<std::uint32_t>(want[i]));
        }
    }
}

TEST_CASE("widen_f32 float16 keeps finite lanes exact when NaNs share their vector, on every available arch") {
    // The hardware float16 conversion hands vectors that hold a NaN to the
    // portable conversion; NaNs at offsets that are not a multiple of any
    // vector width must not disturb their neighbours or the tail.
    const std::size_t n = 1000;
    std::vector<std::uint16_t> bits(n);
    for (std::size_t i = 0; i < n; ++i)
        bits[i] = i % 37 == 5 ? std::uint16_t(0x7c01u + i) : i % 53 == 7 ? std::uint16_t(0xfe00u) : std::uint16_t(0x3000u + 17 * i);
    std::vector<float> want(n), got(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = numgap::to_float(numgap::float16{bits[i]});
    for (const auto& table : numgap::kernels::available_kernels()) {
        const std::string_view arch = table.arch_name;
        CAPTURE(arch);
        for (const std::size_t offset : {std::size_t(0), std::size_t(1), std::size_t(7)}) {
            CAPTURE(offset);
            std::vector<float> expected(want.begin() + std::ptrdiff_t(offset), want.end());
            std::vector<float> converted(n - offset);
            table.widen_f32(bits.data() + offset, numgap::dtype::float16, n - offset, false, 1.0f, 0, converted.data());
            CHECK(same_bits(converted, expected));
        }
    }
}

TEST_CASE("cpu_family decodes CPUID leaf 1 signatures") {
    using numgap::kernels::detail::cpu_family;
    CHECK(cpu_family(0x00A10F11u) == 25); // AMD EPYC Genoa (Zen 4)
    CHECK(cpu_family(0x00A00F11u) == 25); // AMD EPYC Milan (Zen 3)
    CHECK(cpu_family(0x00B00F21u) == 26); // AMD EPYC Turin (Zen 5)
    CHECK(cpu_family(0x00800F12u) == 23); // AMD Zen 1
    CHECK(cpu_family(0x000806F8u) == 6);  // Intel Sapphire Rapids
    CHECK(cpu_family(0x00050654u) == 6);  // Intel Skylake-SP
}

TEST_CASE("active_kernels is the best arch's table, tiles transposed by AVX2 and no square band kernel where 512-bit "
          "shuffles are split, aligned float32 and 16-bit float pairs unprefetched on Zen 5") {
    const numgap::kernels::kernel_table active = numgap::kernels::active_kernels();
    const std::vector<numgap::kernels::kernel_table> tables = numgap::kernels::available_kernels();
    // The active arch's own table: the last listed by that name (dispatched
    // tables follow the header-instantiated native one).
    const numgap::kernels::kernel_table* own = nullptr;
    for (const auto& table : tables)
        if (std::string_view(table.arch_name) == active.arch_name) own = &table;
    REQUIRE(own != nullptr);
    const numgap::kernels::kernel_table& best = *own;
#if defined(NUMGAP_RUNTIME_DISPATCH) && NUMGAP_RUNTIME_DISPATCH
    const bool unprefetched = numgap::kernels::detail::cpu_prefers_unprefetched_streams();
#else
    const bool unprefetched = false; // header-only builds are never tuned
#endif
    CAPTURE(unprefetched);
    const bool swapped = unprefetched && std::string_view(best.arch_name) == "avx512bw";
    CHECK((active.block_f32 == (swapped ? best.block_f32_aligned_unprefetched : best.block_f32)));
    CHECK((active.block_f32_aligned_unprefetched == best.block_f32_aligned_unprefetched));
    CHECK((active.run_f32 == (swapped ? best.run_f32_unprefetched : best.run_f32)));
    CHECK((active.run_f32_unprefetched == best.run_f32_unprefetched));
#if defined(NUMGAP_RUNTIME_DISPATCH) && NUMGAP_RUNTIME_DISPATCH && defined(__x86_64__)
    const bool split =
        std::string_view(best.arch_name) == "avx512bw" && numgap::kernels::detail::cpu_splits_512_bit_operations();
    const numgap::kernels::kernel_table* avx2 = nullptr;
    for (const auto& table : tables)
        if (std::string_view(table.arch_name) == "fma3+avx2") avx2 = &table;
    CAPTURE(split);
    if (split && avx2 != nullptr) {
        CHECK((active.transpose_f32 == avx2->transpose_f32));
        CHECK((active.band_square_f32 == nullptr)); // the same 16x16 transpose, in the band walk
    } else {
        CHECK((active.transpose_f32 == best.transpose_f32));
        CHECK((active.band_square_f32 == best.band_square_f32));
    }
#else
    CHECK((active.transpose_f32 == best.transpose_f32));
    CHECK((active.band_square_f32 == best.band_square_f32));
#endif
    CHECK((active.band_f32 == best.band_f32));
    // The square band kernel exists exactly where a vector holds 16 floats (AVX-512).
    for (const auto& table : tables) {
        CAPTURE(std::string_view(table.arch_name));
        CHECK((table.band_square_f32 != nullptr) == (table.band_rows == 16));
    }
}

TEST_CASE("block_f32_aligned_unprefetched gives block_f32's sums bit for bit on every available arch") {
    // A prefetch is only a hint: the two entries differ in nothing else, so
    // every moment must agree exactly, over chunk tails, misaligned starts
    // (which take block_f32 itself) and non-finite values.
    std::vector<float> storage(2 * 70000 + 64);
    std::uint32_t state = 7;
    for (float& x : storage) x = next_value(state);
    storage[5003] = std::numeric_limits<float>::quiet_NaN();
    storage[70000 + 9001] = std::numeric_limits<float>::infinity();
    const float* aligned = first_on_line(storage);
    REQUIRE(reinterpret_cast<std::uintptr_t>(aligned) % 64 == 0);
    for (const auto& table : numgap::kernels::available_kernels()) {
        CAPTURE(std::string_view(table.arch_name));
        REQUIRE((table.block_f32_aligned_unprefetched != nullptr));
        for (const std::size_t n : {std::size_t(1), std::size_t(15), std::size_t(16), std::size_t(17),
                                    std::size_t(2047), std::size_t(2048), std::size_t(4099), std::size_t(70000)}) {
            for (const int shift : {0, 1, 4, 16}) {
                CAPTURE(n);
                CAPTURE(shift);
                const float* reference = aligned + shift;
                const float* target = aligned + 70000 + 16 * (shift == 16 ? 1 : 0);
                for (const unsigned features : every_feature_tier) {
                    numgap::kernels::pair_moments want, got;
                    table.block_f32(reference, target, n, {features, 1e-8, 1e-5}, want);
                    table.block_f32_aligned_unprefetched(reference, target, n, {features, 1e-8, 1e-5}, got);
                    CHECK(std::memcmp(&want, &got, sizeof(want)) == 0);
                }
            }
        }
    }
}
TEST_CASE("run_f32_unprefetched gives run_f32's sums bit for bit on every available arch") {
    // float32 against float16 / bfloat16 in either order and two float32 runs
    // on 64-byte lines (read unprefetched), and pairs it hands to run_f32 as
    // they are (float32 off a line, float8, 8-bit integers), over chunk
    // tails, misaligned starts, NaN and Inf.
    constexpr std::size_t most = 70000;
    std::vector<float> floats(most + 160);
    std::vector<numgap::float16> halves(floats.size());
    std::vector<numgap::bfloat16> brains(floats.size());
    std::vector<std::uint8_t> bytes(floats.size());
    std::uint32_t state = 11;
    for (std::size_t i = 0; i < floats.size(); ++i) {
        floats[i] = next_value(state);
        halves[i] = numgap::to_float16(floats[i] * 0.999f);
        brains[i] = numgap::to_bfloat16(floats[i] * 1.001f);
        bytes[i] = std::uint8_t(state >> 24);
    }
    floats[5003] = std::numeric_limits<float>::quiet_NaN();
    halves[9001] = numgap::to_float16(std::numeric_limits<float>::infinity());
    brains[777] = numgap::to_bfloat16(-std::numeric_limits<float>::infinity());
    using numgap::dtype;
    using numgap::kernels::stored_run;
    const float* on_line = first_on_line(floats);
    REQUIRE(reinterpret_cast<std::uintptr_t>(on_line) % 64 == 0);
    for (const auto& table : numgap::kernels::available_kernels()) {
        CAPTURE(std::string_view(table.arch_name));
        REQUIRE((table.run_f32_unprefetched != nullptr));
        for (const std::size_t n :
             {std::size_t(1), std::size_t(15), std::size_t(17), std::size_t(2048), std::size_t(4099), most}) {
            for (const std::size_t shift : {std::size_t(0), std::size_t(3)}) {
                CAPTURE(n);
                CAPTURE(shift);
                const stored_run f32{floats.data() + shift, dtype::float32};
                const stored_run pairs[][2] = {
                    {f32, {halves.data() + 1, dtype::float16}},
                    {{brains.data() + shift, dtype::bfloat16}, {floats.data() + 2, dtype::float32}},
                    {{halves.data(), dtype::float16}, f32},
                    {f32, {brains.data(), dtype::bfloat16}},
                    {f32, {floats.data() + 5, dtype::float32}},
                    {{on_line + 16 * shift, dtype::float32}, {on_line + 64, dtype::float32}},
                    {f32, {bytes.data() + shift, dtype::uint8, 0.25f, 3}},
                    {f32, {bytes.data(), dtype::float8_e4m3fn}},
                };
                for (const auto& pair : pairs) {
                    CAPTURE(int(pair[0].type));
                    CAPTURE(int(pair[1].type));
                    for (const unsigned features : every_feature_tier) {
                        numgap::kernels::pair_moments want, got;
                        table.run_f32(pair[0], pair[1], n, {features, 1e-8, 1e-5}, want);
                        table.run_f32_unprefetched(pair[0], pair[1], n, {features, 1e-8, 1e-5}, got);
                        CHECK(std::memcmp(&want, &got, sizeof(want)) == 0);
                    }
                }
            }
        }
    }
}
} // TEST_SUITE("kernels")
