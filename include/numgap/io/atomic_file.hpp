#pragma once
// Writing a file so that it is either complete or absent: the text goes to a
// temporary file in the target's directory, which is renamed onto the target
// only once everything was written and closed; on any failure the temporary
// is removed and the target is left as it was (absent, or its old content).
//
// Why: a full disk, a file-size limit or an I/O error in the middle of a
// report used to leave a truncated CSV/JSON/DOT that a CI job or a notebook
// then read as if it were whole. rename() within one directory replaces the
// target atomically on POSIX file systems, and the temporary is created with
// O_EXCL (fopen "x"), so it never reuses or follows a file someone else put
// there; its name starts with '.' and ends with ".tmp" so it is recognisable
// if a crash leaves it behind.
// No fsync: the reports can be regenerated, and syncing every file costs
// more than it protects; after a power loss the target may hold the old
// content, the new content or nothing, but never a mix of both.
// If the target is a symbolic link, the link itself is replaced by the new
// file (the file it pointed to is left alone): numgap writes the paths it was
// given, not where a link in them leads.
// This is the io layer because both io's writers (write_npy, used for the
// failing-pair dumps) and the report writers go through it, and data flows
// from io upward.
// Complexity: O(size of the text). Throws: numgap::error naming the file, what
// it is and the OS reason.
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#include <numgap/core/error.hpp>

namespace numgap::io {

// An empty file created next to `target`, removed when this goes out of scope
// unless commit() renamed it onto the target.
class temporary_file {
public:
    temporary_file(const std::filesystem::path& target, std::string_view what)
        : target_(target), what_(what) {
        const std::filesystem::path directory = target.parent_path();
        // Shortened so that a target name near the 255-byte limit still leaves room.
        const std::string stem =
            "." + target.filename().string().substr(0, 200) + ".numgap-" + std::to_string(process_id()) + "-";
        for (unsigned attempt = 0;; ++attempt) {
            path_ = directory / (stem + std::to_string(attempt) + ".tmp");
            if (std::FILE* file = std::fopen(path_.c_str(), "wbx")) {
                std::fclose(file);
                return;
            }
            if (errno != EEXIST || attempt == 1000)
                throw error(error_kind::io,
                            "cannot write " + what_ + " '" + target_.string() + "': creating a temporary file in '" +
                                (directory.empty() ? std::string(".") : directory.string()) +
                                "' failed: " + std::generic_category().message(errno),
                            error_location::in_file(target_.string()));
        }
    }
    temporary_file(const temporary_file&) = delete;
    temporary_file& operator=(const temporary_file&) = delete;
    ~temporary_file() {
        if (committed_) return;
        std::error_code ignored;
        std::filesystem::remove(path_, ignored);
    }

    const std::filesystem::path& path() const noexcept { return path_; }

    // Renames the temporary onto the target; on failure the temporary is
    // still removed by the destructor.
    void commit() {
        std::error_code failure;
        std::filesystem::rename(path_, target_, failure);
        if (failure)
            throw error(error_kind::io,
                        "cannot write " + what_ + " '" + target_.string() +
                            "': moving the finished file into place failed: " + failure.message(),
                        error_location::in_file(target_.string()));
        committed_ = true;
    }

    // Keeps the file instead of removing it: under the target's name when no
    // file has that name (a hard link, which never replaces one), else under
    // its temporary name. Returns where it is.
    std::filesystem::path keep() {
        committed_ = true;
        std::error_code failure;
        std::filesystem::create_hard_link(path_, target_, failure);
        if (failure) return path_;
        std::filesystem::remove(path_, failure);
        return target_;
    }

private:
    static long process_id() noexcept {
#if defined(__unix__) || defined(__APPLE__)
        return long(::getpid());
#else
        return 0;
#endif
    }

    std::filesystem::path target_, path_;
    std::string what_;
    bool committed_ = false;
};

// A file written in pieces (a report of a million rows is streamed, not
// built as one string) through a temporary_file: write() appends, commit()
// closes it and renames it onto the target. Until commit() the target is
// untouched, and on any error (or without commit) the temporary is removed.
// `what` names the file in errors ("CSV report").
class atomic_text_file {
public:
    atomic_text_file(const std::filesystem::path& path, std::string_view what)
        : path_(path), what_(what), temporary_(path, what), file_(std::fopen(temporary_.path().c_str(), "wb")) {
        if (!file_)
            throw error(error_kind::io,
                        "cannot write " + what_ + " '" + path_.string() + "': " + std::generic_category().message(errno),
                        error_location::in_file(path_.string()));
    }
    atomic_text_file(const atomic_text_file&) = delete;
    atomic_text_file& operator=(const atomic_text_file&) = delete;
    ~atomic_text_file() {
        if (file_) std::fclose(file_);
    }

    void write(std::string_view text) {
        if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) fail(errno);
    }

    void commit() {
        const int write_errno = std::ferror(file_) ? errno : 0;
        const bool closed = std::fclose(file_) == 0;
        const int close_errno = errno;
        file_ = nullptr;
        if (write_errno != 0 || !closed) fail(write_errno != 0 ? write_errno : close_errno);
        temporary_.commit();
    }

private:
    [[noreturn]] void fail(int code) const {
        throw error(error_kind::io,
                    "writing " + what_ + " '" + path_.string() + "' failed (" + std::generic_category().message(code) +
                        "); the file was left as it was",
                    error_location::in_file(path_.string()));
    }

    std::filesystem::path path_;
    std::string what_;
    temporary_file temporary_;
    std::FILE* file_;
};

// Writes `text` to `path` through a temporary_file; `what` names the file in
// errors ("CSV report").
inline void write_file_atomically(const std::filesystem::path& path, std::string_view text, std::string_view what) {
    atomic_text_file file(path, what);
    file.write(text);
    file.commit();
}

// Writes the text `produce(chunk, flush)` appends to `chunk` to `path`
// through an atomic_text_file, handing over each chunk produce flushes, so
// memory holds one chunk rather than the whole text (the report writers).
template <class Produce>
void write_text_in_chunks(const std::filesystem::path& path, std::string_view what, Produce&& produce) {
    atomic_text_file file(path, what);
    std::string chunk;
    std::forward<Produce>(produce)(chunk, [&](std::string& text) {
        file.write(text);
        text.clear();
    });
    file.write(chunk);
    file.commit();
}

} // namespace numgap::io
