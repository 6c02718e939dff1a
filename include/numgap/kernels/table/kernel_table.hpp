#pragma once
// kernel_table: the fused kernel's entry points for one architecture, as plain
// function pointers, so the evaluation layer can pick an architecture at run
// time and tests can run every available one side by side.
// make_kernel_table<Arch>() instantiates them for Arch in the calling
// translation unit (which must be compiled with Arch's flags).
// block_f32 / block_f64 read two float arrays, runs_f32 many pairs of float32
// arrays as one stream (accumulate_runs); run_f32 reads two stored runs
// (stored_run.hpp) straight from memory, widening float16, bfloat16, float8
// e4m3fn / e5m2, the MX element formats (block-scaled float8, float6, packed
// float4), (de)quantized 8/16-bit integers and packed 4-bit integers in registers,
// per tensor, per channel or per block (block_source.hpp); precondition:
// run_pair_supported(reference.type, target.type) and both zero points
// within widens_in_registers' range.
// widen_f32 converts a contiguous run of float16 / bfloat16 / float8 / 8- and 16-bit
// integers (optionally dequantized per tensor) to float32 for the block path,
// with run_f32's in-register widening (kernel_source.hpp), except float16,
// whose vectors holding a NaN take the portable conversion so NaN payloads
// stay bit-identical (vcvtph2ps would quiet a signalling NaN; user reduction
// metrics see these blocks). float8_e5m2's NaN codes (signalling as float16
// for 0x7D / 0xFD) may come out quiet: a one-byte NaN has no payload worth
// keeping, and a per-vector NaN test would cost e5m2 its float16 speed.
// transpose_f32 is transpose_tile (transposed layouts, pair_plan.hpp) and
// read_two_streams the bandwidth ceiling of the benchmarks, both per arch.
// band_f32 reads `columns` columns of a band of band_rows rows (the vector
// width) of a transposed float32 pair straight from memory, one side row by
// row, the other column by column (band_source.hpp; which is which is told
// by the strides: entry_points.hpp's band_side), as the fused kernel's
// positions j * band_rows + c, prefetching where each side's
// prefetch_offset says the caller reads next; null, with band_rows 0, on the
// scalar path. band_square_f32 does the same sixteen columns a step, each
// row's line read by one load and transposed in registers (AVX-512 only;
// null elsewhere; accumulate_bands.hpp says when it is taken).
// block_f32_aligned_unprefetched is block_f32 without the kernel's software
// prefetch when both arrays start on a 64-byte line (the same sums, bit for
// bit; block_f32 itself otherwise): dispatch.hpp's tuned_for_this_cpu makes
// it block_f32 where the hardware prefetcher alone reads aligned streams
// faster. run_f32_unprefetched is run_f32 without it for a float32 run
// against a float16 or bfloat16 one at any alignment and for two float32
// runs both on a line (run_f32 itself for every other pair, and on the
// scalar path, which never prefetches; the same sums bit for bit), for
// dispatch.hpp's Zen 5 rule.
// Complexity: O(1). Throws: nothing.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <numgap/core/config.hpp>
#include <numgap/core/dtype.hpp>
#include <numgap/core/float8.hpp>
#include <numgap/core/half.hpp>

#include <numgap/kernels/entry_points.hpp>
#include <numgap/kernels/fused/fused_kernel.hpp>
#include <numgap/kernels/fused/kernel_options.hpp>
#include <numgap/kernels/fused/pair_moments.hpp>
#include <numgap/kernels/isa.hpp>
#include <numgap/kernels/plan/stored_run.hpp>
#include <numgap/kernels/source/aligned_block_source.hpp>
#include <numgap/kernels/source/band_source.hpp>
#include <numgap/kernels/source/block_source.hpp>
#include <numgap/kernels/source/kernel_source.hpp>
#include <numgap/kernels/source/read_two_streams.hpp>
#include <numgap/kernels/source/transpose_tile.hpp>

