// What a user writes after find_package(numgap) / add_subdirectory(numgap).
#include <cstdio>
#include <span>
#include <vector>

#include <numgap/numgap.hpp>

int main() {
    const std::vector<float> reference{1.0f, 2.0f, 3.0f, 4.0f};
    const std::vector<float> target{1.0f, 2.0f, 3.0f, 4.5f};
    const numgap::evaluation result =
        numgap::evaluate(numgap::tensor_view(std::span<const float>(reference)),
                         numgap::tensor_view(std::span<const float>(target)),
                         numgap::metric_set::defaults());
    for (const numgap::metric_result& metric : result.metrics)
        std::printf("%.*s %.9g %s\n", int(metric.name.size()), metric.name.data(), metric.value,
                    metric.passed ? "pass" : "fail");
#if defined(NUMGAP_RUNTIME_DISPATCH) && NUMGAP_RUNTIME_DISPATCH
    // Linked with numgap::dispatch: the kernels were chosen for this CPU.
    std::printf("kernels: %s (run-time dispatch)\n", numgap::kernels::active_kernels().arch_name);
#else
    std::printf("kernels: %s\n", numgap::kernels::active_kernels().arch_name);
#endif
    return 0;
}
