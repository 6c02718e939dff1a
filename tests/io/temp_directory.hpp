#pragma once
// Test support for tests/io: a unique scratch directory removed on scope exit,
// file helpers, and the location of the committed fixtures (tests/data).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <unistd.h>

#include <numgap/core/error.hpp>

#include "../core/caught_error.hpp"

namespace numgap_test {

inline std::filesystem::path fixture(const std::string& relative) {
#ifdef NUMGAP_TEST_DATA_DIR
    const std::filesystem::path root = NUMGAP_TEST_DATA_DIR;
#else
    // Built by hand from the repository root: tests/io/<this file> -> tests/data.
    const std::filesystem::path root = std::filesystem::path(__FILE__).parent_path().parent_path() / "data";
#endif
    return root / relative;
}

inline std::vector<std::byte> read_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("test cannot read " + path.string());
    const std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> bytes(chars.size());
    for (std::size_t i = 0; i < chars.size(); ++i) bytes[i] = std::byte(static_cast<unsigned char>(chars[i]));
    return bytes;
}

inline std::vector<std::byte> to_bytes(std::string_view text) {
    std::vector<std::byte> bytes(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) bytes[i] = std::byte(static_cast<unsigned char>(text[i]));
    return bytes;
}

// The uint8 sequence make_fixtures.py's lcg_bytes() writes.
inline std::vector<std::uint8_t> lcg_bytes(std::size_t count) {
    std::vector<std::uint8_t> out(count);
    std::uint64_t state = 12345;
    for (std::size_t i = 0; i < count; ++i) {
        state = (state * 1103515245u + 12345u) % (std::uint64_t(1) << 31);
        out[i] = std::uint8_t((state >> 16) & 15u);
    }
    for (std::size_t i = 40000; i < 50000 && i < count; ++i) out[i] = out[(i - 40000) % 100];
    return out;
}

// The message of the numgap::error `action` throws; "<no numgap::error>" when it
// returns normally. Other exceptions escape, failing the test.
template <class Action>
std::string error_of(Action&& action) {
    const std::optional<numgap::error> failure = caught_error(std::forward<Action>(action));
    return failure ? failure->what() : "<no numgap::error>";
}

inline bool contains(const std::string& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

class temp_directory {
public:
    temp_directory() {
        static std::atomic<int> counter{0};
        path_ = std::filesystem::temp_directory_path() /
                ("numgap_io_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    temp_directory(const temp_directory&) = delete;
    temp_directory& operator=(const temp_directory&) = delete;
    ~temp_directory() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }

    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(const std::string& relative) const { return path_ / relative; }

    std::filesystem::path write(const std::string& relative, std::span<const std::byte> bytes) const {
        const std::filesystem::path file = path_ / relative;
        std::filesystem::create_directories(file.parent_path());
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
        if (!out) throw std::runtime_error("test cannot write " + file.string());
        return file;
    }
    std::filesystem::path write(const std::string& relative, std::string_view text) const {
        const std::vector<std::byte> bytes = to_bytes(text);
        return write(relative, bytes);
    }
    // Writes (replaces) any file, e.g. one in a directory below a scratch directory.
    static void write_to(const std::filesystem::path& file, std::string_view text) {
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(text.data(), std::streamsize(text.size()));
        if (!out) throw std::runtime_error("test cannot write " + file.string());
    }

private:
    std::filesystem::path path_;
};

} // namespace numgap_test
