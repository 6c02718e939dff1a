// Compiled (never run) with each x86 instruction set's flags and -Werror by
// tests/CMakeLists.txt: a header-only user who builds with -mavx512f or
// -march=native and strict warnings must get none from numgap (GCC 12 reports
// its own AVX-512 intrinsics as "used uninitialized" unless numgap avoids
// them; see numgap/kernels/source/simd_lanes.hpp). Instantiates every kernel entry for the
// translation unit's native architecture: all dtype pairs of run_f32, the
// block kernels, widening, transposes and the evaluation engine.
#include <cstdint>
#include <span>
#include <vector>

#include <numgap/numgap.hpp>

int instantiate_every_kernel() {
    const numgap::kernels::kernel_table table = numgap::kernels::make_kernel_table<numgap::kernels::native_arch>();
    std::vector<float> r(4096, 1.0f);
    std::vector<std::uint8_t> q(4096, 3);
    numgap::tensor_view reference{std::span<const float>(r)};
    numgap::tensor_view target{std::span<const std::uint8_t>(q)};
    target.with_quantization(numgap::quantization::per_tensor(0.5f, 1));
    const auto result = numgap::evaluate(reference, target, numgap::cosine{}, numgap::max_abs{});
    numgap::kernels::pair_moments moments;
    table.run_f32({r.data(), numgap::dtype::float32}, {q.data(), numgap::dtype::uint8, 0.5f, 1}, r.size(), {}, moments);
    return result[0].passed && moments.count > 0 ? 0 : 1;
}
