// The demo's model and quantizer (demo_model.hpp).
#include "demo_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include <numgap/core/half.hpp>

namespace numgap_cli {

std::vector<float> random_values(std::mt19937& generator, std::size_t count, float low, float high) {
    std::uniform_real_distribution<float> distribution(low, high);
    std::vector<float> values(count);
    for (float& value : values) value = distribution(generator);
    return values;
}

tensor convolution3x3(const tensor& input, const std::vector<float>& weights, const std::vector<float>& bias) {
    const std::int64_t channels = input.shape[1], height = input.shape[2], width = input.shape[3];
    const std::int64_t outputs = std::int64_t(bias.size());
    tensor output{std::vector<float>(std::size_t(outputs * height * width)), {1, outputs, height, width}};
    for (std::int64_t o = 0; o < outputs; ++o)
        for (std::int64_t y = 0; y < height; ++y)
            for (std::int64_t x = 0; x < width; ++x) {
                float sum = bias[std::size_t(o)];
                for (std::int64_t c = 0; c < channels; ++c)
                    for (std::int64_t dy = -1; dy <= 1; ++dy)
                        for (std::int64_t dx = -1; dx <= 1; ++dx) {
                            const std::int64_t sy = y + dy, sx = x + dx;
                            if (sy < 0 || sy >= height || sx < 0 || sx >= width) continue;
                            sum += weights[std::size_t(((o * channels + c) * 3 + dy + 1) * 3 + dx + 1)] *
                                   input.values[std::size_t((c * height + sy) * width + sx)];
                        }
                output.values[std::size_t((o * height + y) * width + x)] = sum;
            }
    return output;
}

tensor group_norm(const tensor& input, std::int64_t groups, float epsilon) {
    tensor output = input;
    const std::int64_t channels = input.shape[1];
    const std::int64_t per_group = channels / groups * input.shape[2] * input.shape[3];
    for (std::int64_t g = 0; g < groups; ++g) {
        double sum = 0, sum_squares = 0;
        for (std::int64_t i = 0; i < per_group; ++i) {
            const double value = input.values[std::size_t(g * per_group + i)];
            sum += value;
            sum_squares += value * value;
        }
        const double mean = sum / double(per_group);
        const double variance = std::max(0.0, sum_squares / double(per_group) - mean * mean);
        const double inverse = 1.0 / std::sqrt(variance + epsilon);
        for (std::int64_t i = 0; i < per_group; ++i) {
            float& value = output.values[std::size_t(g * per_group + i)];
            value = float((value - mean) * inverse);
        }
    }
    return output;
}

tensor relu(tensor input) {
    for (float& value : input.values) value = std::max(value, 0.0f);
    return input;
}

tensor global_average_pool(const tensor& input) {
    const std::int64_t channels = input.shape[1], area = input.shape[2] * input.shape[3];
    tensor output{std::vector<float>(std::size_t(channels)), {1, channels}};
    for (std::int64_t c = 0; c < channels; ++c) {
        double sum = 0;
        for (std::int64_t i = 0; i < area; ++i) sum += input.values[std::size_t(c * area + i)];
        output.values[std::size_t(c)] = float(sum / double(area));
    }
    return output;
}

tensor linear(const tensor& input, const std::vector<float>& weights, const std::vector<float>& bias) {
    const std::size_t inputs = input.values.size(), outputs = bias.size();
    tensor output{std::vector<float>(outputs), {1, std::int64_t(outputs)}};
    for (std::size_t o = 0; o < outputs; ++o) {
        float sum = bias[o];
        for (std::size_t i = 0; i < inputs; ++i) sum += weights[o * inputs + i] * input.values[i];
        output.values[o] = sum;
    }
    return output;
}

tensor softmax(tensor input) {
    const float largest = *std::max_element(input.values.begin(), input.values.end());
    double total = 0;
    for (float& value : input.values) total += (value = std::exp(value - largest));
    for (float& value : input.values) value = float(value / total);
    return input;
}

stored_tensor store(const tensor& value, storage kind) {
    stored_tensor stored{value, kind, {}, 1, 0, {}};
    if (kind == storage::float16) {
        for (float& v : stored.dequantized.values) {
            const numgap::float16 half = numgap::to_float16(v);
            v = numgap::to_float(half);
            stored.bytes.push_back(std::uint8_t(half.bits & 0xff));
            stored.bytes.push_back(std::uint8_t(half.bits >> 8));
        }
    } else if (kind == storage::uint8_per_tensor) {
        const auto [low_it, high_it] = std::minmax_element(value.values.begin(), value.values.end());
        const float low = std::min(*low_it, 0.0f), high = std::max(*high_it, 0.0f);
        stored.scale = std::max(high - low, 1e-6f) / 255.0f;
        stored.zero_point = std::int32_t(std::lround(-low / stored.scale));
        for (float& v : stored.dequantized.values) {
            const long q = std::clamp(std::lround(v / stored.scale) + stored.zero_point, 0L, 255L);
            stored.bytes.push_back(std::uint8_t(q));
            v = stored.scale * float(q - stored.zero_point);
        }
    } else if (kind == storage::int8_per_channel_nhwc_raw) {
        const std::int64_t channels = value.shape[1], area = value.shape[2] * value.shape[3];
        stored.channel_scales.resize(std::size_t(channels));
        for (std::int64_t c = 0; c < channels; ++c) {
            float largest = 1e-6f;
            for (std::int64_t i = 0; i < area; ++i)
                largest = std::max(largest, std::abs(value.values[std::size_t(c * area + i)]));
            stored.channel_scales[std::size_t(c)] = largest / 127.0f;
        }
        stored.bytes.resize(value.values.size());
        for (std::int64_t c = 0; c < channels; ++c)
            for (std::int64_t i = 0; i < area; ++i) {
                const float scale = stored.channel_scales[std::size_t(c)];
                float& v = stored.dequantized.values[std::size_t(c * area + i)];
                const long q = std::clamp(std::lround(v / scale), -127L, 127L);
                stored.bytes[std::size_t(i * channels + c)] = std::uint8_t(std::int8_t(q)); // NHWC
                v = scale * float(q);
            }
    } else {
        const auto* raw = reinterpret_cast<const std::uint8_t*>(value.values.data());
        stored.bytes.assign(raw, raw + value.values.size() * sizeof(float));
    }
    return stored;
}

} // namespace numgap_cli
