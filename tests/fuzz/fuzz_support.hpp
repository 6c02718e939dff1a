#pragma once
// What numgap's libFuzzer targets share: a scratch directory private to the
// process (for the APIs that take a path), writing fuzz bytes into it, and
// reading every element of a view through the fused kernels with a check that
// a tensor compared with itself shows no difference.
//
// Only numgap::error is an expected outcome of hostile bytes; the targets let
// every other exception escape, so libFuzzer reports it as a crash.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include <stdlib.h> // mkdtemp

#include <numgap/core/error.hpp>
#include <numgap/core/tensor_view.hpp>
#include <numgap/io/run_directory.hpp>
#include <numgap/metric/evaluate.hpp>
#include <numgap/metric/metric_set.hpp>

namespace numgap::fuzz {

// The targets linked into the program: every target file defines its entry
// point with NUMGAP_FUZZ_TARGET(name), and fuzz_main.cpp hands libFuzzer's
// inputs to the one its program name (numgap_fuzz_<name>) selects. One
// program for all targets so the parsers' shared code compiles once.
using entry_point = int (*)(const std::uint8_t* data, std::size_t size);
struct fuzz_target {
    const char* name;
    entry_point run;
};
inline std::vector<fuzz_target>& linked_targets() {
    static std::vector<fuzz_target> targets;
    return targets;
}
inline bool add_target(const char* name, entry_point run) {
    linked_targets().push_back({name, run});
    return true;
}

// A fault of the machine running the fuzzer, not of numgap: stop loudly
// rather than let it pass for a finding.
[[noreturn]] inline void environment_failure(const std::string& what) {
    std::fprintf(stderr, "numgap fuzz: %s\n", what.c_str());
    std::exit(3);
}

// A directory of its own per process under $TMPDIR (default /tmp), so that
// -jobs/-workers and parallel CTest runs never share files; removed at exit.
inline const std::filesystem::path& scratch_directory() {
    static const std::filesystem::path directory = [] {
        const char* base = std::getenv("TMPDIR");
        std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/numgap-fuzz-XXXXXX";
        if (mkdtemp(pattern.data()) == nullptr) environment_failure("cannot create a directory like " + pattern);
        return std::filesystem::path(pattern);
    }();
    static const int removed_at_exit = std::atexit([] {
        std::error_code ignored;
        std::filesystem::remove_all(scratch_directory(), ignored);
    });
    (void)removed_at_exit;
    return directory;
}

// Empties `directory` (creating it if needed): each input starts from nothing.
inline void reset_directory(const std::filesystem::path& directory) {
    std::error_code failure;
    std::filesystem::remove_all(directory, failure);
    if (!failure) std::filesystem::create_directories(directory, failure);
    if (failure) environment_failure("cannot reset '" + directory.string() + "': " + failure.message());
}

// False when the file cannot be written (a name the file system refuses).
[[nodiscard]] inline bool write_file(const std::filesystem::path& path, std::span<const std::byte> bytes) {
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (file == nullptr) return false;
    const bool written = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
    return std::fclose(file) == 0 && written;
}

// Every target calls this where hostile bytes were refused with numgap::error,
// the expected outcome. NUMGAP_FUZZ_VERBOSE=1 prints the message: how to see
// whether a seed reaches the code it was written for, or why it stops early.
inline void refused(const error& failure) {
    static const bool verbose = std::getenv("NUMGAP_FUZZ_VERBOSE") != nullptr;
    if (verbose) std::fprintf(stderr, "numgap fuzz: refused: %s\n", failure.what());
}

inline std::span<const std::byte> as_bytes(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const std::byte*>(data), size};
}

// Every built-in metric, so the row passes (kl_div, topk) read the data too.
inline const metric_set& every_builtin_metric() {
    static const metric_set metrics = [] {
        metric_set set;
        for (std::string_view name : builtin_metric_names()) set.add_builtin(name);
        return set;
    }();
    return metrics;
}

