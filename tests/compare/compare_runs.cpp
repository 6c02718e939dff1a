// Pins down compare_runs on in-memory sources: statuses per group (pass, fail,
// missing, error, unmatched) without one bad group stopping the others, the
// three tensor-source shapes, thread-count independence, the progress
// callback contract, and the analysis wired to real metric values.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <unistd.h>

#include <numgap/compare/compare_runs.hpp>
#include <numgap/core/error.hpp>
#include <numgap/graph/basic_graph.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/run_directory.hpp>
#include <numgap/io/truncation_guard.hpp>
#include <numgap/match/match_by_name.hpp>
#include <numgap/metric/metric_set.hpp>
#include <numgap/report/json.hpp>

#include "../io/resident_memory.hpp"
#include "../io/safetensors_builder.hpp"
#include "../io/temp_directory.hpp"
#include "chain_graph.hpp"
#include "keyed_source.hpp"

namespace {
// x -> a -> b -> c, with one tensor per node named like the node.
constexpr auto& chain = numgap_test::chain_graph;

struct run_data {
    std::map<std::string, std::vector<float>> values;
    std::map<std::string, numgap::tensor_view> views() const {
        std::map<std::string, numgap::tensor_view> result;
        for (const auto& [key, data] : values)
            result.emplace(key, numgap::tensor_view(data.data(), {std::int64_t(data.size())}));
        return result;
    }
};

run_data sample(float sign_of_b = 1.0f, float sign_of_c = 1.0f) {
    run_data run;
    run.values["x"] = {1, 2, 3, 4};
    run.values["a"] = {0.5f, -1, 2, 0.25f};
    run.values["b"] = {3 * sign_of_b, -2 * sign_of_b, 1 * sign_of_b, 5 * sign_of_b};
    run.values["c"] = {1 * sign_of_c, 1 * sign_of_c, -1 * sign_of_c, 2 * sign_of_c};
    return run;
}

using numgap_test::keyed_source;

numgap::group_report row(const numgap::comparison_report& report, const std::string& node) {
    for (const auto& group : report.groups)
        if (!group.reference_nodes.empty() && group.reference_nodes.back() == node) return group;
    FAIL("no row for " << node);
    return report.groups.front();
}

static_assert(numgap::tensor_source<std::map<std::string, numgap::tensor_view>>);
static_assert(numgap::tensor_source<const std::map<std::string, numgap::tensor_view>>);
static_assert(numgap::tensor_source<keyed_source>);
static_assert(!numgap::tensor_source<int>);
} // namespace

