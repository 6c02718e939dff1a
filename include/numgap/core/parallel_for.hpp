#pragma once
// numgap::parallel_for(workers, body) and numgap::resolve_threads(threads):
// the one way numgap runs work on several threads (evaluate() splits a
// tensor's pass, compare_runs() compares groups).
//
// The thread-count rule, used by every `threads` option (evaluate_options,
// compare_options, the CLI's --threads): a std::size_t where
//   0 means std::thread::hardware_concurrency() (1 when that is unknown),
//   1 means the calling thread only (no thread is started),
//   N means at most N threads, the calling thread being one of them.
// Callers may use fewer than asked when the work is small.
//
// parallel_for(workers, body) calls body(worker) once for every worker in
// [0, workers): worker 0 on the calling thread, the others on std::jthreads,
// and returns when all have returned. A thread that cannot start (the system
// is out of threads) is no error: its worker runs on the calling thread after
// worker 0, so every index still runs exactly once. An exception thrown by a
// body is parked (it must not escape a thread: std::terminate); the first one
// caught is rethrown on the caller once every thread is joined, the others
// are dropped. Bodies that should stop early when another failed share their
// own flag (compare_runs does).
// Complexity: `workers` calls; starting workers - 1 threads. Throws: what a
// body throws; std::bad_alloc.
#include <cstddef>
#include <exception>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

namespace numgap {

inline std::size_t resolve_threads(std::size_t threads) noexcept {
    if (threads != 0) return threads;
    const unsigned cores = std::thread::hardware_concurrency();
    return cores == 0 ? 1 : cores;
}

template <class Body>
void parallel_for(std::size_t workers, Body&& body) {
    if (workers <= 1) {
        if (workers == 1) body(std::size_t(0));
        return;
    }
    std::mutex failure_mutex;
    std::exception_ptr first_failure;
    auto run = [&](std::size_t worker) noexcept {
        try {
            body(worker);
        } catch (...) {
            std::lock_guard lock(failure_mutex);
            if (!first_failure) first_failure = std::current_exception();
        }
    };
    std::size_t started = 1; // worker 0 is the calling thread
    {
        // jthread joins in its destructor, so every started thread is joined
        // before this block ends, on every path.
        std::vector<std::jthread> pool;
        try {
            pool.reserve(workers - 1);
            for (; started < workers; ++started) pool.emplace_back(run, started);
        } catch (const std::system_error&) {
            // Out of threads: the calling thread runs the rest below.
        } catch (const std::bad_alloc&) {
        }
        run(0);
        for (std::size_t worker = started; worker < workers; ++worker) run(worker);
    }
    if (first_failure) std::rethrow_exception(first_failure);
}

} // namespace numgap
