// Compares a float32 reference tensor with two targets a deployment might
// produce -- a float16 copy and a uint8-quantized copy stored NHWC -- and
// prints every built-in metric, its pass rule and verdict, plus the per-side
// statistics. Run it without arguments.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <numgap/core.hpp>
#include <numgap/metric.hpp>

namespace {

void print(const char* title, const numgap::evaluation& result) {
    std::printf("\n%s  (%lld elements)\n", title, static_cast<long long>(result.count));
    std::printf("  %-10s %16s  %-10s %s\n", "metric", "value", "rule", "verdict");
    for (const numgap::metric_result& metric : result.metrics) {
        const std::string rule = metric.rule ? numgap::to_string(*metric.rule) : "-";
        std::printf("  %-10.*s %16.9g  %-10s %s\n", int(metric.name.size()), metric.name.data(), metric.value,
                    rule.c_str(), metric.passed ? "pass" : "FAIL");
    }
    auto side = [](const char* label, const numgap::side_stats& s) {
        std::printf("  %-9s min %.4g  max %.4g  mean %.4g  std %.4g  NaN %lld  +Inf %lld  -Inf %lld\n", label, s.min,
                    s.max, s.mean, s.std, static_cast<long long>(s.nan_count),
                    static_cast<long long>(s.positive_inf_count), static_cast<long long>(s.negative_inf_count));
    };
    side("reference", result.reference);
    side("target", result.target);
    std::printf("  overall: %s\n", result.passed() ? "pass" : "FAIL");
}

} // namespace

int main() {
    // A small NCHW activation: 1 x 8 x 16 x 16, smooth values in [-3, 3].
    const std::int64_t channels = 8, height = 16, width = 16;
    std::vector<float> reference(std::size_t(channels * height * width));
    for (std::size_t i = 0; i < reference.size(); ++i) reference[i] = 3.0f * float(std::sin(0.37 * double(i)));
    const numgap::tensor_view reference_view =
        numgap::tensor_view(reference.data(), {1, channels, height, width}).with_name("conv1.out");

    // Target 1: the same tensor in float16.
    std::vector<numgap::float16> half(reference.size());
    for (std::size_t i = 0; i < half.size(); ++i) half[i] = numgap::to_float16(reference[i]);
    const numgap::tensor_view half_view =
        numgap::tensor_view(half.data(), numgap::dtype::float16, {1, channels, height, width}).with_name("conv1.fp16");

    // Target 2: uint8 with scale 6/255, zero point 128, stored NHWC as an NPU would.
    const float scale = 6.0f / 255.0f;
    const std::int32_t zero_point = 128;
    std::vector<std::uint8_t> quantized(reference.size());
    for (std::int64_t c = 0; c < channels; ++c)
        for (std::int64_t y = 0; y < height; ++y)
            for (std::int64_t x = 0; x < width; ++x) {
                const float value = reference[std::size_t((c * height + y) * width + x)];
                const long q = std::lround(value / scale) + zero_point;
                quantized[std::size_t((y * width + x) * channels + c)] = std::uint8_t(q < 0 ? 0 : q > 255 ? 255 : q);
            }
    numgap::tensor_view quantized_view(quantized.data(), {1, height, width, channels});
    quantized_view.with_axis_order({0, 2, 3, 1}) // stored NHWC, compared as NCHW
        .with_quantization(numgap::quantization::per_tensor(scale, zero_point))
        .with_name("conv1.npu_u8");

    numgap::metric_set metrics;
    for (const std::string_view name : numgap::builtin_metric_names()) metrics.add_builtin(name);

    // Per-side min and max are opt-in (four more vector operations per step).
    numgap::evaluate_options options;
    options.side_min_max = true;
    print("float32 reference vs float16 target", numgap::evaluate(reference_view, half_view, metrics, options));
    print("float32 reference vs uint8 NHWC target", numgap::evaluate(reference_view, quantized_view, metrics, options));
    return 0;
}
