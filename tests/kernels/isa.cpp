// Pins the per-instruction-set operations (numgap/kernels/isa.hpp) of this
// translation unit's architecture (native_arch) against their portable forms
// in isa/generic.hpp, called with the xsimd::generic tag: widening every
// stored type (extremes, zero points, scales) bit for bit, the transpose block,
// the four columns of load_columns (and the portable form's own),
// float16 conversion keeping a signalling NaN's payload, and multiply-add,
// max, min and sum of a vector against exact per-lane results (not against
// xsimd::max / min / hadd: on AVX-512 those trip GCC 12's -Wmaybe-uninitialized
// false positive, see isa/x86_avx512.hpp). Also checks that overload resolution picks the
// family's form (block widths, register counts). The dispatch units' AVX2 and
// AVX-512 forms are pinned through their kernel tables (tests/kernels/fused,
// tests/kernels/table, tests/kernels/source).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include <numgap/core/float8.hpp>
#include <numgap/core/half.hpp>
#include <numgap/kernels/isa.hpp>
#include <numgap/kernels/scalar_arch.hpp>

namespace {

using numgap::kernels::native_arch;
namespace isa = numgap::kernels::detail::isa;
constexpr bool has_simd = !std::is_same_v<native_arch, numgap::kernels::scalar_arch>;

template <class Stored>
Stored from_bits(std::uint16_t bits) {
    Stored value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

// Every stored value a vector of `width` can hold, cycled: extremes first.
template <class Stored>
std::vector<Stored> sample_values(std::size_t count) {
    std::vector<Stored> values(count);
    for (std::size_t k = 0; k < count; ++k) {
        if constexpr (std::is_same_v<Stored, numgap::float8_e4m3fn> || std::is_same_v<Stored, numgap::float8_e5m2>) {
            // Codes 37 apart cover every code over 256 samples, NaN included
            // for e4m3fn (its widening builds to_float's NaN exactly); e5m2's
            // NaN codes go through vcvtph2ps, which may quiet them, so they
            // become their Inf (the same exponent field).
            std::uint8_t code = std::uint8_t(k * 37u);
            if (std::is_same_v<Stored, numgap::float8_e5m2> && (code & 0x7c) == 0x7c) code &= 0xfc;
            values[k] = Stored{code};
        } else if constexpr (std::is_same_v<Stored, numgap::float16> || std::is_same_v<Stored, numgap::bfloat16>) {
            // Finite patterns of both signs, subnormals and infinities; no NaN
            // (vcvtph2ps may quiet it, which kernel_source.hpp allows).
            static constexpr std::uint16_t float16_bits[] = {0x0000, 0x8000, 0x0001, 0x83ff, 0x3c00, 0xc000, 0x7bff, 0xfbff,
                                                             0x7c00, 0xfc00, 0x3555, 0x0400, 0x1234, 0xabcd, 0x5a5a, 0x2001};
            static constexpr std::uint16_t bfloat16_bits[] = {0x0000, 0x8000, 0x0001, 0x807f, 0x3f80, 0xc000, 0x7f7f, 0xff7f,
                                                              0x7f80, 0xff80, 0x3eab, 0x0080, 0x1234, 0xabcd, 0x5a5a, 0x4049};
            values[k] = from_bits<Stored>(std::is_same_v<Stored, numgap::float16> ? float16_bits[k % 16] : bfloat16_bits[k % 16]);
        } else {
            const std::int64_t lowest = std::numeric_limits<Stored>::lowest(), highest = std::numeric_limits<Stored>::max();
            const std::int64_t span = highest - lowest + 1;
            values[k] = Stored(lowest + std::int64_t((k * 7919u + (k % 3 == 0 ? 0u : span - 1)) % std::uint64_t(span)));
        }
    }
    return values;
}

template <class Stored>
void check_widening(float scale, std::int32_t zero_point) {
    using batch = xsimd::batch<float, native_arch>;
    constexpr std::size_t width = batch::size;
    const std::vector<Stored> stored = sample_values<Stored>(sizeof(Stored) == 1 ? 256 + width : 4 * width);
    for (std::size_t offset = 0; offset + width <= stored.size(); offset += width / 2 + 1) {
        alignas(64) float specific[width], portable[width];
        isa::widen_to_float32<native_arch>(native_arch{}, stored.data() + offset, scale, zero_point).store_aligned(specific);
        isa::widen_to_float32<native_arch>(xsimd::generic{}, stored.data() + offset, scale, zero_point).store_aligned(portable);
        for (std::size_t k = 0; k < width; ++k) {
            CAPTURE(offset + k);
            CHECK(std::bit_cast<std::uint32_t>(specific[k]) == std::bit_cast<std::uint32_t>(portable[k]));
            CHECK(std::bit_cast<std::uint32_t>(portable[k]) ==
                  std::bit_cast<std::uint32_t>(isa::widen_one(stored[offset + k], scale, zero_point)));
        }
    }
}

} // namespace

TEST_SUITE("kernels") {
TEST_CASE("isa: the family's overloads are the ones chosen for native_arch") {
    if constexpr (std::is_base_of_v<xsimd::avx512f, native_arch>) {
        CHECK(isa::transpose_block_width(native_arch{}) == 16);
        CHECK(isa::vector_registers(native_arch{}) == 32);
    } else if constexpr (std::is_base_of_v<xsimd::avx, native_arch>) {
        CHECK(isa::transpose_block_width(native_arch{}) == 8);
        CHECK(isa::vector_registers(native_arch{}) == 16);
    } else if constexpr (std::is_base_of_v<xsimd::sse2, native_arch>) {
        CHECK(isa::transpose_block_width(native_arch{}) == 4);
        CHECK(isa::vector_registers(native_arch{}) == 16);
    } else {
        CHECK(isa::transpose_block_width(native_arch{}) == 1);
    }
    CHECK(isa::transpose_block_width(numgap::kernels::scalar_arch{}) == 1);
    CHECK(isa::transpose_block_width(xsimd::generic{}) == 1);
}

TEST_CASE("isa: widen_to_float32 equals the portable widening bit for bit for every stored type") {
    if constexpr (has_simd) {
        check_widening<numgap::float16>(1.0f, 0);
        check_widening<numgap::bfloat16>(1.0f, 0);
        check_widening<numgap::float8_e4m3fn>(1.0f, 0);
        check_widening<numgap::float8_e5m2>(1.0f, 0);
        // Not a structured binding: clang 14 refuses one captured by CAPTURE's lambda.
        for (const auto& parameters : {std::pair<float, std::int32_t>{1.0f, 0}, {0.0371f, 128}, {3.5e-3f, -77},
                                       {1.0e30f, 1 << 24}, {-2.5f, -(1 << 24)}}) {
            const float scale = parameters.first;
            const std::int32_t zero_point = parameters.second;
            CAPTURE(scale);
            CAPTURE(zero_point);
            check_widening<std::int8_t>(scale, zero_point);
            check_widening<std::uint8_t>(scale, zero_point);
            check_widening<std::int16_t>(scale, zero_point);
            check_widening<std::uint16_t>(scale, zero_point);
        }
    }
}

TEST_CASE("isa: transpose_block moves a whole block exactly") {
    if constexpr (has_simd) {
        constexpr std::size_t width = isa::transpose_block_width(native_arch{});
        if constexpr (width > 1) {
            const std::int64_t in_stride = std::int64_t(width) + 3, out_stride = std::int64_t(width) + 5;
            std::vector<float> in(width * std::size_t(in_stride)), out(width * std::size_t(out_stride), -1.0f);
            for (std::size_t k = 0; k < in.size(); ++k) in[k] = std::bit_cast<float>(std::uint32_t(0x7f800001u + k)); // NaN payloads
            isa::transpose_block(native_arch{}, in.data(), in_stride, out.data(), out_stride);
            for (std::size_t i = 0; i < width; ++i)
                for (std::size_t j = 0; j < width; ++j)
                    CHECK(std::bit_cast<std::uint32_t>(out[j * std::size_t(out_stride) + i]) ==
                          std::bit_cast<std::uint32_t>(in[i * std::size_t(in_stride) + j]));
            CHECK(out[width] == -1.0f); // the padding between rows is untouched
        }
    }
}

TEST_CASE("isa: load_columns gives four columns of a band of rows exactly, for any row stride") {
    if constexpr (has_simd) {
        using batch = xsimd::batch<float, native_arch>;
        constexpr std::size_t width = batch::size;
        for (const std::int64_t row_stride : {std::int64_t(4), std::int64_t(37), std::int64_t(-37)}) {
            CAPTURE(row_stride);
            const std::int64_t span = std::int64_t(width) * (row_stride < 0 ? -row_stride : row_stride) + 8;
            std::vector<float> storage(static_cast<std::size_t>(span));
            for (std::size_t k = 0; k < storage.size(); ++k)
                storage[k] = std::bit_cast<float>(std::uint32_t(0x7f800001u + k)); // NaN payloads
            const float* first = storage.data() + (row_stride < 0 ? span - 8 : 0);
            batch columns[4], portable[4];
            isa::load_columns(native_arch{}, first, row_stride, columns);
            isa::load_columns(xsimd::generic{}, first, row_stride, portable);
            for (std::size_t k = 0; k < 4; ++k) {
                alignas(64) float lanes[width], portable_lanes[width];
                columns[k].store_aligned(lanes);
                portable[k].store_aligned(portable_lanes);
                for (std::size_t c = 0; c < width; ++c) {
                    CAPTURE(k);
                    CAPTURE(c);
                    const std::uint32_t expected =
                        std::bit_cast<std::uint32_t>(first[std::int64_t(c) * row_stride + std::int64_t(k)]);
                    CHECK(std::bit_cast<std::uint32_t>(lanes[c]) == expected);
                    CHECK(std::bit_cast<std::uint32_t>(portable_lanes[c]) == expected);
                }
            }
        }
    }
}

TEST_CASE("isa: widen_float16_vectors converts whole vectors and keeps a signalling NaN's payload") {
    std::vector<numgap::float16> halves(70);
    for (std::size_t k = 0; k < halves.size(); ++k) halves[k] = from_bits<numgap::float16>(std::uint16_t(0x3c00 + 17 * k));
    halves[20] = from_bits<numgap::float16>(0x7d01); // signalling NaN
    std::vector<float> out(halves.size(), 0.0f);
    const std::size_t converted = isa::widen_float16_vectors(native_arch{}, halves.data(), halves.size(), out.data());
    CHECK(converted <= halves.size());
    CHECK(isa::widen_float16_vectors(xsimd::generic{}, halves.data(), halves.size(), out.data()) == 0);
    if constexpr (std::is_base_of_v<xsimd::avx512f, native_arch>)
        CHECK(converted == 64);
#if defined(__F16C__)
    if constexpr (std::is_base_of_v<xsimd::avx, native_arch> && !std::is_base_of_v<xsimd::avx512f, native_arch>)
        CHECK(converted == 64);
#endif
    for (std::size_t k = 0; k < converted; ++k) {
        CAPTURE(k);
        CHECK(std::bit_cast<std::uint32_t>(out[k]) == std::bit_cast<std::uint32_t>(numgap::to_float(halves[k])));
    }
}

TEST_CASE("isa: multiply_add, lane_max, lane_min and reduce_sum give the exact per-lane results") {
    if constexpr (has_simd) {
        for (const bool wide : {false, true}) {
            auto run = [&](auto zero) {
                using T = decltype(zero);
                using batch = xsimd::batch<T, native_arch>;
                alignas(64) T a_values[batch::size], b_values[batch::size], c_values[batch::size];
                for (std::size_t k = 0; k < batch::size; ++k) {
                    a_values[k] = T(0.5) + T(k) * T(0.25);
                    b_values[k] = T(3) - T(k);
                    c_values[k] = T(k % 3) - T(1);
                }
                const batch a = batch::load_aligned(a_values), b = batch::load_aligned(b_values), c = batch::load_aligned(c_values);
                alignas(64) T fused[batch::size], largest[batch::size], smallest[batch::size];
                isa::multiply_add(native_arch{}, a, b, c).store_aligned(fused);
                isa::lane_max(native_arch{}, a, b).store_aligned(largest);
                isa::lane_min(native_arch{}, a, b).store_aligned(smallest);
                for (std::size_t k = 0; k < batch::size; ++k) {
                    CAPTURE(k);
                    CHECK(fused[k] == a_values[k] * b_values[k] + c_values[k]); // exact: quarters times small integers
                    CHECK(largest[k] == (a_values[k] > b_values[k] ? a_values[k] : b_values[k]));
                    CHECK(smallest[k] == (a_values[k] < b_values[k] ? a_values[k] : b_values[k]));
                }
                CHECK(xsimd::all(isa::multiply_add(native_arch{}, a, b, c) == isa::multiply_add(xsimd::generic{}, a, b, c)));
                // Exact in any order: small integers and quarters.
                CHECK(isa::reduce_sum(native_arch{}, a) ==
                      double(batch::size) * 0.5 + 0.25 * double(batch::size * (batch::size - 1)) / 2);
                CHECK(isa::reduce_sum(native_arch{}, b) == double(3 * batch::size) - double(batch::size * (batch::size - 1)) / 2);
            };
            if (wide) run(double{});
            else run(float{});
        }
    }
}
}