TEST_SUITE("compare") {
TEST_CASE("compare_runs: identical runs pass every default metric on every group") {
    const auto graph = chain({"x", "a", "b", "c"});
    const run_data data = sample();
    const auto views = data.views();
    const auto report = numgap::compare_runs(graph, graph, views, views, numgap::metric_set::defaults());
    CHECK(report.metric_names == std::vector<std::string>{"cosine", "atol", "mse"});
    REQUIRE(report.groups.size() == 4);
    for (const auto& group : report.groups) {
        CHECK(group.status == numgap::group_status::pass);
        CHECK(group.metrics.size() == 3);
        CHECK(group.count == 4);
        CHECK(group.dtype_reference == numgap::dtype::float32);
        CHECK(group.shape == std::vector<std::int64_t>{4});
        CHECK(group.strategy == "name");
        CHECK(group.kind == numgap::match_kind::one_to_one);
    }
    CHECK(row(report, "a").op == "op_a");
    CHECK(row(report, "b").find_metric("cosine")->value == doctest::Approx(1.0));
    CHECK(row(report, "b").find_metric("cosine")->rule == numgap::pass_rule{numgap::comparison::ge, 0.99});
    CHECK(report.all_passed());
    CHECK(report.reference_graph.size() == 4);
    CHECK(report.reference_graph[2].producers == std::vector<std::size_t>{1});
}

TEST_CASE("compare_runs: a flipped tensor fails, its consumer is propagated, the analysis names it") {
    const auto graph = chain({"x", "a", "b", "c"});
    const run_data reference = sample(), target = sample(-1.0f, -1.0f);
    const auto reference_views = reference.views(), target_views = target.views();
    const auto report =
        numgap::compare_runs(graph, graph, reference_views, target_views, numgap::metric_set::defaults());
    CHECK(row(report, "a").status == numgap::group_status::pass);
    CHECK(row(report, "b").status == numgap::group_status::fail);
    CHECK(row(report, "b").find_metric("cosine")->value == doctest::Approx(-1.0));
    CHECK_FALSE(row(report, "b").find_metric("cosine")->passed);
    CHECK(row(report, "c").status == numgap::group_status::fail);
    CHECK(report.summary.first_divergence == "b");
    CHECK(report.summary.origins == std::vector<std::string>{"b"});
}

TEST_CASE("compare_runs: a tensor missing from one side is 'missing' and the rest still compares") {
    const auto graph = chain({"x", "a", "b", "c"});
    const run_data data = sample();
    const auto reference_views = data.views();
    auto target_views = data.views();
    target_views.erase("b");
    const auto report =
        numgap::compare_runs(graph, graph, reference_views, target_views, numgap::metric_set::defaults());
    CHECK(row(report, "b").status == numgap::group_status::missing);
    CHECK(row(report, "b").message == "target tensor 'b' was not dumped");
    CHECK(row(report, "c").status == numgap::group_status::pass);
    CHECK(report.summary.missing == 1);
    CHECK(report.all_passed());
}

TEST_CASE("compare_runs: a shape mismatch is 'error' with a message naming the tensor; others continue") {
    const auto graph = chain({"x", "a", "b", "c"});
    const run_data reference = sample();
    run_data target = sample();
    target.values["a"] = {1, 2, 3};
    const auto reference_views = reference.views(), target_views = target.views();
    const auto report =
        numgap::compare_runs(graph, graph, reference_views, target_views, numgap::metric_set::defaults());
    const auto& bad = row(report, "a");
    CHECK(bad.status == numgap::group_status::error);
    CHECK(bad.message.find("'a'") != std::string::npos);
    CHECK(bad.metrics.empty());
    CHECK(row(report, "b").status == numgap::group_status::pass);
    CHECK(report.summary.errors == 1);
    CHECK_FALSE(report.all_passed());
}

TEST_CASE("compare_runs: a source that throws while loading gives 'error' for that group only") {
    const auto graph = chain({"x", "a", "b", "c"});
    const run_data data = sample();
    const auto views = data.views();
    auto throwing = [&](const std::string& key) -> std::optional<numgap::tensor_view> {
        if (key == "c") throw numgap::error("c.npy: truncated: header says 16 bytes, file has 8");
        if (key == "x") throw std::runtime_error("mmap failed");
        return views.at(key);
    };
    const auto report = numgap::compare_runs(graph, graph, views, throwing, numgap::metric_set::defaults());
    CHECK(row(report, "c").status == numgap::group_status::error);
    CHECK(row(report, "c").message == "c.npy: truncated: header says 16 bytes, file has 8");
    CHECK(row(report, "x").status == numgap::group_status::error);
    CHECK(row(report, "x").message == "mmap failed");
    CHECK(row(report, "a").status == numgap::group_status::pass);
}

TEST_CASE("compare_runs: a source throwing a non-std exception gives 'error' for that group, any thread count") {
    // An int thrown from a worker thread used to reach std::terminate, and from
    // the calling thread to skip joining the pool; both must be an error row.
    const auto graph = chain({"x", "a", "b", "c"});
    const run_data data = sample();
    const auto views = data.views();
    auto throwing = [&](const std::string& key) -> std::optional<numgap::tensor_view> {
        if (key == "b") throw 42;
        return views.at(key);
    };
    for (std::size_t threads : {1u, 3u}) {
        CAPTURE(threads);
        numgap::compare_options options;
        options.threads = threads;
        const auto report = numgap::compare_runs(graph, graph, views, throwing, numgap::metric_set::defaults(),
                                                 {}, options);
        CHECK(row(report, "b").status == numgap::group_status::error);
        CHECK(row(report, "b").message == "unknown exception (not derived from std::exception)");
        CHECK(row(report, "b").metrics.empty());
        CHECK(row(report, "x").status == numgap::group_status::pass);
        CHECK(row(report, "a").status == numgap::group_status::pass);
        CHECK(row(report, "c").status == numgap::group_status::pass);
        CHECK(report.summary.errors == 1);
    }
}

TEST_CASE("compare_runs: keyed sources are loaded once per group and the result does not depend on threads") {
    std::vector<std::string> names;
    for (int i = 0; i < 40; ++i) names.push_back("n" + std::to_string(i));
    const auto graph = chain(names);
    std::vector<std::vector<float>> reference_data, target_data;
    keyed_source reference, target;
    for (int i = 0; i < 40; ++i) {
        reference_data.push_back({float(i), 1, 2, 3, float(-i)});
        target_data.push_back({float(i), 1, 2, 3 + (i % 7 == 3 ? 5.0f : 0.0f), float(-i)});
    }
    for (int i = 0; i < 40; ++i) {
        reference.views.emplace(names[i], numgap::tensor_view(reference_data[i].data(), {5}));
        target.views.emplace(names[i], numgap::tensor_view(target_data[i].data(), {5}));
    }
    std::string first_json;
    for (std::size_t threads : {1u, 2u, 7u}) {
        CAPTURE(threads);
        numgap::compare_options options;
        options.threads = threads;
        reference.loads = 0;
        const auto report = numgap::compare_runs(graph, graph, reference, target,
                                                 numgap::metric_set::defaults(), {}, options);
        CHECK(reference.loads == 40);
        const std::string json = numgap::to_json(report);
        if (first_json.empty())
            first_json = json;
        else
            CHECK(json == first_json);
        CHECK(report.summary.failed > 0);
        CHECK(report.summary.first_divergence == "n3");
    }
}

TEST_CASE("compare_runs: progress is reported once per group, serialised, ending at the total") {
    const auto graph = chain({"x", "a", "b", "c"});
    const run_data data = sample();
    const auto views = data.views();
    numgap::compare_options options;
    options.threads = 3;
    std::vector<std::size_t> seen;
    std::size_t reported_total = 0;
    options.progress = [&](std::size_t done, std::size_t total) {
        seen.push_back(done); // no lock: the contract says calls never overlap
        reported_total = total;
    };
    numgap::compare_runs(graph, graph, views, views, numgap::metric_set::defaults(), {}, options);
    CHECK(seen == std::vector<std::size_t>{1, 2, 3, 4});
    CHECK(reported_total == 4);
}

TEST_CASE("compare_runs: bytes_compared adds both tensors' data bytes of every compared group") {
    const auto graph = chain({"x", "a", "b", "c", "d"}); // d has no tensor: missing, not counted
    const run_data data = sample();
    const auto views = data.views();
    for (std::size_t threads : {1, 3}) {
        numgap::compare_options options;
        options.threads = threads;
        std::atomic<std::uint64_t> bytes{0};
        options.bytes_compared = &bytes;
        const auto report = numgap::compare_runs(graph, graph, views, views, numgap::metric_set::defaults(), {}, options);
        CHECK(row(report, "d").status == numgap::group_status::missing);
        CHECK(bytes.load() == 4 * (4 + 4) * 4); // four groups of four float32 elements, both sides
    }
}

TEST_CASE("compare_runs: an exception from the progress callback stops the run and is rethrown") {
    const auto graph = chain({"x", "a", "b", "c"});
    const run_data data = sample();
    const auto views = data.views();
    numgap::compare_options options;
    options.threads = 2;
    options.progress = [](std::size_t done, std::size_t) {
        if (done == 2) throw std::runtime_error("cancelled by user");
    };
    CHECK_THROWS_WITH(numgap::compare_runs(graph, graph, views, views, numgap::metric_set::defaults(), {}, options),
                      "cancelled by user");
}

TEST_CASE("compare_runs: unmatched nodes of either side become 'unmatched' rows and are counted") {
    const auto reference_graph = chain({"x", "a", "b", "extra_ref"});
    const auto target_graph = chain({"x", "a", "b", "extra_target"});
    const run_data data = sample();
    const auto views = data.views();
    const auto matches = numgap::match_by_name(reference_graph, target_graph);
    const auto report = numgap::compare_runs(reference_graph, target_graph, matches, views, views,
                                             numgap::metric_set::defaults());
    CHECK(report.summary.groups == 3);
    CHECK(report.summary.unmatched_reference == 1);
    CHECK(report.summary.unmatched_target == 1);
    CHECK(row(report, "extra_ref").status == numgap::group_status::unmatched);
    // An unmatched row has no pairing, so no confidence in one; matched rows keep theirs.
    CHECK_FALSE(row(report, "extra_ref").confidence.has_value());
    CHECK(row(report, "a").confidence == 1.0);
    bool found_target = false;
    for (const auto& group : report.groups)
        if (group.target_nodes == std::vector<std::string>{"extra_target"}) {
            found_target = true;
            CHECK(group.status == numgap::group_status::unmatched);
            CHECK(group.reference_nodes.empty());
            CHECK_FALSE(group.confidence.has_value());
        }
    CHECK(found_target);
}

TEST_CASE("compare_runs: nodes without output tensors are 'missing'; repeated names are made unique") {
    numgap::basic_graph graph;
    graph.add_node("dup", "op");
    graph.add_node("dup", "op", {0});
    const std::size_t silent = graph.add_node("silent", "print", {1});
    graph.set_output_keys(silent, {});
    numgap::match_result matches;
    for (std::size_t i = 0; i < 3; ++i) {
        numgap::match_group group;
        group.reference_nodes = group.target_nodes = {i};
        group.reference_output_node = group.target_output_node = i;
        group.strategy = "explicit";
        const auto& keys = graph.output_keys(i);
        group.reference_tensor = group.target_tensor = keys.empty() ? std::string() : keys.back();
        matches.groups.push_back(group);
    }
    const std::vector<float> values = {1, 2};
    const std::map<std::string, numgap::tensor_view> views = {{"dup", numgap::tensor_view(values.data(), {2})}};
    const auto report = numgap::compare_runs(graph, graph, matches, views, views, numgap::metric_set::defaults());
    CHECK(report.groups[0].reference_nodes == std::vector<std::string>{"dup#0"});
    CHECK(report.groups[1].reference_nodes == std::vector<std::string>{"dup#1"});
    CHECK(report.groups[2].status == numgap::group_status::missing);
    CHECK(report.groups[2].message.find("no output tensor") != std::string::npos);
}

TEST_CASE("compare_runs: a file truncated while it is read makes its group 'error' naming the file") {
    // Issue 8, defect 7: this used to be SIGBUS (exit 135, no report).
    REQUIRE(numgap::io::install_truncation_guard());
    numgap_test::temp_directory reference_dir, target_dir;
    std::vector<float> values(4096);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = float(i % 97) * 0.25f - 3.0f;
    const std::vector<std::int64_t> shape{std::int64_t(values.size())};
    for (const char* key : {"x", "a", "b", "c"}) {
        numgap::io::write_npy(reference_dir / (std::string(key) + ".npy"), values.data(), shape);
        numgap::io::write_npy(target_dir / (std::string(key) + ".npy"), values.data(), shape);
    }
    const auto reference = numgap::io::run_directory::open(reference_dir.path());
    // Another process truncates b.npy after numgap has mapped it.
    struct truncating_source {
        numgap::io::run_directory run;
        bool contains(const std::string& key) const { return run.contains(key); }
        numgap::io::loaded_tensor load(const std::string& key) const {
            numgap::io::loaded_tensor tensor = run.load(key);
            if (key == "b" && ::truncate((run.path() / "b.npy").c_str(), 128) != 0)
                throw std::runtime_error("test cannot truncate b.npy");
            return tensor;
        }
    } target{numgap::io::run_directory::open(target_dir.path())};
    const auto graph = chain({"x", "a", "b", "c"});
    const auto report = numgap::compare_runs(graph, graph, reference, target, numgap::metric_set::defaults());
    CHECK(row(report, "b").status == numgap::group_status::error);
    CHECK(numgap_test::contains(row(report, "b").message, "file '" + (target_dir / "b.npy").string() +
                                                 "' was truncated while being read"));
    CHECK(row(report, "b").metrics.empty());
    for (const char* node : {"x", "a", "c"}) CHECK(row(report, node).status == numgap::group_status::pass);
}

TEST_CASE(
    "compare_runs: a safetensors file truncated while its tensors are read makes every group that read it 'error'") {
    // Tensors read in place from a file the run keeps mapped have the file's
    // size checked once after all groups (no fstat per tensor): a shrunk file
    // must still turn each group that read it into `error`, never a result
    // computed over zeros.
    REQUIRE(numgap::io::install_truncation_guard());
    numgap_test::temp_directory reference_dir, target_dir;
    std::vector<float> values(4096); // 16 KiB a tensor: several pages each
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = float(i % 89) * 0.5f - 7.0f;
    std::vector<numgap_test::tensor_bytes> tensors;
    for (const char* key : {"x", "a", "b", "c"})
        tensors.push_back({key, "F32", "[" + std::to_string(values.size()) + "]", numgap_test::bytes_of(values)});
    // Data aligned for float (a misaligned tensor is copied out, then checked right away).
    const std::size_t header = numgap_test::safetensors_file(tensors).size() - 8 - values.size() * 4 * 4;
    const std::string file = numgap_test::safetensors_file(tensors, "", (header + 8 + 63) / 64 * 64 - 8);
    reference_dir.write("tensors.safetensors", file);
    target_dir.write("tensors.safetensors", file);
    const auto graph = chain({"x", "a", "b", "c"});
    const auto reference = numgap::io::run_directory::open(reference_dir.path());
    for (const std::size_t threads : {1u, 2u}) {
        CAPTURE(threads);
        target_dir.write("tensors.safetensors", file);
        numgap::compare_options options;
        options.threads = threads;
        const auto intact =
            numgap::compare_runs(graph, graph, reference, numgap::io::run_directory::open(target_dir.path()),
                                 numgap::metric_set::defaults(), {}, options);
        for (const char* node : {"x", "a", "b", "c"}) CHECK(row(intact, node).status == numgap::group_status::pass);

        // Another process cuts the target file inside b's data after b was mapped.
        struct truncating_source {
            numgap::io::run_directory run;
            std::size_t keep;
            bool contains(const std::string& key) const { return run.contains(key); }
            numgap::io::loaded_tensor load(const std::string& key) const {
                numgap::io::loaded_tensor tensor = run.load(key);
                if (key == "b" && ::truncate((run.path() / "tensors.safetensors").c_str(), off_t(keep)) != 0)
                    throw std::runtime_error("test cannot truncate tensors.safetensors");
                return tensor;
            }
        } target{numgap::io::run_directory::open(target_dir.path()), file.size() - values.size() * 4 * 3 / 2};
        const auto report =
            numgap::compare_runs(graph, graph, reference, target, numgap::metric_set::defaults(), {}, options);
        for (const char* node : {"x", "a", "b", "c"}) {
            CAPTURE(node);
            CHECK(row(report, node).status == numgap::group_status::error);
            CHECK(numgap_test::contains(row(report, node).message, "file '" +
                                                                       (target_dir / "tensors.safetensors").string() +
                                                                       "' was truncated while being read"));
            CHECK(row(report, node).metrics.empty());
            REQUIRE(row(report, node).error_detail.has_value());
            CHECK(row(report, node).error_detail->kind == numgap::error_kind::io);
        }
    }
}

TEST_CASE("compare_runs: tensors read in place from a safetensors file give their pages back once compared") {
    // Four tensors of 8 MiB and one of 3 values. After comparing, the file's
    // mapping keeps only pages no tensor fills alone: the header's, the tiny
    // tensor's, and those of page-cache folios (up to 2 MiB on x86-64, which
    // a fault maps whole) that straddle two tensors; and every value read
    // again comes from the file unchanged.
    numgap_test::temp_directory reference_dir, target_dir;
    std::vector<float> large(std::size_t(8) << 18);
    for (std::size_t i = 0; i < large.size(); ++i) large[i] = float(i % 97) * 0.25f - 3.0f;
    std::vector<numgap_test::tensor_bytes> tensors;
    for (const char* key : {"x", "a", "b", "c"})
        tensors.push_back({key, "F32", "[" + std::to_string(large.size()) + "]", numgap_test::bytes_of(large)});
    tensors.push_back({"tiny", "F32", "[3]", numgap_test::bytes_of(std::vector<float>{1, 2, 3})});
    // Data aligned for float, so it is read in place (a misaligned tensor is copied out).
    std::size_t data_bytes = 0;
    for (const auto& tensor : tensors) data_bytes += tensor.data.size();
    const std::size_t header = numgap_test::safetensors_file(tensors).size() - 8 - data_bytes;
    const std::string file = numgap_test::safetensors_file(tensors, "", (header + 8 + 63) / 64 * 64 - 8);
    reference_dir.write("tensors.safetensors", file);
    target_dir.write("tensors.safetensors", file);
    numgap::basic_graph graph = chain({"x", "a", "b", "c"});
    graph.add_node("tiny", "op_tiny", {3});
    const auto reference = numgap::io::run_directory::open(reference_dir.path());
    const auto target = numgap::io::run_directory::open(target_dir.path());
    REQUIRE(reference.load("x").run_mapping() != nullptr);
    REQUIRE(target.load("x").run_mapping() != nullptr);
    const void* reference_mapping = reference.load("x").run_mapping()->data();
    const void* target_mapping = target.load("x").run_mapping()->data();
    const long data_kb = long(file.size()) / 1024;
    for (const std::size_t threads : {1u, 2u}) {
        CAPTURE(threads);
        numgap::compare_options options;
        options.threads = threads;
        const auto report =
            numgap::compare_runs(graph, graph, reference, target, numgap::metric_set::defaults(), {}, options);
        CHECK(report.summary.passed == 5);
        for (const void* mapping : {reference_mapping, target_mapping}) {
            const long resident = numgap_test::resident_kb(mapping);
            CHECK(resident >= 0);
            CHECK(resident < data_kb / 2); // all 32 MiB were read
        }
    }
    // Released pages are read again from the file: the same values.
    const numgap::io::loaded_tensor b = target.load("b");
    REQUIRE(b.view().size() == std::int64_t(large.size()));
    const float* values = static_cast<const float*>(b.view().data());
    CHECK(std::equal(large.begin(), large.end(), values));
    // Released by hand: at least b's pages away from its two ends go, its values stay.
    const long before = numgap_test::resident_kb(target_mapping);
    b.release_run_pages();
    CHECK(numgap_test::resident_kb(target_mapping) <= before - 4 * 1024);
    CHECK(std::equal(large.begin(), large.end(), values));
    // A tensor not read in place from a run mapping (an .npy file) has nothing to release.
    numgap::io::write_npy(reference_dir / "extra.npy", large.data(), std::vector<std::int64_t>{4});
    const auto with_npy = numgap::io::run_directory::open(reference_dir.path());
    const numgap::io::loaded_tensor small = with_npy.load("extra");
    CHECK(small.run_mapping() == nullptr);
    small.release_run_pages();
    CHECK(static_cast<const float*>(small.view().data())[3] == large[3]);
}

TEST_CASE("compare_runs: coverage counts compared reference nodes and unmatched ones whose tensor was dumped") {
    // x, a, b, c, d in the reference; the target has x and a only, and the
    // reference run never dumped d: 2 compared, 2 unmatched with a dump (b, c),
    // d unmatched without one (not counted as a gap in what was dumped).
    const auto reference_graph = chain({"x", "a", "b", "c", "d"});
    const auto target_graph = chain({"x", "a"});
    const run_data data = sample();
    const auto views = data.views(); // no "d"
    const auto matches = numgap::match_by_name(reference_graph, target_graph);
    const auto report = numgap::compare_runs(reference_graph, target_graph, matches, views, views,
                                             numgap::metric_set::defaults());
    CHECK(report.summary.unmatched_reference == 3);
    CHECK(report.summary.compared_reference == 2);
    CHECK(report.summary.unmatched_reference_dumped == 2);
    CHECK(row(report, "b").reference_tensor == "b");
    CHECK(row(report, "d").reference_tensor.empty());
    CHECK(numgap::mostly_unmatched(report.summary) == false); // 2 of 4 dumped were compared: not more than half lost

    const auto fewer = chain({"x"});
    const auto sparse = numgap::compare_runs(reference_graph, fewer, numgap::match_by_name(reference_graph, fewer),
                                             views, views, numgap::metric_set::defaults());
    CHECK(sparse.summary.compared_reference == 1);
    CHECK(sparse.summary.unmatched_reference_dumped == 3);
    CHECK(numgap::mostly_unmatched(sparse.summary));
    CHECK(sparse.all_passed()); // every compared group passes, yet the run compared 1 of 4
}

TEST_CASE("report names stay unique when a made-up suffix is a name the graph already uses") {
    numgap::basic_graph graph;
    graph.add_node("a", "op");
    graph.add_node("a", "op", {0});
    graph.add_node("a#1", "op", {1});
    graph.add_node("", "op", {2});
    graph.add_node("#4", "op", {3});
    const std::vector<std::string> names = numgap::detail::report_names(graph);
    REQUIRE(names.size() == 5);
    CHECK(names[2] == "a#1");
    CHECK(names[4] == "#4");
    for (std::size_t i = 0; i < names.size(); ++i)
        for (std::size_t j = i + 1; j < names.size(); ++j) CHECK(names[i] != names[j]);
}

namespace {
// A graph whose node_name gives a new string each time: no name to refer to.
struct named_by_value {
    std::vector<std::string> names;
    std::size_t num_nodes() const { return names.size(); }
    std::string node_name(std::size_t i) const { return names[i]; }
    std::vector<std::size_t> producers(std::size_t) const { return {}; }
    std::string_view op_type(std::size_t) const { return "op"; }
};
} // namespace

TEST_CASE("report_name_table: the graph's own strings when unique, report_names otherwise") {
    numgap::basic_graph unique;
    for (const char* name : {"a", "b", "a long name that does not fit a short string buffer"}) unique.add_node(name);
    const numgap::detail::report_name_table table(unique);
    CHECK(table.refers_to_graph());
    for (std::size_t i = 0; i < unique.num_nodes(); ++i)
        CHECK(table[i].data() == unique.node_name(i).data()); // the graph's own text, no copy

    numgap::basic_graph repeated;
    for (const char* name : {"a", "a", "a#1", "", "#4"}) repeated.add_node(name);
    const numgap::detail::report_name_table made_unique(repeated);
    CHECK_FALSE(made_unique.refers_to_graph());
    const std::vector<std::string> expected = numgap::detail::report_names(repeated);
    for (std::size_t i = 0; i < expected.size(); ++i) CHECK(made_unique[i] == expected[i]);

    numgap::basic_graph empty_name;
    empty_name.add_node("x");
    empty_name.add_node("");
    CHECK_FALSE(numgap::detail::report_name_table(empty_name).refers_to_graph());

    const named_by_value by_value{{"p", "q"}};
    const numgap::detail::report_name_table copied(by_value);
    CHECK_FALSE(copied.refers_to_graph());
    CHECK(copied[0] == "p");
    CHECK(copied[1] == "q");

    // names(): owned copies either way, for a caller that destroys the graph next.
    CHECK(numgap::detail::report_name_table(unique).names() ==
          std::vector<std::string>{"a", "b", "a long name that does not fit a short string buffer"});
    CHECK(numgap::detail::report_name_table(repeated).names() == expected);
    CHECK(numgap::detail::report_name_table(by_value).names() == std::vector<std::string>{"p", "q"});
}
} // TEST_SUITE("compare")