// Reads every element of `view` through the kernels (the view against itself)
// and checks what must hold for identical sides: with no NaN or Inf on either
// side, every difference is exactly zero. A kernel that read the two sides
// differently (strides, tails, widening) would break it. Data errors (an empty
// tensor) are numgap::error, which the caller treats as a refusal.
inline void read_every_element(const tensor_view& view) {
    const evaluation result = evaluate(view, view, every_builtin_metric(), evaluate_options{1, true, true});
    const side_stats& stats = result.reference;
    // The default options count NaN and +-Inf on their own path (a chunk is
    // re-read only when its sum of squares is not finite): the same counts.
    const side_stats counted = evaluate(view, view, every_builtin_metric()).target;
    if (counted.nan_count != stats.nan_count || counted.positive_inf_count != stats.positive_inf_count ||
        counted.negative_inf_count != stats.negative_inf_count) {
        const auto wide = [](std::int64_t count) { return static_cast<long long>(count); };
        std::fprintf(stderr, "numgap fuzz: counts differ: NaN %lld / %lld, +Inf %lld / %lld, -Inf %lld / %lld\n",
                     wide(counted.nan_count), wide(stats.nan_count), wide(counted.positive_inf_count),
                     wide(stats.positive_inf_count), wide(counted.negative_inf_count), wide(stats.negative_inf_count));
        std::abort();
    }
    if (stats.nan_count != 0 || stats.positive_inf_count != 0 || stats.negative_inf_count != 0) return;
    // The mean is a rounded float sum: it may leave [min, max] by rounding only.
    const double slack = 1e-6 * std::max(std::fabs(stats.min), std::fabs(stats.max));
    if (!(stats.min <= stats.max && stats.min - slack <= stats.mean && stats.mean <= stats.max + slack)) {
        std::fprintf(stderr, "numgap fuzz: finite values with min %g, mean %g, max %g\n", stats.min, stats.mean,
                     stats.max);
        std::abort();
    }
    for (std::string_view name : {"max_abs", "mse", "atol", "l1"}) {
        const metric_result* metric = result.find(name);
        if (metric == nullptr || metric->value != 0.0) {
            std::fprintf(stderr, "numgap fuzz: a finite tensor compared with itself has %.*s = %g\n",
                         int(name.size()), name.data(), metric ? metric->value : NAN);
            std::abort();
        }
    }
}

// Opens `path` as a run and reads every tensor of it; a tensor that cannot be
// loaded is refused on its own, so one bad key does not hide the others.
inline void load_every_tensor(const std::filesystem::path& path, const io::read_policy& policy = {}) {
    const io::run_directory run = io::run_directory::open(path, policy);
    for (const std::string& key : run.keys()) {
        try {
            read_every_element(run.load(key).view());
        } catch (const error& failure) {
            refused(failure);
        }
    }
}

// The shape of a single-file target: `parse(bytes)` straight from the bytes
// (a numgap::error is a refusal), then the bytes written as `file_name` in
// the scratch directory and opened as a run (detected by content) with every
// tensor loaded.
template <class Parse>
void parse_then_load_as_run(std::span<const std::byte> bytes, const char* file_name, Parse&& parse) {
    try {
        parse(bytes);
    } catch (const error& failure) {
        refused(failure);
    }
    const std::filesystem::path path = scratch_directory() / file_name;
    if (!write_file(path, bytes)) environment_failure("cannot write '" + path.string() + "'");
    try {
        load_every_tensor(path);
    } catch (const error& failure) {
        refused(failure);
    }
}

} // namespace numgap::fuzz

// Defines target `name`'s entry point (the body follows, with `data` and
// `size` in scope) and adds it to linked_targets() before main runs.
#define NUMGAP_FUZZ_TARGET(name)                                                       \
    int numgap_fuzz_##name(const std::uint8_t* data, std::size_t size);                \
    [[maybe_unused]] const bool numgap_fuzz_##name##_added =                           \
        ::numgap::fuzz::add_target(#name, numgap_fuzz_##name);                         \
    int numgap_fuzz_##name(const std::uint8_t* data, std::size_t size)
