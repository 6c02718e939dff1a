// See eigen_metrics.hpp.
#include "eigen_metrics.hpp"

#include <Eigen/Core>

namespace numgap_benchmark {

eigen_values eigen_metrics(const float* reference, const float* target, std::size_t n) {
    const Eigen::Map<const Eigen::VectorXf> r(reference, Eigen::Index(n)), t(target, Eigen::Index(n));
    const double cosine = double(r.dot(t)) / (double(r.norm()) * double(t.norm()));
    const auto abs_difference = (r - t).cwiseAbs();
    const double atol = double(abs_difference.mean());
    const double max_abs = double(abs_difference.maxCoeff());
    const double mse = double((r - t).squaredNorm()) / double(n);
    return {cosine, atol, mse, max_abs};
}

} // namespace numgap_benchmark
