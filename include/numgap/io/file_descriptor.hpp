#pragma once
// numgap::io::file_descriptor: owns one POSIX file descriptor and closes it.
//
// Why a type of its own: run directories keep a descriptor of the run open for
// their lifetime (every tensor is opened relative to it, see
// confined_open.hpp), and mapped_file maps from a descriptor it was handed;
// both need the descriptor closed on every path out, exceptions included.
// Move-only; a default-constructed or moved-from object holds no descriptor (-1).
#include <utility>

#include <unistd.h>

namespace numgap::io {

class file_descriptor {
public:
    file_descriptor() = default;
    explicit file_descriptor(int descriptor) noexcept : descriptor_(descriptor) {}
    file_descriptor(const file_descriptor&) = delete;
    file_descriptor& operator=(const file_descriptor&) = delete;
    file_descriptor(file_descriptor&& other) noexcept : descriptor_(std::exchange(other.descriptor_, -1)) {}
    file_descriptor& operator=(file_descriptor&& other) noexcept {
        if (this != &other) {
            close();
            descriptor_ = std::exchange(other.descriptor_, -1);
        }
        return *this;
    }
    ~file_descriptor() { close(); }

    int get() const noexcept { return descriptor_; }
    bool valid() const noexcept { return descriptor_ >= 0; }
    // Gives up ownership (e.g. to fdopendir, whose closedir closes it).
    [[nodiscard]] int release() noexcept { return std::exchange(descriptor_, -1); }

private:
    void close() noexcept {
        if (descriptor_ >= 0) ::close(descriptor_);
        descriptor_ = -1;
    }
    int descriptor_ = -1;
};

} // namespace numgap::io
