// Pins down the mapping: exact bytes, empty files, both hints, moves, and
// errors that name the file and the OS reason.
#include <doctest/doctest.h>

#include <cstddef>
#include <string>
#include <utility>

#include <unistd.h>

#include <numgap/io/mapped_file.hpp>

#include "resident_memory.hpp"
#include "temp_directory.hpp"

using numgap::io::map_hint;
using numgap::io::mapped_file;
using numgap_test::contains;
using numgap_test::error_of;

TEST_SUITE("io") {
TEST_CASE("mapped_file: exposes the exact file bytes with either hint") {
    numgap_test::temp_directory scratch;
    std::string content;
    for (int i = 0; i < 10000; ++i) content += char(i * 7);
    const auto path = scratch.write("data.bin", content);
    for (const map_hint hint : {map_hint::sequential, map_hint::populate}) {
        const mapped_file file = mapped_file::open(path, hint);
        REQUIRE(file.size() == content.size());
        CHECK(file.path() == path);
        CHECK(std::string(reinterpret_cast<const char*>(file.data()), file.size()) == content);
    }
}

using numgap_test::resident_kb;

TEST_CASE("mapped_file: release_pages hands whole pages inside the range back; the bytes read stay the file's") {
    numgap_test::temp_directory scratch;
    const long page = ::sysconf(_SC_PAGESIZE);
    std::string content;
    for (long i = 0; i < 64 * page; ++i) content += char(i * 13 + 5);
    const mapped_file file = mapped_file::open(scratch.write("pages.bin", content), map_hint::populate);
    // Every page read once: populating is a hint (qemu-user ignores it).
    const volatile std::byte* bytes = file.data();
    unsigned sum = 0;
    for (long offset = 0; offset < 64 * page; offset += page) sum += std::to_integer<unsigned>(bytes[offset]);
    CHECK(sum == 64 * 5); // byte i is i * 13 + 5 (mod 256), and a page's size is a multiple of 256
    const long before = resident_kb(file.data());
    REQUIRE(before >= 64 * page / 1024);
    // Pages 1 .. 31: the range starts inside page 0 and ends inside page 32,
    // so neither of those two pages goes.
    file.release_pages(std::size_t(page / 2), std::size_t(32 * page));
    // At least those 31 pages left (a kernel that maps file pages in larger
    // units may drop more); pages 0 and 32 stayed.
    const long after = resident_kb(file.data());
    CHECK(after <= before - 31 * page / 1024);
    CHECK(after >= 2 * page / 1024);
    // Nothing to release: an empty range, a range past the end, less than a page.
    file.release_pages(0, 0);
    file.release_pages(content.size(), 4096);
    file.release_pages(std::size_t(page) * 40 + 1, std::size_t(page) - 1);
    CHECK(resident_kb(file.data()) == after);
    // A length past the end is cut at the end: the last 8 pages go.
    file.release_pages(std::size_t(56 * page), std::size_t(1) << 40);
    CHECK(resident_kb(file.data()) <= after - 8 * page / 1024);
    CHECK(std::string(reinterpret_cast<const char*>(file.data()), file.size()) == content);
    mapped_file().release_pages(0, 100); // an empty mapping: nothing happens
}

TEST_CASE("mapped_file: maps an empty file as an empty span") {
    numgap_test::temp_directory scratch;
    const mapped_file file = mapped_file::open(scratch.write("empty.bin", std::string()));
    CHECK(file.empty());
    CHECK(file.bytes().empty());
    CHECK(file.data() == nullptr);
}

TEST_CASE("mapped_file: move transfers the mapping") {
    numgap_test::temp_directory scratch;
    mapped_file first = mapped_file::open(scratch.write("a.bin", std::string("abc")));
    const std::byte* data = first.data();
    mapped_file second = std::move(first);
    CHECK(second.data() == data);
    CHECK(second.size() == 3);
    CHECK(first.data() == nullptr); // NOLINT(bugprone-use-after-move): moved-from state is specified
    CHECK(first.size() == 0);
    mapped_file third = mapped_file::open(scratch.write("b.bin", std::string("xy")));
    third = std::move(second);
    CHECK(third.size() == 3);
    CHECK(third.data() == data);
}

TEST_CASE("mapped_file: errors name the file and the os reason") {
    numgap_test::temp_directory scratch;
    const std::string missing = error_of([&] { (void)mapped_file::open(scratch / "missing.npy"); });
    CHECK(contains(missing, "cannot open"));
    CHECK(contains(missing, "missing.npy"));
    CHECK(contains(missing, "No such file or directory"));
    const std::string directory = error_of([&] { (void)mapped_file::open(scratch.path()); });
    CHECK(contains(directory, scratch.path().string()));
    CHECK(contains(directory, "not a regular file"));
    for (const auto& path : {scratch / "missing.npy", scratch.path()}) {
        const auto failure = numgap_test::caught_error([&] { (void)mapped_file::open(path); });
        REQUIRE(failure.has_value());
        CHECK(failure->kind() == numgap::error_kind::io);
        CHECK(failure->where().file == path.string());
    }
}
} // TEST_SUITE("io")