namespace numgap::kernels {

struct kernel_table {
    const char* arch_name = "none";
    block_function<float>* block_f32 = nullptr;
    block_function<double>* block_f64 = nullptr;
    run_f32_function* run_f32 = nullptr;
    runs_f32_function* runs_f32 = nullptr;
    widen_f32_function* widen_f32 = nullptr;
    transpose_f32_function* transpose_f32 = nullptr;
    read_two_streams_function* read_two_streams = nullptr;
    band_f32_function* band_f32 = nullptr;
    std::size_t band_rows = 0;
    band_f32_function* band_square_f32 = nullptr;
    block_function<float>* block_f32_aligned_unprefetched = nullptr;
    run_f32_function* run_f32_unprefetched = nullptr;
};

namespace detail {
template <class Arch, class T>
void block_entry(const T* reference, const T* target, std::size_t n, const kernel_options& options,
                 pair_moments& moments) noexcept {
    accumulate_pair_block(Arch{}, reference, target, n, options, moments);
}
template <class Arch, class T>
void block_entry_aligned_unprefetched(const T* reference, const T* target, std::size_t n, const kernel_options& options,
                                      pair_moments& moments) noexcept {
    const auto address = [](const T* p) { return reinterpret_cast<std::uintptr_t>(p); };
    if (((address(reference) | address(target)) & 63u) != 0)
        return accumulate_pair_block(Arch{}, reference, target, n, options, moments);
    accumulate_pair(Arch{}, pointer_source<Arch, T, false>{reference}, pointer_source<Arch, T, false>{target}, n,
                    options, moments);
}
template <class Arch>
void runs_entry(const float* const* references, const float* const* targets, const std::size_t* lengths,
                std::size_t count, const kernel_options& options, pair_moments& moments) noexcept {
    accumulate_runs(Arch{}, references, targets, lengths, count, options, moments);
}
// Calls visit(source) with the kernel source reading the n elements of `run`
// as float32. Block-quantized and packed runs whose vectors each lie in one
// block at a byte boundary take aligned_block_source (per-tensor and
// per-channel packed codes too: one block of the run's own scale), the rest
// block_source.
template <class Arch, class Visit>
void visit_stored_run(const stored_run& run, std::size_t n, Visit&& visit) noexcept {
    auto widening = [&](auto stored) {
        using Stored = decltype(stored);
        visit(widening_source<Arch, Stored>{static_cast<const Stored*>(run.data), run.scale, run.zero_point});
    };
    auto blocks = [&](auto codes) {
        using Codes = decltype(codes);
        const auto* bytes = static_cast<const std::uint8_t*>(run.data);
        if constexpr (!std::is_same_v<Arch, scalar_arch>) {
            const std::size_t nibble = packed_codes<Codes> ? run.nibble : 0;
            constexpr std::size_t width = lanes<Arch, float>::width;
            // Without block scales the run's own scale (and zero point) is its one block.
            const auto aligned =
                run.block_scales == nullptr
                    ? aligned_block_layout(&run.scale, run.zero_point != 0 ? &run.zero_point : nullptr, 0, nibble,
                                           std::uint32_t(1) << 31, n, width)
                    : aligned_block_layout(run.block_scales, run.block_zero_points, run.offset_in_row, nibble,
                                           run.block_size, n, width);
            if (aligned) {
                if constexpr (!float_codes<Codes>)
                    if (aligned->block_zero_points != nullptr)
                        return visit(aligned_block_source<Arch, Codes, true>{
                            bytes, aligned->block_scales, aligned->block_zero_points, aligned->first_position, aligned->shift});
                return visit(aligned_block_source<Arch, Codes, false>{bytes, aligned->block_scales, nullptr,
                                                                      aligned->first_position, aligned->shift});
            }
        }
        visit(block_source<Arch, Codes>{bytes, run.nibble, run.scale, run.zero_point, run.block_scales,
                                        run.block_zero_points, run.offset_in_row, run.block_size, run.divider});
    };
    switch (run.type) {
    case dtype::float32: return visit(pointer_source<Arch, float>{static_cast<const float*>(run.data)});
    case dtype::float16: return widening(float16{});
    case dtype::bfloat16: return widening(bfloat16{});
    case dtype::float8_e4m3fn: return run.block_scales ? blocks(float8_e4m3fn{}) : widening(float8_e4m3fn{});
    case dtype::float8_e5m2: return run.block_scales ? blocks(float8_e5m2{}) : widening(float8_e5m2{});
    case dtype::float4_e2m1fn: return blocks(e2m1_codes{});
    case dtype::float6_e2m3fn: return blocks(float6_e2m3fn{});
    case dtype::float6_e3m2fn: return blocks(float6_e3m2fn{});
    case dtype::int8: return run.block_scales ? blocks(std::int8_t{}) : widening(std::int8_t{});
    case dtype::uint8: return run.block_scales ? blocks(std::uint8_t{}) : widening(std::uint8_t{});
    case dtype::int4: return blocks(int4_codes{});
    case dtype::uint4: return blocks(uint4_codes{});
    case dtype::int16: return widening(std::int16_t{});
    case dtype::uint16: return widening(std::uint16_t{});
    default: NUMGAP_ASSERT(false && "run_f32 reads float32, 16-bit floats, the MX element formats and 4/8/16-bit integers only");
    }
}

// Precondition: one side has column_stride 1, the other row_stride 1.
template <class Arch, std::size_t Group>
void band_entry(const band_side& reference, const band_side& target, std::size_t columns, const kernel_options& options,
                pair_moments& moments) noexcept {
    using rows = row_band_source<Arch, Group>;
    using by_column = column_band_source<Arch, Group>;
    const std::size_t n = columns * rows::width;
    if (reference.column_stride == 1) {
        NUMGAP_ASSERT(target.row_stride == 1);
        accumulate_pair(Arch{}, rows{reference.data, reference.row_stride, reference.prefetch_offset},
                        by_column{target.data, target.column_stride, target.prefetch_offset}, n, options, moments);
    } else {
        NUMGAP_ASSERT(reference.row_stride == 1 && target.column_stride == 1);
        accumulate_pair(Arch{}, by_column{reference.data, reference.column_stride, reference.prefetch_offset},
                        rows{target.data, target.row_stride, target.prefetch_offset}, n, options, moments);
    }
}

template <class Arch>
void run_entry(const stored_run& reference, const stored_run& target, std::size_t n, const kernel_options& options,
               pair_moments& moments) noexcept {
    NUMGAP_ASSERT(run_pair_supported(reference.type, target.type));
    // One side is float32: visiting only the other keeps 61 instantiations
    // per architecture (31 sources on either side: float32, 8 widening, 9
    // block sources and 13 aligned ones, the 4 integer codes with and without
    // zero points and the 5 float codes; float32/float32 once) instead of 961
    // (run_entry_unprefetched adds 4 on vector architectures).
    if (reference.type == dtype::float32) {
        const pointer_source<Arch, float> r{static_cast<const float*>(reference.data)};
        visit_stored_run<Arch>(target, n, [&](const auto& t) { accumulate_pair(Arch{}, r, t, n, options, moments); });
    } else {
        const pointer_source<Arch, float> t{static_cast<const float*>(target.data)};
        visit_stored_run<Arch>(reference, n, [&](const auto& r) { accumulate_pair(Arch{}, r, t, n, options, moments); });
    }
}

// run_entry without the software prefetch for float32 against float16 or
// bfloat16, and for two float32 runs that both start on a 64-byte line (as
// block_entry_aligned_unprefetched: the threaded plan path reads dense
// pairs here); run_entry otherwise.
template <class Arch>
void run_entry_unprefetched(const stored_run& reference, const stored_run& target, std::size_t n,
                            const kernel_options& options, pair_moments& moments) noexcept {
    const auto sixteen_bit = [](dtype type) { return type == dtype::float16 || type == dtype::bfloat16; };
    // visit(source) with the float16 or bfloat16 run as an unprefetched source.
    const auto visit_16bit = [](const stored_run& run, auto&& visit) {
        if (run.type == dtype::float16)
            visit(widening_source<Arch, float16, false>{static_cast<const float16*>(run.data)});
        else visit(widening_source<Arch, bfloat16, false>{static_cast<const bfloat16*>(run.data)});
    };
    using float_source = pointer_source<Arch, float, false>;
    if (reference.type == dtype::float32 && sixteen_bit(target.type)) {
        const float_source r{static_cast<const float*>(reference.data)};
        visit_16bit(target, [&](const auto& t) { accumulate_pair(Arch{}, r, t, n, options, moments); });
    } else if (target.type == dtype::float32 && sixteen_bit(reference.type)) {
        const float_source t{static_cast<const float*>(target.data)};
        visit_16bit(reference, [&](const auto& r) { accumulate_pair(Arch{}, r, t, n, options, moments); });
    } else if (reference.type == dtype::float32 && target.type == dtype::float32) {
        // Its fallback off a line is run_entry's float32 pair: the same sources.
        block_entry_aligned_unprefetched<Arch, float>(static_cast<const float*>(reference.data),
                                                      static_cast<const float*>(target.data), n, options, moments);
    } else {
        run_entry<Arch>(reference, target, n, options, moments);
    }
}

template <class Arch, class Source>
void widen_typed(const Source* source, std::size_t n, bool quantized, float scale, std::int32_t zero_point,
                 float* out) noexcept {
    std::size_t i = 0;
    if constexpr (std::is_same_v<Source, float16>) {
        // Hardware conversion of whole vectors without a NaN; the rest here.
        i = isa::widen_float16_vectors(Arch{}, source, n, out);
        for (; i < n; ++i) out[i] = to_float(source[i]);
    } else {
        if (!quantized) {
            scale = 1.0f;
            zero_point = 0;
        }
        if (is_stored_float<Source> || widens_in_registers(dtype_of<Source>::value, zero_point)) {
            // The same widening the fused kernel does in registers.
            const widening_source<Arch, Source> widened{source, scale, zero_point};
            if constexpr (lanes<Arch, float>::width > 1)
                for (; i + lanes<Arch, float>::width <= n; i += lanes<Arch, float>::width)
                    widened.load(i).store_unaligned(out + i);
            for (; i < n; ++i) out[i] = widened.at(i);
        } else {
            // q - zero_point beyond 2^24 (extreme zero points): double holds
            // it exactly, so float() rounds once.
            if constexpr (std::is_integral_v<Source>)
                for (; i < n; ++i) out[i] = scale * float(double(source[i]) - double(zero_point));
        }
    }
}

// Arch only selects the translation unit (and hence the instruction set).
template <class Arch>
void widen_entry(const void* source, dtype type, std::size_t n, bool quantized, float scale,
                 std::int32_t zero_point, float* out) noexcept {
    switch (type) {
    case dtype::float16: return widen_typed<Arch>(static_cast<const float16*>(source), n, quantized, scale, zero_point, out);
    case dtype::bfloat16: return widen_typed<Arch>(static_cast<const bfloat16*>(source), n, quantized, scale, zero_point, out);
    case dtype::float8_e4m3fn: return widen_typed<Arch>(static_cast<const float8_e4m3fn*>(source), n, quantized, scale, zero_point, out);
    case dtype::float8_e5m2: return widen_typed<Arch>(static_cast<const float8_e5m2*>(source), n, quantized, scale, zero_point, out);
    case dtype::int8: return widen_typed<Arch>(static_cast<const std::int8_t*>(source), n, quantized, scale, zero_point, out);
    case dtype::uint8: return widen_typed<Arch>(static_cast<const std::uint8_t*>(source), n, quantized, scale, zero_point, out);
    case dtype::int16: return widen_typed<Arch>(static_cast<const std::int16_t*>(source), n, quantized, scale, zero_point, out);
    case dtype::uint16: return widen_typed<Arch>(static_cast<const std::uint16_t*>(source), n, quantized, scale, zero_point, out);
    default: NUMGAP_ASSERT(false && "widen_f32 handles 16-bit floats, float8 e4m3fn/e5m2 and 8/16-bit integers only");
    }
}
template <class Arch>
void transpose_entry(const float* in, std::int64_t in_stride, std::size_t rows, std::size_t cols, float* out,
                     std::int64_t out_stride) noexcept {
    transpose_tile(Arch{}, in, in_stride, rows, cols, out, out_stride);
}
template <class Arch>
std::uint64_t read_streams_entry(const void* first, std::size_t first_bytes, const void* second,
                                 std::size_t second_bytes, bool prefetch) noexcept {
    return read_two_streams(Arch{}, first, first_bytes, second, second_bytes, prefetch);
}
// The scalar path has no band: one lane would be one row.
template <class Arch>
constexpr band_f32_function* band_entry_of() noexcept {
    if constexpr (std::is_same_v<Arch, scalar_arch>) return nullptr;
    else return &band_entry<Arch, 4>;
}
template <class Arch>
constexpr band_f32_function* band_square_entry_of() noexcept {
    if constexpr (std::is_same_v<Arch, scalar_arch>) return nullptr;
    else if constexpr (lanes<Arch, float>::width != 16) return nullptr;
    else return &band_entry<Arch, 16>;
}
// The scalar path never prefetches: its run_f32 serves as is.
template <class Arch>
constexpr run_f32_function* run_unprefetched_entry_of() noexcept {
    if constexpr (std::is_same_v<Arch, scalar_arch>) return &run_entry<Arch>;
    else return &run_entry_unprefetched<Arch>;
}
template <class Arch>
constexpr std::size_t band_rows_of() noexcept {
    return std::is_same_v<Arch, scalar_arch> ? 0 : lanes<Arch, float>::width;
}
} // namespace detail

template <class Arch>
kernel_table make_kernel_table() noexcept {
    return {Arch::name(),
            &detail::block_entry<Arch, float>,
            &detail::block_entry<Arch, double>,
            &detail::run_entry<Arch>,
            &detail::runs_entry<Arch>,
            &detail::widen_entry<Arch>,
            &detail::transpose_entry<Arch>,
            &detail::read_streams_entry<Arch>,
            detail::band_entry_of<Arch>(),
            detail::band_rows_of<Arch>(),
            detail::band_square_entry_of<Arch>(),
            &detail::block_entry_aligned_unprefetched<Arch, float>,
            detail::run_unprefetched_entry_of<Arch>()};
}

} // namespace numgap::kernels
