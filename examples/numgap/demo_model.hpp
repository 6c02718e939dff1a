#pragma once
// The demo's model and quantizer: a small convolutional network computed in
// plain loops (NCHW, batch 1), and what a target backend stores for each
// tensor (float16, uint8 per tensor, int8 per channel in NHWC raw bytes)
// together with what it reads back, so the target run carries realistic
// quantization error on top of one injected fault (group_norm with 1 group).
#include <cstdint>
#include <random>
#include <vector>

namespace numgap_cli {

struct tensor {
    std::vector<float> values;
    std::vector<std::int64_t> shape; // NCHW, batch 1
};

std::vector<float> random_values(std::mt19937& generator, std::size_t count, float low, float high);
tensor convolution3x3(const tensor& input, const std::vector<float>& weights, const std::vector<float>& bias);
// Group normalisation; `groups` == 1 is the injected fault (statistics over
// the whole tensor, as when a converter drops the num_groups attribute).
tensor group_norm(const tensor& input, std::int64_t groups, float epsilon);
tensor relu(tensor input);
tensor global_average_pool(const tensor& input);
tensor linear(const tensor& input, const std::vector<float>& weights, const std::vector<float>& bias);
tensor softmax(tensor input);

// What the target backend stores for one tensor, and what it reads back.
enum class storage { float32, float16, uint8_per_tensor, int8_per_channel_nhwc_raw };

struct stored_tensor {
    tensor dequantized; // what the next target op consumes
    storage kind;
    std::vector<std::uint8_t> bytes;
    float scale = 1;
    std::int32_t zero_point = 0;
    std::vector<float> channel_scales;
};

stored_tensor store(const tensor& value, storage kind);

} // namespace numgap_cli
