// The README's embedding example, compiled and run by the tests as written.
#include <cstdio>
#include <span>
#include <vector>

#include <numgap/numgap.hpp>

int main() {
    const std::vector<float> reference{0.5f, -1.25f, 2.0f, 3.5f, -0.75f, 1.0f};
    const std::vector<float> target{0.5f, -1.25f, 2.0f, 3.4f, -0.75f, 1.1f};

    numgap::metric_set metrics = numgap::metric_set::defaults(); // cosine, atol, mse
    metrics.add_builtin("snr_db").add(numgap::topk{.k = 2});
    const numgap::evaluation result =
        numgap::evaluate(numgap::tensor_view(std::span<const float>(reference)),
                         numgap::tensor_view(std::span<const float>(target)), metrics);
    for (const numgap::metric_result& m : result.metrics)
        std::printf("%-8.*s %-12g %s\n", int(m.name.size()), m.name.data(), m.value, m.passed ? "pass" : "fail");
    return result.passed() ? 0 : 1;
}
