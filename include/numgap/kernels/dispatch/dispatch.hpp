#pragma once
// Run-time selection of the fused kernel's architecture.
//
// Header-only use (default): active_kernels() returns the kernels for
// native_arch, i.e. whatever the user's compiler flags enable (-march=...).
// CMake users link numgap::dispatch (cmake/numgapDispatch.cmake), which does
// all of the following. Programs that compile the per-architecture
// translation units include/numgap/kernels/dispatch/{sse2,avx2,avx512bw}.cpp
// (x86) or dispatch/neon64.cpp (ARM), each with its architecture's flags, and
// define NUMGAP_RUNTIME_DISPATCH=1 in every translation unit, get the best
// kernel for the CPU they run on, chosen once through xsimd::dispatch over
// dispatch_archs.
// Flags per file (GCC/clang): sse2.cpp: none beyond the x86-64 baseline;
// avx2.cpp: -mavx2 -mfma -mf16c; avx512bw.cpp: -mavx512f -mavx512cd
// -mavx512dq -mavx512bw -mavx2 -mfma; neon64.cpp: none on aarch64.
// (-mf16c enables the hardware float16 conversion on the AVX2 path; without
// it that path still works, with the portable conversion. Every AVX2 CPU has
// F16C; the AVX2 kernels are chosen only where the CPU reports both.)
// Define NUMGAP_RUNTIME_DISPATCH consistently across a program: the two modes
// give active_kernels() different bodies.
// Complexity: O(1) after the first call. Throws: nothing (available_kernels
// may throw std::bad_alloc).
#include <string_view>
#include <type_traits>
#include <vector>

#include <xsimd/xsimd.hpp>

#include <numgap/kernels/table/kernel_table.hpp>
#include <numgap/kernels/scalar_arch.hpp>

