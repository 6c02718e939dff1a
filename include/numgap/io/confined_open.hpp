#pragma once
// numgap::io::open_confined: opens a path a run names (graph.json "file", a
// listed .npy) so that it cannot leave the run directory, or the directories
// the user explicitly allowed (read_policy::allowed_roots).
//
// The rule: a path resolves the way the kernel would resolve it, symbolic
// links included, but every step is taken relative to a directory descriptor
// already held, and the result must stay beneath one of the roots:
//  - relative paths start at roots[0] (the run); absolute paths must lie
//    lexically inside a root;
//  - `..` pops the directory last entered (it is never opened, so renaming
//    directories during the walk cannot move the walk elsewhere); `..` above
//    a root, or an absolute symbolic link target, makes the walk continue from
//    the lexical destination (root path + names walked + the rest) - allowed
//    only when that destination lies inside a root, and then it restarts from
//    that root's descriptor;
//  - each component is opened with openat(O_NOFOLLOW); a symbolic link is
//    read (readlinkat) and its target walked by the same rules, at most 40
//    links per path (as the kernel's ELOOP limit).
// Because nothing is checked first and opened later, a link swapped in after
// a check cannot redirect a read: there is no check separate from the open.
// This is what openat2(RESOLVE_BENEATH) gives on Linux >= 5.6; the walk is
// used everywhere instead so that one mechanism, tested on every machine,
// decides (and it also implements the allowed roots, which openat2 cannot).
// Files are opened O_NONBLOCK (a FIFO named x.npy must not hang numgap) and
// must be regular files.
//
// Errors: confined_open_error (a numgap::error) whose kind says whether the
// path does not exist, leads outside every root, is not a regular file, or
// failed with an OS error, and whose message gives the reason; callers
// prefix the run and the entry. Complexity: O(components + link targets)
// system calls.
#include <cerrno>
#include <climits>
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <numgap/core/error.hpp>
#include <numgap/io/file_descriptor.hpp>

