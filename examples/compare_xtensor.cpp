// Compare xtensor data in place: an NCHW float32 reference held in an
// xt::xarray against a target stored NHWC in an xt::xtensor, seen through
// xt::transpose (a strided view: nothing is copied), and one channel of each
// through xt::view. Compiled and run by the tests; exits 0 when every metric
// passes.
#include <cmath>
#include <cstddef>
#include <cstdio>

#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include <numgap/metric.hpp>
#include <numgap/xtensor.hpp>

int main() {
    const std::size_t n = 2, c = 8, h = 16, w = 16;
    xt::xarray<float> reference = xt::zeros<float>({n, c, h, w});
    xt::xtensor<float, 4> target_nhwc = xt::zeros<float>({n, h, w, c});
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < c; ++k)
            for (std::size_t y = 0; y < h; ++y)
                for (std::size_t x = 0; x < w; ++x) {
                    const float value = std::sin(0.1f * float(i * 1000 + k * 100 + y * 10 + x));
                    reference(i, k, y, x) = value;
                    target_nhwc(i, y, x, k) = value + 1e-4f * std::cos(float(x + y)); // a small, smooth error
                }
    // NHWC storage seen in NCHW order: a strided view over target_nhwc's memory.
    auto target = xt::transpose(target_nhwc, {0, 3, 1, 2});

    numgap::metric_set metrics = numgap::metric_set::defaults();
    metrics.add_builtin("max_abs").add_builtin("snr_db");
    const numgap::evaluation whole =
        numgap::evaluate(numgap::view_of_xtensor(reference), numgap::view_of_xtensor(target), metrics);
    std::printf("whole tensor (%lld elements):\n", static_cast<long long>(whole.count));
    for (const numgap::metric_result& m : whole.metrics)
        std::printf("  %-8.*s %-12g %s\n", int(m.name.size()), m.name.data(), m.value, m.passed ? "pass" : "fail");

    // Channel 3 of both: rank-3 strided views, still no copy.
    auto reference_channel = xt::view(reference, xt::all(), 3, xt::all(), xt::all());
    auto target_channel = xt::view(target, xt::all(), 3, xt::all(), xt::all());
    const numgap::evaluation channel = numgap::evaluate(numgap::view_of_xtensor(reference_channel),
                                                        numgap::view_of_xtensor(target_channel), metrics);
    std::printf("channel 3 (%lld elements): cosine %.9f, max_abs %g\n", static_cast<long long>(channel.count),
                channel.find("cosine")->value, channel.find("max_abs")->value);
    return whole.passed() && channel.passed() ? 0 : 1;
}
