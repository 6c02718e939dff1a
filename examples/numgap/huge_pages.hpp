#pragma once
// Asks glibc's malloc for transparent huge pages (glibc.malloc.hugetlb=1) and
// to keep freed memory for reuse (below) by running the CLI again with those
// tunables set, unless GLIBC_TUNABLES is set already (the user's choice
// stands; the process started here has it too).
//
// Why: a run of a million nodes holds gigabytes of small structures, and
// touching each fresh 4 KiB page costs a page fault. Where transparent huge
// pages are in "madvise" mode (Debian's default) malloc uses them only when
// told, which a tunable read at start-up does; there is no call for it.
// Measured on a 2-vCPU KVM guest (AMD EPYC Zen 5): a 10^6-node comparison
// 16.8-18.7 s -> 10.5-11.1 s, peak RSS +1%. Results are unchanged: only
// where the allocator's memory comes from differs.
// With it, glibc.malloc.mmap_max=0, a trim threshold of 16 GiB and a top pad
// of 64 MiB: a block above 32 MiB is otherwise mapped on its own and
// unmapped when freed, so the next phase's arrays (a million report rows)
// start on fresh pages while the last phase's (the manifest's nodes, the
// graphs' build indices) went back to the kernel; from the heap they are
// reused instead, and the heap grows 64 MiB at a time, so huge pages back
// it whole. A 10^6-node chain: 113k -> 11k minor faults, 8.8-10.0 ->
// 7.0-9.0 s, peak RSS +2%; 10^5: 18k -> 1.8k faults. The CLI is one short
// process: memory it frees need not go back to the system before it exits.
//
// Set GLIBC_TUNABLES (empty keeps glibc's defaults) to opt out. Where the
// new process cannot be started (no /proc, exec refused) or the start is
// set-user-ID, this returns and the CLI goes on as it is. Linux with glibc
// only; elsewhere a no-op.
#include <cstdlib>

#if defined(__linux__) && defined(__GLIBC__)
#include <sys/auxv.h>
#include <unistd.h>
#endif

namespace numgap_cli {

inline void use_huge_pages(char** argv) {
#if defined(__linux__) && defined(__GLIBC__)
    // A set-user-ID start (AT_SECURE) may have its tunables filtered out by
    // glibc: then the restarted process would see none and restart again.
    if (std::getenv("GLIBC_TUNABLES") != nullptr || getauxval(AT_SECURE) != 0) return;
    constexpr const char* tunables = "glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:"
                                     "glibc.malloc.trim_threshold=17179869184:glibc.malloc.top_pad=67108864";
    if (setenv("GLIBC_TUNABLES", tunables, 0) != 0) return;
    execv("/proc/self/exe", argv);
    unsetenv("GLIBC_TUNABLES"); // not restarted: no tunable for whatever this process starts
#else
    (void)argv;
#endif
}

} // namespace numgap_cli
