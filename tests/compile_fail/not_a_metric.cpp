// Must NOT compile: `almost_a_metric` names itself and a direction but has no
// default_rule and no way to compute a value. The build output must contain
// numgap's static_assert sentence "This type is not a numgap metric".
#include <numgap/metric.hpp>

struct almost_a_metric {
    static constexpr std::string_view name = "almost";
    static constexpr numgap::direction better = numgap::direction::lower_is_better;
};

int main() {
    numgap::metric_set metrics;
    metrics.add(almost_a_metric{});
    return int(metrics.size());
}
