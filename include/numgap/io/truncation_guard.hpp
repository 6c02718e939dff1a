#pragma once
// numgap::io truncation guard: a file that another process truncates while
// numgap has it mapped becomes a numgap::error naming the file, instead of a
// SIGBUS that kills the process (exit 135, no message, no report).
//
// Reading a page of a mapping that lies wholly past the end of its (now
// shorter) file raises SIGBUS. install_truncation_guard() - opt in, process
// wide, idempotent; the CLI calls it first thing - installs a SIGBUS handler
// (SA_SIGINFO) that looks the fault address up in a registry of the ranges
// numgap has mapped (mapped_file registers each mapping through a
// truncation_watch). For an address inside one, it maps an anonymous zero
// page over the faulting page (mmap MAP_FIXED), records the fault on that
// range and returns, so the read completes (with zeros). Afterwards
// mapped_file::check_intact() sees the recorded fault, or that the file is
// now shorter than the mapping (a truncation inside the last page reads
// zeros without any fault), and throws "file '...' was truncated while being
// read"; compare_runs calls it after computing a group's metrics and turns it
// into that group's `error` row.
//
// Faults outside every registered range are not numgap's: the handler hands
// them to the disposition that was installed before it (another handler -
// AddressSanitizer's, say - is called; the default is restored and the fault
// re-raised, so the process dies as it would have). Without the guard
// installed, check_intact() still reports a shrunken file, but a read past the
// end kills the process as before.
//
// The registry is a fixed array of slots claimed with compare-and-swap; the
// handler only reads atomics and calls mmap, so it is safe to run in any
// thread at any moment. Limits: max_watched_mappings (4096) mappings at once;
// a mapping made while every slot is taken is simply not watched.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

namespace numgap::io {

namespace detail {

struct watched_range {
    enum : int { free, claiming, active };
    std::atomic<int> state{free};
    std::atomic<std::uintptr_t> begin{0}, end{0};
    std::atomic<unsigned> faults{0};
};

inline constexpr std::size_t max_watched_mappings = 4096;

struct truncation_registry {
    std::array<watched_range, max_watched_mappings> ranges;
    std::uintptr_t page_size = 4096;
    struct sigaction previous {};
    std::once_flag installed;
};

inline truncation_registry& registry() noexcept {
    static truncation_registry instance;
    return instance;
}

inline void hand_to_previous_disposition(int signal, siginfo_t* info, void* context) noexcept {
    const struct sigaction& previous = registry().previous;
    if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
        previous.sa_sigaction(signal, info, context);
        return;
    }
    if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(signal);
        return;
    }
    // Default disposition: restore it; a fault re-executes and kills the
    // process as SIGBUS always did, a sent signal is sent again.
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    sigemptyset(&fallback.sa_mask);
    ::sigaction(signal, &fallback, nullptr);
    if (info == nullptr || info->si_code <= 0) ::raise(signal);
}

inline void on_bus_error(int signal, siginfo_t* info, void* context) noexcept {
    truncation_registry& state = registry();
    if (info != nullptr) {
        const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
        for (watched_range& range : state.ranges) {
            if (range.state.load(std::memory_order_acquire) != watched_range::active) continue;
            if (address < range.begin.load(std::memory_order_relaxed) ||
                address >= range.end.load(std::memory_order_relaxed))
                continue;
            void* page = reinterpret_cast<void*>(address & ~(state.page_size - 1));
            if (::mmap(page, state.page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
                MAP_FAILED) {
                range.faults.fetch_add(1, std::memory_order_relaxed);
                return;
            }
            break;
        }
    }
    hand_to_previous_disposition(signal, info, context);
}

} // namespace detail

// Installs the SIGBUS handler described above (once per process; later calls
// do nothing). Returns false when sigaction fails (the guard is then absent).
inline bool install_truncation_guard() noexcept {
    detail::truncation_registry& state = detail::registry();
    static bool succeeded = false;
    std::call_once(state.installed, [&] {
        const long page = ::sysconf(_SC_PAGESIZE);
        if (page > 0) state.page_size = std::uintptr_t(page);
        struct sigaction handler {};
        handler.sa_sigaction = detail::on_bus_error;
        handler.sa_flags = SA_SIGINFO;
        sigemptyset(&handler.sa_mask);
        succeeded = ::sigaction(SIGBUS, &handler, &state.previous) == 0;
    });
    return succeeded;
}

// Registers [begin, begin + size) for the guard while it lives; move-only.
class truncation_watch {
public:
    truncation_watch() = default;
    truncation_watch(const void* begin, std::size_t size) noexcept {
        for (std::size_t index = 0; index < detail::max_watched_mappings; ++index) {
            detail::watched_range& range = detail::registry().ranges[index];
            int expected = detail::watched_range::free;
            if (!range.state.compare_exchange_strong(expected, detail::watched_range::claiming,
                                                     std::memory_order_acquire))
                continue;
            range.begin.store(reinterpret_cast<std::uintptr_t>(begin), std::memory_order_relaxed);
            range.end.store(reinterpret_cast<std::uintptr_t>(begin) + size, std::memory_order_relaxed);
            range.faults.store(0, std::memory_order_relaxed);
            range.state.store(detail::watched_range::active, std::memory_order_release);
            slot_ = static_cast<long>(index);
            return;
        }
    }
    truncation_watch(const truncation_watch&) = delete;
    truncation_watch& operator=(const truncation_watch&) = delete;
    truncation_watch(truncation_watch&& other) noexcept : slot_(std::exchange(other.slot_, -1)) {}
    truncation_watch& operator=(truncation_watch&& other) noexcept {
        if (this != &other) {
            release();
            slot_ = std::exchange(other.slot_, -1);
        }
        return *this;
    }
    ~truncation_watch() { release(); }

    // Whether the guard had to stand in for a page of this range.
    bool faulted() const noexcept {
        return slot_ >= 0 &&
               detail::registry().ranges[std::size_t(slot_)].faults.load(std::memory_order_relaxed) != 0;
    }
    bool watching() const noexcept { return slot_ >= 0; }

private:
    void release() noexcept {
        if (slot_ >= 0)
            detail::registry().ranges[std::size_t(slot_)].state.store(detail::watched_range::free,
                                                                      std::memory_order_release);
        slot_ = -1;
    }
    long slot_ = -1;
};

} // namespace numgap::io