namespace numgap::io {

// A directory files may be opened beneath: its descriptor, held open, and its
// absolute, lexically normal path, as typed and resolved (to tell which root a
// path enters).
class confined_root {
public:
    // The directory itself is the user's choice: symbolic links in `directory` are followed.
    static confined_root open(const std::filesystem::path& directory) {
        confined_root root;
        std::error_code failure;
        root.path_ = std::filesystem::absolute(directory, failure).lexically_normal();
        if (failure) root.path_ = directory.lexically_normal();
        root.resolved_path_ = std::filesystem::weakly_canonical(root.path_, failure);
        if (failure) root.resolved_path_ = root.path_;
        root.descriptor_ = file_descriptor(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!root.descriptor_.valid())
            throw error(error_kind::io,
                        "cannot open directory '" + directory.string() + "': " + std::generic_category().message(errno),
                        error_location::in_file(directory.string()));
        return root;
    }
    int descriptor() const noexcept { return descriptor_.get(); }
    const std::filesystem::path& path() const noexcept { return path_; }
    // The same directory with symbolic links resolved: an absolute path may name
    // the directory either way ("/data/shared" as typed or the "/mnt/x/shared" it links to).
    const std::filesystem::path& resolved_path() const noexcept { return resolved_path_; }

private:
    std::filesystem::path path_, resolved_path_;
    file_descriptor descriptor_;
};

enum class confined_target { file, directory };

// An io error (error_kind::io, where() naming the entry asked for) that also
// says which of the refusals happened, so run_directory can word its message.
class confined_open_error : public error {
public:
    enum class kind { not_found, outside, not_regular, os_failure };
    confined_open_error(kind what, const std::string& reason, error_location where = {})
        : error(error_kind::io, reason, std::move(where)), kind_(what) {}
    kind reason_kind() const noexcept { return kind_; }

private:
    kind kind_;
};

namespace detail {

// The components of `path` to walk, next one last; "" and "." are dropped.
inline void push_components(std::vector<std::string>& pending, std::string_view path) {
    std::vector<std::string> components;
    std::size_t start = 0;
    while (start <= path.size()) {
        const std::size_t slash = std::min(path.find('/', start), path.size());
        const std::string_view component = path.substr(start, slash - start);
        if (!component.empty() && component != ".") components.emplace_back(component);
        start = slash + 1;
    }
    pending.insert(pending.end(), components.rbegin(), components.rend());
}

inline bool lies_inside(const std::filesystem::path& path, const std::filesystem::path& root) {
    const std::filesystem::path relative = path.lexically_relative(root);
    return !relative.empty() && *relative.begin() != "..";
}

} // namespace detail

// Opens `entry` beneath roots[0] (relative) or beneath the root it names
// (absolute), following the rules above. `roots` must not be empty.
inline file_descriptor open_confined(std::span<const confined_root> roots, std::string_view entry,
                                     confined_target target) {
    using failure = confined_open_error::kind;
    const auto refused = [&](failure what, const std::string& reason) {
        return confined_open_error(what, reason, error_location::in_file(std::string(entry)));
    };
    if (entry.find('\0') != std::string_view::npos)
        throw refused(failure::not_found, "the path contains a NUL character");
    const confined_root* root = &roots.front();
    std::vector<std::string> pending; // next component last
    std::vector<file_descriptor> entered;
    std::vector<std::string> entered_names;
    int links = 0;

    // Continue from the lexical destination `logical`, if a root contains it.
    const auto enter_root_containing = [&](const std::filesystem::path& logical) {
        const std::filesystem::path normal = logical.lexically_normal();
        for (const confined_root& candidate : roots) {
            for (const std::filesystem::path* base : {&candidate.path(), &candidate.resolved_path()}) {
                if (normal != *base && !detail::lies_inside(normal, *base)) continue;
                root = &candidate;
                entered.clear();
                entered_names.clear();
                pending.clear();
                if (normal != *base)
                    detail::push_components(pending, normal.lexically_relative(*base).generic_string());
                return;
            }
        }
        throw refused(failure::outside, "it leads to '" + normal.string() + "', outside the run directory" +
                                            (roots.size() > 1 ? " and every allowed directory" : ""));
    };
    // Where the walk stands, lexically, followed by what is still to walk.
    const auto destination = [&](std::filesystem::path start) {
        for (auto name = pending.rbegin(); name != pending.rend(); ++name) start /= *name;
        return start;
    };
    const auto current_path = [&] {
        std::filesystem::path here = root->path();
        for (const std::string& name : entered_names) here /= name;
        return here;
    };

    if (!entry.empty() && entry.front() == '/')
        enter_root_containing(std::filesystem::path(entry));
    else
        detail::push_components(pending, entry);

    while (!pending.empty()) {
        std::string name = std::move(pending.back());
        pending.pop_back();
        if (name == "..") {
            if (entered.empty()) {
                pending.push_back("..");
                enter_root_containing(destination(root->path()));
            } else {
                entered.pop_back();
                entered_names.pop_back();
            }
            continue;
        }
        const int at = entered.empty() ? root->descriptor() : entered.back().get();
        const bool last = pending.empty();
        const int flags = O_CLOEXEC | O_NOFOLLOW |
                          (!last ? O_PATH | O_DIRECTORY
                                 : target == confined_target::file ? O_RDONLY | O_NONBLOCK : O_RDONLY | O_DIRECTORY);
        file_descriptor opened(::openat(at, name.c_str(), flags));
        if (!opened.valid()) {
            const int code = errno;
            char link_target[PATH_MAX];
            const ssize_t length = ::readlinkat(at, name.c_str(), link_target, sizeof link_target);
            if (length < 0 || std::size_t(length) == sizeof link_target) {
                const std::string where = (current_path() / name).string();
                if (code == ENOENT) throw refused(failure::not_found, "'" + where + "' does not exist");
                throw refused(failure::os_failure,
                              "cannot open '" + where + "': " + std::generic_category().message(code));
            }
            if (++links > 40)
                throw refused(failure::os_failure,
                              "more than 40 symbolic links (a loop?) at '" + (current_path() / name).string() + "'");
            const std::string_view link(link_target, std::size_t(length));
            if (!link.empty() && link.front() == '/')
                enter_root_containing(destination(std::filesystem::path(link)));
            else
                detail::push_components(pending, link);
            continue;
        }
        if (last) {
            if (target == confined_target::file) {
                struct stat status {};
                if (::fstat(opened.get(), &status) != 0 || !S_ISREG(status.st_mode))
                    throw refused(failure::not_regular,
                                  "'" + (current_path() / name).string() + "' is not a regular file");
            }
            return opened;
        }
        entered.push_back(std::move(opened));
        entered_names.push_back(std::move(name));
    }
    // The path names a root or a directory already entered.
    const int here = entered.empty() ? root->descriptor() : entered.back().get();
    if (target == confined_target::file)
        throw refused(failure::not_regular, "'" + current_path().string() + "' is a directory");
    file_descriptor reopened(::openat(here, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!reopened.valid())
        throw refused(failure::os_failure,
                      "cannot open '" + current_path().string() + "': " + std::generic_category().message(errno));
    return reopened;
}

} // namespace numgap::io
