#pragma once
// progress_display: `numgap compare`'s progress line on stderr — groups and
// bytes compared, the rate and the time left — shown only when stderr is a
// terminal, --quiet was not given and the comparison has run for a second.
//
// Kept off the hot path: the workers only store counters (compare_runs'
// progress callback and compare_options::bytes_compared); a thread of its
// own reads them and redraws the line four times a second. The line is
// cleared when the display is destroyed, so the table starts on a clean line.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <thread>

#include <unistd.h>

namespace numgap_cli {

class progress_display {
public:
    // `total_bytes`: both runs' tensor bytes (0 when unknown: no byte figures).
    progress_display(bool quiet, std::uint64_t total_bytes)
        : enabled_(!quiet && isatty(STDERR_FILENO) == 1), total_bytes_(total_bytes) {
        if (enabled_) drawer_ = std::jthread([this](std::stop_token stop) { draw_until(stop); });
    }
    progress_display(const progress_display&) = delete;
    progress_display& operator=(const progress_display&) = delete;
    ~progress_display() {
        if (!drawer_.joinable()) return;
        drawer_.request_stop();
        wake_.notify_all();
        drawer_.join();
        if (shown_) std::fprintf(stderr, "\r\033[K");
    }

    // Whether the line is shown. Only then are the callbacks below worth
    // attaching: compare_runs takes a lock per group to call `progress`,
    // which two workers comparing a million small pairs contend for.
    bool enabled() const noexcept { return enabled_; }
    // For compare_options::progress: called once per group, never concurrently.
    void groups(std::size_t done, std::size_t total) noexcept {
        groups_done_.store(done, std::memory_order_relaxed);
        groups_total_.store(total, std::memory_order_relaxed);
    }
    // For compare_options::bytes_compared.
    std::atomic<std::uint64_t>& bytes() noexcept { return bytes_done_; }

private:
    using clock = std::chrono::steady_clock;

    void draw_until(std::stop_token stop) {
        const clock::time_point start = clock::now();
        std::unique_lock lock(mutex_);
        while (!stop.stop_requested()) {
            // Returns after 250 ms, or at once when the display is destroyed.
            (void)wake_.wait_for(lock, stop, std::chrono::milliseconds(250), [] { return false; });
            if (stop.stop_requested()) break;
            const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
            if (elapsed < 1.0) continue;
            draw(elapsed);
        }
    }

    void draw(double elapsed) {
        const std::size_t done = groups_done_.load(std::memory_order_relaxed);
        const std::size_t total = groups_total_.load(std::memory_order_relaxed);
        const std::uint64_t bytes = bytes_done_.load(std::memory_order_relaxed);
        if (total == 0) return;
        // Time left from bytes when the tensors are large, else from groups
        // (a million tiny tensors cost per group, not per byte).
        double fraction = double(done) / double(total);
        if (total_bytes_ != 0 && double(total_bytes_) / double(total) > 1e6)
            fraction = std::min(1.0, double(bytes) / double(total_bytes_));
        const double left = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0;
        std::fprintf(stderr, "\r\033[Knumgap: %zu of %zu groups", done, total);
        if (total_bytes_ != 0) {
            // GB for large runs, MB for small ones, so the figures move.
            const bool gigabytes = total_bytes_ >= 1'000'000'000;
            const double unit = gigabytes ? 1e-9 : 1e-6;
            std::fprintf(stderr, ", %.2f of %.2f %s, %.1f MB/s", double(bytes) * unit, double(total_bytes_) * unit,
                         gigabytes ? "GB" : "MB", double(bytes) * 1e-6 / elapsed);
        }
        std::fprintf(stderr, ", %.0f groups/s", double(done) / elapsed);
        if (fraction > 0 && done < total) std::fprintf(stderr, ", about %.0f s left", left);
        std::fflush(stderr);
        shown_ = true;
    }

    bool enabled_;
    std::uint64_t total_bytes_;
    std::atomic<std::size_t> groups_done_{0}, groups_total_{0};
    std::atomic<std::uint64_t> bytes_done_{0};
    std::mutex mutex_;
    std::condition_variable_any wake_;
    bool shown_ = false; // written by the drawer, read after join
    std::jthread drawer_; // last: started after, and stopped before, the members it reads
};

} // namespace numgap_cli
