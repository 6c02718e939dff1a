#pragma once
// phase_timings: where `numgap compare`'s time goes, for profiling large runs
// without a profiler. With the environment variable NUMGAP_TIMINGS set (to
// anything), each phase's wall time and the process's peak resident memory so
// far are printed on stderr when the phase ends; otherwise it does nothing.
// Each line gives wall and CPU time (user + system, all threads), the
// resident memory now and, with glibc, the heap bytes in use now (what the
// phase left allocated; freed memory the allocator keeps is not counted).
// A debugging aid, not an interface: the wording may change.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <sys/resource.h>
#include <unistd.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace numgap_cli {

class phase_timings {
public:
    phase_timings() : enabled_(std::getenv("NUMGAP_TIMINGS") != nullptr), last_(clock::now()), start_(last_) {}

    // Ends the phase that began at the previous call (or at construction).
    void end_phase(const char* phase) {
        if (!enabled_) return;
        const clock::time_point now = clock::now();
        rusage usage{};
        getrusage(RUSAGE_SELF, &usage);
        const double cpu = cpu_seconds(usage);
        std::fprintf(stderr,
                     "numgap: timing: %-18s %7.3f s wall %7.3f s CPU  (total %7.3f s, peak RSS %5.0f MiB, RSS %5.0f "
                     "MiB, heap in use %5.0f MiB)\n",
                     phase, seconds(now - last_), cpu - last_cpu_, seconds(now - start_),
                     double(usage.ru_maxrss) / 1024.0, resident_mib(), heap_in_use_mib());
        last_ = now;
        last_cpu_ = cpu;
    }

private:
    // From /proc/self/statm (Linux); -1 elsewhere.
    static double resident_mib() {
        std::FILE* statm = std::fopen("/proc/self/statm", "r");
        if (statm == nullptr) return -1;
        unsigned long size = 0, resident = 0;
        const int read = std::fscanf(statm, "%lu %lu", &size, &resident);
        std::fclose(statm);
        return read == 2 ? double(resident) * double(sysconf(_SC_PAGESIZE)) / 1048576.0 : -1;
    }
    static double heap_in_use_mib() {
#if defined(__GLIBC__)
        const struct mallinfo2 info = mallinfo2();
        return double(info.uordblks + info.hblkhd) / 1048576.0;
#else
        return -1;
#endif
    }
    using clock = std::chrono::steady_clock;
    static double seconds(clock::duration elapsed) { return std::chrono::duration<double>(elapsed).count(); }
    // User plus system time of every thread so far: under load, wall time
    // says more about the machine than about numgap.
    static double cpu_seconds(const rusage& usage) {
        return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
               double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
    }
    bool enabled_;
    double last_cpu_ = 0;
    clock::time_point last_, start_;
};

} // namespace numgap_cli
