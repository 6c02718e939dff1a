// Pins down the truncation guard: a read past the end of a file truncated
// while mapped completes with zeros and the mapping reports itself broken
// (instead of SIGBUS killing the process); a truncation inside the last page
// is caught by size; signals that are not about numgap's mappings reach the
// handler that was there before (checked in a child process).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <numgap/io/mapped_file.hpp>
#include <numgap/io/truncation_guard.hpp>

#include "temp_directory.hpp"

using numgap::io::mapped_file;
using numgap_test::contains;
using numgap_test::error_of;

namespace {

std::size_t page() { return std::size_t(::sysconf(_SC_PAGESIZE)); }

unsigned char read_byte(const mapped_file& file, std::size_t offset) {
    return static_cast<unsigned char>(*static_cast<const volatile std::byte*>(file.data() + offset));
}

// Runs `body` in a child process; its wait status.
template <class Body>
int in_child(Body body) {
    const pid_t child = ::fork();
    if (child == 0) {
        body();
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return status;
}

} // namespace

TEST_SUITE("io") {
TEST_CASE("truncation_guard: turns a read past a truncated end into an error naming the file") {
    REQUIRE(numgap::io::install_truncation_guard());
    CHECK(numgap::io::install_truncation_guard()); // idempotent
    numgap_test::temp_directory scratch;
    const auto path = scratch.write("shrinks.npy", std::string(4 * page(), 'Z'));
    const mapped_file file = mapped_file::open(path);
    CHECK(file.intact());
    CHECK(read_byte(file, 3 * page()) == 'Z');
    REQUIRE(::truncate(path.c_str(), off_t(page())) == 0);
    // Without the guard this read is SIGBUS: exit 135, no message.
    CHECK(read_byte(file, 3 * page() + 7) == 0);
    CHECK(read_byte(file, 0) == 'Z');
    CHECK_FALSE(file.intact());
    const std::string message = error_of([&] { file.check_intact(); });
    CHECK(contains(message, "file '" + path.string() + "' was truncated while being read"));
    CHECK(contains(message, std::to_string(4 * page()) + " bytes when mapped"));

    // A mapping that moves keeps its registration; a fresh one starts clean.
    const auto other = scratch.write("other.npy", std::string(2 * page(), 'Q'));
    mapped_file moved = mapped_file::open(other);
    mapped_file target = std::move(moved);
    REQUIRE(::truncate(other.c_str(), 0) == 0);
    CHECK(read_byte(target, page() + 1) == 0);
    CHECK_FALSE(target.intact());
    scratch.write("fresh.npy", std::string(2 * page(), 'F'));
    const mapped_file fresh = mapped_file::open(scratch / "fresh.npy");
    CHECK(fresh.intact());
}

TEST_CASE("truncation_guard: a cut inside the last page is seen by size without any fault") {
    numgap_test::temp_directory scratch;
    const auto path = scratch.write("cut.npy", std::string(page() + 100, 'C'));
    const mapped_file file = mapped_file::open(path);
    REQUIRE(::truncate(path.c_str(), off_t(page() + 10)) == 0);
    CHECK(read_byte(file, page() + 50) == 0); // the kernel zeroes the rest of the page: no SIGBUS
    CHECK(contains(error_of([&] { file.check_intact(); }), "was truncated while being read"));
}

TEST_CASE("truncation_guard: leaves other bus errors to the previous disposition") {
    REQUIRE(numgap::io::install_truncation_guard());
    numgap_test::temp_directory scratch;
    const auto path = scratch.write("raw.bin", std::string(2 * page(), 'R'));
    // A handler installed before the guard still gets signals that are not about numgap's mappings.
    const int chained = in_child([] {
        struct sigaction previous {};
        previous.sa_handler = [](int) { ::_exit(42); };
        sigemptyset(&previous.sa_mask);
        numgap::io::detail::registry().previous = previous;
        ::raise(SIGBUS);
    });
    CHECK(WIFEXITED(chained));
    CHECK(WEXITSTATUS(chained) == 42);
    // With the default disposition before it, a fault in a mapping numgap does
    // not own still kills the process with SIGBUS, as without the guard.
    const int killed = in_child([&] {
        struct sigaction previous {};
        previous.sa_handler = SIG_DFL;
        sigemptyset(&previous.sa_mask);
        numgap::io::detail::registry().previous = previous;
        const int descriptor = ::open(path.c_str(), O_RDONLY);
        void* raw = ::mmap(nullptr, 2 * page(), PROT_READ, MAP_PRIVATE, descriptor, 0);
        if (raw == MAP_FAILED || ::ftruncate(::open(path.c_str(), O_WRONLY), 0) != 0) ::_exit(3);
        (void)*static_cast<const volatile char*>(static_cast<char*>(raw) + page());
        ::_exit(4);
    });
    CHECK(WIFSIGNALED(killed));
    if (WIFSIGNALED(killed)) CHECK(WTERMSIG(killed) == SIGBUS);
}
} // TEST_SUITE("io")
