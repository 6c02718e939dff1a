// parallel_for and resolve_threads: the thread-count rule, every worker run
// exactly once, exceptions parked and rethrown on the caller, and a parallel
// sum identical to the serial one.
#include <numgap/core/parallel_for.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

TEST_SUITE("core") {
TEST_CASE("resolve_threads: 0 is every core, any other count is kept") {
    const unsigned cores = std::thread::hardware_concurrency();
    CHECK(numgap::resolve_threads(0) == (cores == 0 ? 1u : cores));
    CHECK(numgap::resolve_threads(1) == 1);
    CHECK(numgap::resolve_threads(7) == 7);
}

TEST_CASE("parallel_for runs every worker exactly once; worker 0 and a single worker on the calling thread") {
    for (const std::size_t workers : {std::size_t(1), std::size_t(2), std::size_t(5), std::size_t(16)}) {
        CAPTURE(workers);
        std::vector<std::atomic<int>> calls(workers);
        std::vector<std::thread::id> ran_on(workers);
        numgap::parallel_for(workers, [&](std::size_t worker) {
            ++calls[worker];
            ran_on[worker] = std::this_thread::get_id();
        });
        for (std::size_t w = 0; w < workers; ++w) CHECK(calls[w].load() == 1);
        CHECK(ran_on[0] == std::this_thread::get_id());
    }
    bool called = false;
    numgap::parallel_for(0, [&](std::size_t) { called = true; });
    CHECK_FALSE(called);
}

TEST_CASE("parallel_for: an exception from any worker reaches the caller after every worker finished") {
    for (const std::size_t failing : {std::size_t(0), std::size_t(3)}) {
        CAPTURE(failing);
        std::atomic<int> finished{0};
        CHECK_THROWS_WITH_AS(numgap::parallel_for(4,
                                                  [&](std::size_t worker) {
                                                      if (worker == failing) throw std::runtime_error("worker failed");
                                                      ++finished;
                                                  }),
                             "worker failed", std::runtime_error);
        CHECK(finished.load() == 3); // the others ran to the end: nothing is left running
    }
    // Several failures: one of them is rethrown, never std::terminate.
    CHECK_THROWS_AS(numgap::parallel_for(3, [](std::size_t worker) { throw static_cast<int>(worker); }), int);
}

TEST_CASE("parallel_for: a sum split over 1, 2 and 8 workers equals the serial sum") {
    std::vector<std::int64_t> values(100003);
    std::iota(values.begin(), values.end(), -5000);
    const std::int64_t serial = std::accumulate(values.begin(), values.end(), std::int64_t(0));
    for (const std::size_t workers : {std::size_t(1), std::size_t(2), std::size_t(8)}) {
        CAPTURE(workers);
        std::vector<std::int64_t> partial(workers, 0);
        numgap::parallel_for(workers, [&](std::size_t worker) {
            const std::size_t begin = values.size() * worker / workers, end = values.size() * (worker + 1) / workers;
            for (std::size_t i = begin; i < end; ++i) partial[worker] += values[i];
        });
        CHECK(std::accumulate(partial.begin(), partial.end(), std::int64_t(0)) == serial);
    }
}
}
