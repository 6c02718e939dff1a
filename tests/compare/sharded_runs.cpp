// Pins compare_runs and dump_failing_pairs on run directories whose target
// stores a tensor as graph.json "shards" (in process, so the sanitizer build
// covers the whole path): every built-in, row metrics included (split along
// rows), equals the comparison with the unsplit target, and the dump of a
// failing sharded tensor is the whole tensor.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <numgap/compare/compare_runs.hpp>
#include <numgap/compare/dump_failing_pairs.hpp>
#include <numgap/compare/run_graph.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/run_directory.hpp>
#include <numgap/metric.hpp>

#include "../io/temp_directory.hpp"

namespace {

constexpr std::int64_t rows = 64, width = 300;

std::vector<float> values(float noise) {
    std::vector<float> out(std::size_t(rows * width));
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = std::sin(float(i) * 0.37f) * 3.0f + noise * std::cos(float(i) * 1.91f);
    return out;
}

void write_rows(const std::filesystem::path& file, const std::vector<float>& all, std::int64_t begin, std::int64_t end) {
    numgap::io::write_npy(file, numgap::tensor_view(all.data() + begin * width, {end - begin, width}));
}

numgap::metric_set every_builtin() {
    numgap::metric_set set;
    // mse < 1e-12 fails, so the dump has something to write.
    for (const std::string_view name : numgap::builtin_metric_names())
        set.add_builtin(name, name == "mse" ? numgap::parse_pass_rule("< 1e-12") : std::nullopt);
    return set;
}

} // namespace

TEST_SUITE("compare") {
TEST_CASE("compare_runs: a target stored as row shards gives the unsplit target's metrics; the dump is whole") {
    numgap_test::temp_directory reference_run, whole_run, sharded_run, dumps;
    const std::vector<float> reference = values(0.0f), target = values(0.01f);
    write_rows(reference_run / "w.npy", reference, 0, rows);
    write_rows(whole_run / "w.npy", target, 0, rows);
    write_rows(sharded_run / "w.0.npy", target, 0, 20);
    write_rows(sharded_run / "w.1.npy", target, 20, 23);
    write_rows(sharded_run / "w.2.npy", target, 23, rows);
    sharded_run.write("graph.json", R"({"nodes": [{"name": "w"}], "tensors": {"w": {"shards": [
        {"file": "w.2.npy", "axis": 0, "offset": 23}, {"file": "w.0.npy", "axis": 0, "offset": 0},
        {"file": "w.1.npy", "axis": 0, "offset": 20}]}}})");
    const auto open = [](const numgap_test::temp_directory& run) { return numgap::io::run_directory::open(run.path()); };
    const numgap::io::run_directory reference_dir = open(reference_run), whole_dir = open(whole_run),
                                    sharded_dir = open(sharded_run);
    const numgap::metric_set set = every_builtin();
    const auto graph = numgap::run_graph(reference_dir);
    const numgap::comparison_report whole =
        numgap::compare_runs(graph, numgap::run_graph(whole_dir), reference_dir, whole_dir, set);
    const numgap::comparison_report sharded =
        numgap::compare_runs(graph, numgap::run_graph(sharded_dir), reference_dir, sharded_dir, set);
    REQUIRE(sharded.groups.size() == 1);
    const numgap::group_report& row = sharded.groups.front();
    INFO(row.message);
    CHECK(row.status == numgap::group_status::fail);
    CHECK(row.shape == std::vector<std::int64_t>{rows, width});
    CHECK(row.message.find("target stored as 3 shards along axis 0") != std::string::npos);
    REQUIRE(row.metrics.size() == whole.groups.front().metrics.size());
    for (std::size_t i = 0; i < row.metrics.size(); ++i) {
        const double a = row.metrics[i].value, b = whole.groups.front().metrics[i].value;
        CAPTURE(i);
        CHECK(std::fabs(a - b) <= 2e-7 * std::max(std::fabs(a), std::fabs(b)));
    }

    CHECK(numgap::dump_failing_pairs(sharded, reference_dir, sharded_dir, dumps.path()) == 1);
    const numgap::io::run_directory dumped = numgap::io::run_directory::open(dumps.path());
    const numgap::io::loaded_tensor written = dumped.load("000_w.target");
    REQUIRE(written.view().size() == rows * width);
    const float* data = static_cast<const float*>(written.view().data());
    bool same = true;
    for (std::size_t i = 0; i < target.size(); ++i) same = same && data[i] == target[i];
    CHECK(same);
}
}