namespace numgap::kernels {

// Never defined generically: each dispatch/*.cpp translation unit defines the
// explicit specialization for its architecture (NUMGAP_DEFINE_ARCH_KERNELS in
// dispatch_arch.hpp), so no other translation unit ever compiles code for an
// architecture its flags do not enable.
template <class Arch>
struct arch_kernels {
    static kernel_table table() noexcept;
};

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
using dispatch_archs = xsimd::arch_list<xsimd::avx512bw, xsimd::fma3<xsimd::avx2>, xsimd::sse2>;
template <> kernel_table arch_kernels<xsimd::avx512bw>::table() noexcept;
template <> kernel_table arch_kernels<xsimd::fma3<xsimd::avx2>>::table() noexcept;
template <> kernel_table arch_kernels<xsimd::sse2>::table() noexcept;
#elif defined(__aarch64__)
using dispatch_archs = xsimd::arch_list<xsimd::neon64>;
template <> kernel_table arch_kernels<xsimd::neon64>::table() noexcept;
#else
using dispatch_archs = xsimd::arch_list<>;
#endif

namespace detail {
struct pick_kernels {
    template <class Arch>
    kernel_table operator()(Arch) const noexcept {
        return arch_kernels<Arch>::table();
    }
};

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define NUMGAP_HAS_CPUID 1
// The four registers CPUID returns for `leaf` (subleaf 0).
struct cpuid_registers {
    unsigned eax, ebx, ecx, edx;
};
inline cpuid_registers cpuid(unsigned leaf) noexcept {
    cpuid_registers r{};
    __asm__("cpuid" : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx) : "a"(leaf), "c"(0));
    return r;
}
#endif

// CPUID leaf 1, ECX bit 29 (xsimd 8.1 does not report F16C).
inline bool cpu_has_f16c() noexcept {
#if defined(NUMGAP_HAS_CPUID)
    return (cpuid(1).ecx >> 29) & 1u;
#else
    return true;
#endif
}

// The family CPUID leaf 1 reports in EAX: the base family, plus the
// extended family when the base is 0xF (AMD since K8; Intel reports 6).
constexpr unsigned cpu_family(unsigned leaf1_eax) noexcept {
    const unsigned base = (leaf1_eax >> 8) & 0xFu, extended = (leaf1_eax >> 20) & 0xFFu;
    return base == 0xFu ? base + extended : base;
}

// The CPUID family of an AMD CPU; 0 for any other vendor, or without
// GCC/clang-style inline assembly.
inline unsigned amd_cpu_family() noexcept {
#if defined(NUMGAP_HAS_CPUID)
    const cpuid_registers vendor = cpuid(0);
    const bool amd =
        vendor.ebx == 0x68747541u && vendor.edx == 0x69746e65u && vendor.ecx == 0x444d4163u; // "AuthenticAMD"
    return amd ? cpu_family(cpuid(1).eax) : 0;
#else
    return 0;
#endif
}

// Whether a CPU with AVX-512 executes its 512-bit operations as two 256-bit
// halves: AMD family 25 (of which only Zen 4 has AVX-512; Zen 3 does not, so
// the answer means nothing without AVX-512). Zen 5 desktop and server parts
// (family 26) and Intel's run them whole; Zen 5 mobile parts split them too
// but are not told apart here (they keep the AVX-512 transpose). Without
// GCC/clang-style inline assembly the answer is false.
inline bool cpu_splits_512_bit_operations() noexcept { return amd_cpu_family() == 25; }

// Whether the fused kernel reads faster without its software prefetch two
// 64-byte-aligned float32 arrays, and a float32 array against a float16 or
// bfloat16 one at any alignment: AMD family 26 (Zen 5). Measured there
// (EPYC, AVX-512). float32 pairs (survey program, alternated builds): 45.7
// -> 56.1 GB/s at 2^22 elements, 40.0 -> 45.2 at 2^24, 36.5 -> 40.3 at
// 2^26 (a plain read loop without prefetch: 80, 47, 42), nothing lost at
// 2^16 and 2^20; arrays 16 bytes off a line (std::vector's large blocks)
// read faster with it when the same pair is read over and over (36.0 vs
// 32.3 GB/s at 2^26), so it stays for them. float16 / bfloat16 targets (one
// program, both forms in turn): from memory (caches flushed before each
// call) 6-15% faster without it at every size from 2^16 to 2^24, aligned
// or not (2^26, read over and over: 34.8 -> 38.3 GB/s); only a pair read
// over and over from L2/L3 (2^18 - 2^21 elements) was 2-9% faster with it.
// float8 e4m3fn targets read 5-10% faster with it and 8-bit integers within
// +-5%, so they keep it. The prefetch came from Intel measurements on
// unaligned buffers; these are unmeasured there and on Zen 4, which keep it.
inline bool cpu_prefers_unprefetched_streams() noexcept { return amd_cpu_family() == 26; }
#undef NUMGAP_HAS_CPUID // only for cpu_has_f16c and amd_cpu_family above

template <class Arch>
bool cpu_supports() noexcept {
    const auto available = xsimd::available_architectures();
    if constexpr (std::is_same_v<Arch, xsimd::avx512bw>)
        return available.avx512bw && available.avx512dq && available.avx512cd && available.avx512f;
    else if constexpr (std::is_same_v<Arch, xsimd::fma3<xsimd::avx2>>)
        return available.fma3_avx2 && cpu_has_f16c();
    else if constexpr (std::is_same_v<Arch, xsimd::sse2>)
        return available.sse2;
    else if constexpr (std::is_same_v<Arch, xsimd::neon64>)
        return available.neon64;
    else
        return false;
}

#if defined(NUMGAP_RUNTIME_DISPATCH) && NUMGAP_RUNTIME_DISPATCH &&                                                     \
    (defined(__x86_64__) || defined(_M_X64) || defined(__i386__))
// The dispatched kernels, with two measured exceptions. On Zen 5 the AVX-512
// kernel skips its software prefetch for aligned float32 pairs and for
// float32 against float16 / bfloat16 (above; measured with that kernel
// only; the threaded plan path reads through run_f32 too). Where 512-bit
// shuffles are split in two (Zen 4), the tiles of transposed pairs (NHWC
// against NCHW) are transposed in AVX2's 8x8 blocks, single operations there,
// rather than AVX-512's 16x16 (64 split shuffles per 256 elements):
// evaluate() on an NHWC pair 1.4x faster at 2^16 and 2^20 and 1.16x at 2^26
// on Zen 4 (README, "Which kernel dispatch picks"). The fused loop stays
// AVX-512 (1.1-1.2x AVX2 in cache there). For the same reason the band walk
// keeps its four-column kernel there (the square one is that same 16x16
// transpose, measured faster on Zen 5 only).
inline kernel_table tuned_for_this_cpu(kernel_table table) noexcept {
    if (std::string_view(table.arch_name) == xsimd::avx512bw::name() && cpu_splits_512_bit_operations() &&
        cpu_supports<xsimd::fma3<xsimd::avx2>>()) {
        table.transpose_f32 = arch_kernels<xsimd::fma3<xsimd::avx2>>::table().transpose_f32;
        table.band_square_f32 = nullptr;
    }
    if (std::string_view(table.arch_name) == xsimd::avx512bw::name() && cpu_prefers_unprefetched_streams()) {
        table.block_f32 = table.block_f32_aligned_unprefetched;
        table.run_f32 = table.run_f32_unprefetched;
    }
    return table;
}
#else
inline kernel_table tuned_for_this_cpu(kernel_table table) noexcept { return table; }
#endif

template <class... Archs>
void append_supported(xsimd::arch_list<Archs...>, std::vector<kernel_table>& tables) {
    ((cpu_supports<Archs>() ? tables.push_back(arch_kernels<Archs>::table()) : void()), ...);
}
} // namespace detail

// The kernels evaluate() uses: the best architecture's (tuned_for_this_cpu).
// One table, made on first use and returned by reference: a call reads a
// few of its pointers and has no need of a copy.
inline const kernel_table& active_kernels() noexcept {
#if defined(NUMGAP_RUNTIME_DISPATCH) && NUMGAP_RUNTIME_DISPATCH
    static const kernel_table table =
        detail::tuned_for_this_cpu(xsimd::dispatch<dispatch_archs>(detail::pick_kernels{})());
#else
    static const kernel_table table = make_kernel_table<native_arch>();
#endif
    return table;
}

// Every kernel this program can run on this CPU: the scalar fallback, the
// header-instantiated native_arch, and (with run-time dispatch) each dispatch
// architecture the CPU supports. Tests run all of them against the oracle.
inline std::vector<kernel_table> available_kernels() {
    std::vector<kernel_table> tables{make_kernel_table<scalar_arch>()};
    if constexpr (!std::is_same_v<native_arch, scalar_arch>) tables.push_back(make_kernel_table<native_arch>());
#if defined(NUMGAP_RUNTIME_DISPATCH) && NUMGAP_RUNTIME_DISPATCH
    detail::append_supported(dispatch_archs{}, tables);
#endif
    return tables;
}

} // namespace numgap::kernels
