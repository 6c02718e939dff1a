#pragma once
// numgap::io::mapped_file: a whole file mapped read-only into memory (RAII).
//
// Why: tensors are read straight out of the page cache with no copy, so peak
// memory stays near the tensors being compared and runs larger than RAM work.
// The mapping is MAP_PRIVATE + PROT_READ; an empty file is not mapped at all
// (mmap of length 0 fails) and yields an empty span.
//
// Access hints (measured on this project's dev machine, 256 MiB file, warm page
// cache, mapping + reading every byte, best of 5): MADV_SEQUENTIAL 39.4 ms,
// MAP_POPULATE 31.4 ms, read() into a std::vector 173 ms. Populating is ~20%
// faster when the whole file is consumed at once, but it faults in every page
// up front, so it is only used where that is known to happen (a single .npy
// tensor), never for an .npz archive of which one member is read at a time.
//
// release_pages(offset, length) hands whole pages of a part read once back to
// the OS (a header whose contents were copied out, a tensor compared in
// place); they are read from the file again if touched. Advisory: it changes
// memory use, never results.
//
// Truncation: a mapping keeps its file descriptor and registers with the
// truncation guard (truncation_guard.hpp); check_intact() throws "file '...'
// was truncated while being read" when the file shrank under the mapping.
//
// Complexity: O(1) to open with map_hint::sequential; O(size) page faults with
// map_hint::populate. Throws numgap::error naming the file and the OS reason
// (errno text) when the file cannot be opened, is not a regular file, or
// cannot be mapped. Moving transfers the mapping; the object is not copyable.
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <numgap/core/error.hpp>
#include <numgap/io/file_descriptor.hpp>
#include <numgap/io/truncation_guard.hpp>

namespace numgap::io {

enum class map_hint {
    sequential, // madvise(MADV_SEQUENTIAL): pages fault in lazily, read-ahead is aggressive
    populate,   // MAP_POPULATE: every page is faulted in before open() returns
};

class mapped_file {
public:
    mapped_file() = default;

    static mapped_file open(const std::filesystem::path& path,
                            map_hint hint = map_hint::sequential) {
        file_descriptor descriptor(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (!descriptor.valid()) {
            const int code = errno;
            mapped_file failed;
            failed.path_ = path;
            throw failed.os_failure("cannot open", code);
        }
        return map(std::move(descriptor), path, hint);
    }

    // Maps the file `descriptor` refers to (opened by the caller, e.g. with
    // open_confined); `path` only names the file in messages and path().
    static mapped_file map(file_descriptor descriptor, const std::filesystem::path& path,
                           map_hint hint = map_hint::sequential) {
        mapped_file file;
        file.path_ = path;
        struct stat status {};
        if (::fstat(descriptor.get(), &status) != 0) throw file.os_failure("cannot stat", errno);
        if (!S_ISREG(status.st_mode))
            throw error(error_kind::io, "cannot map '" + path.string() + "': it is not a regular file",
                        error_location::in_file(path.string()));
        file.size_ = static_cast<std::size_t>(status.st_size);
        if (file.size_ == 0) return file;

        const int flags = MAP_PRIVATE | (hint == map_hint::populate ? MAP_POPULATE : 0);
        void* address = ::mmap(nullptr, file.size_, PROT_READ, flags, descriptor.get(), 0);
        if (address == MAP_FAILED) {
            file.size_ = 0;
            throw file.os_failure("cannot map", errno);
        }
        file.data_ = static_cast<const std::byte*>(address);
        file.watch_ = truncation_watch(address, file.size_);
        file.descriptor_ = std::move(descriptor); // to tell later whether the file shrank
        // Advisory only: a failure changes performance, never results.
        if (hint == map_hint::sequential) ::madvise(address, file.size_, MADV_SEQUENTIAL);
        return file;
    }

    mapped_file(const mapped_file&) = delete;
    mapped_file& operator=(const mapped_file&) = delete;
    mapped_file(mapped_file&& other) noexcept
        : path_(std::move(other.path_)), descriptor_(std::move(other.descriptor_)),
          watch_(std::move(other.watch_)), data_(std::exchange(other.data_, nullptr)),
          size_(std::exchange(other.size_, 0)) {}
    mapped_file& operator=(mapped_file&& other) noexcept {
        if (this != &other) {
            unmap();
            path_ = std::move(other.path_);
            descriptor_ = std::move(other.descriptor_);
            watch_ = std::move(other.watch_);
            data_ = std::exchange(other.data_, nullptr);
            size_ = std::exchange(other.size_, 0);
        }
        return *this;
    }
    ~mapped_file() { unmap(); }

    std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
    const std::byte* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    const std::filesystem::path& path() const noexcept { return path_; }

    // False once the file is shorter than the mapping or the truncation guard
    // had to stand in for a page of it: some bytes read may have been zeros
    // instead of the file's. Cheap (one fstat): call it after reading.
    bool intact() const noexcept {
        if (size_ == 0) return true;
        struct stat status {};
        const bool shrank = descriptor_.valid() && ::fstat(descriptor_.get(), &status) == 0 &&
                            std::uint64_t(status.st_size) < size_;
        return !shrank && !watch_.faulted();
    }
    void check_intact() const {
        if (!intact()) throw truncated();
    }
    // The guard's half of intact(), without the fstat: whether the guard
    // stood in for a page of this mapping. For a caller that checks the size
    // once after reading many tensors of one mapping (compare_runs, for a
    // safetensors file of a million tensors), and the fault now.
    bool faulted() const noexcept { return size_ != 0 && watch_.faulted(); }
    void check_not_faulted() const {
        if (faulted()) throw truncated();
    }

    // Hands the pages of bytes [offset, offset + length) back to the OS
    // (MADV_DONTNEED): they leave this process's resident memory and are read
    // from the file again if touched. For a part read once: a safetensors
    // header whose contents were copied out (70 MB for a million keys), a
    // tensor compared in place (loaded_tensor::release_run_pages).
    // Only whole pages inside the range go; advisory, a failure changes
    // memory use, never results.
    void release_all_pages() const noexcept { release_pages(0, size_); }
    void release_pages(std::size_t offset, std::size_t length) const noexcept {
        if (offset >= size_ || length == 0) return;
        const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
        const std::size_t end = offset + std::min(length, size_ - offset);
        const std::size_t first = (offset + page - 1) / page * page, last = end / page * page;
        if (first < last) ::madvise(const_cast<std::byte*>(data_) + first, last - first, MADV_DONTNEED);
    }

private:
    error truncated() const {
        return error(error_kind::io,
                     "file '" + path_.string() + "' was truncated while being read (it had " + std::to_string(size_) +
                         " bytes when mapped); its data cannot be trusted",
                     error_location::in_file(path_.string()));
    }
    // The io error for a refused system call on this file.
    error os_failure(const char* what, int code) const {
        return error(error_kind::io,
                     std::string(what) + " '" + path_.string() + "': " + std::generic_category().message(code),
                     error_location::in_file(path_.string()));
    }
    void unmap() noexcept {
        watch_ = truncation_watch(); // before the range can be reused by another mapping
        if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
        data_ = nullptr;
        size_ = 0;
    }

    std::filesystem::path path_;
    file_descriptor descriptor_;
    truncation_watch watch_;
    const std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace numgap::io
