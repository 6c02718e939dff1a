#pragma once
// compare_options: how compare_runs works (not what it compares).
//
// threads: worker threads comparing groups in parallel, by numgap's one rule
// (core/parallel_for.hpp: 0 = std::thread::hardware_concurrency(), the
// default; 1 = the calling thread only; N = at most N, never more than there
// are groups).
// Peak memory is about one reference/target pair per worker, because each
// worker loads a pair, evaluates it and drops it before taking the next.
// progress: called after each group with (groups done, groups total); it is
// called from worker threads but never concurrently (a mutex serialises it),
// so it may print or update a bar without its own locking. The library itself
// never prints. An exception thrown by it stops the comparison and is
// rethrown by compare_runs.
// bytes_compared: when set, each compared group adds its two tensors' data
// bytes (elements times each side's dtype size) to it, with a relaxed atomic
// add and no lock, so a progress display can show bytes and a rate; it must
// outlive compare_runs.
// evaluate: passed to every evaluate() call. Per-side statistics are off by
// default because the report does not hold them and they cost as much as the
// metrics themselves (42% of a 2 GB comparison's time, measured with perf);
// each group is evaluated on one thread because the groups already are the
// parallelism.
// repair: what compare_runs does when a structurally matched, ambiguous
// group fails (see repair_pairings.hpp): `on` (default) compares another
// candidate of the ambiguity class when it passes where the matcher's pick
// fails, `warn` keeps the matcher's pick and only marks the row
// repair_possible, `off` tries nothing. Shape mismatches on structural pairs
// never abort the comparison, whatever the mode.
// compare_only: when set, only the match groups (index into the
// match_result) it returns true for are compared; every other group's row is
// left `missing` with a message saying it belongs to another shard, and the
// repair pass never looks at it (`numgap compare --shard`, compare_shard.hpp,
// which keeps every group repair may consult in one shard).
// Complexity: O(1). Throws: nothing.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

#include <numgap/metric/evaluate_options.hpp>

namespace numgap {

enum class repair_mode : std::uint8_t { on, warn, off };

struct compare_options {
    std::size_t threads = 0;
    std::function<void(std::size_t done, std::size_t total)> progress;
    std::atomic<std::uint64_t>* bytes_compared = nullptr;
    evaluate_options evaluate{.threads = 1, .side_statistics = false, .side_counts = false};
    repair_mode repair = repair_mode::on;
    std::function<bool(std::size_t group)> compare_only;
};

} // namespace numgap
