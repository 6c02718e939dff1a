// libFuzzer target: one .npz archive (io/npz.hpp, io/inflate.hpp, io/crc32.hpp).
// The input is the archive's bytes. npz_archive opens only paths, so the bytes
// go to a file in the process's scratch directory (on tmpfs where TMPDIR
// points there). Every member is read - inflated and CRC-checked when deflated
// - and every "<key>.npy" member is also loaded through run_directory, which
// parses its header, realigns it when needed and reads every element.
// A member may claim up to 1032 times its compressed size (deflate's own
// maximum; larger claims are refused before anything is allocated), so keep
// -rss_limit_mb/-malloc_limit_mb above 1032 * -max_len.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/io/npz.hpp>
#include <numgap/io/run_directory.hpp>

#include "fuzz_support.hpp"

// A namespace of its own: the targets are compiled together (CMakeLists.txt).
namespace npz_target {

// The one place this target calls the archive API.
void read_every_member(const std::filesystem::path& path) {
    const numgap::io::npz_archive archive = numgap::io::npz_archive::open(path);
    std::unique_ptr<std::byte[]> storage;
    for (const numgap::io::npz_member& member : archive.members()) {
        try {
            (void)archive.member_bytes(member, storage);
        } catch (const numgap::error& failure) {
            // One bad member must not hide the others.
            numgap::fuzz::refused(failure);
        }
    }
}

NUMGAP_FUZZ_TARGET(npz) {
    static const std::filesystem::path path = numgap::fuzz::scratch_directory() / "fuzz.npz";
    if (!numgap::fuzz::write_file(path, numgap::fuzz::as_bytes(data, size)))
        numgap::fuzz::environment_failure("cannot write '" + path.string() + "'");
    try {
        read_every_member(path);
    } catch (const numgap::error& failure) {
        numgap::fuzz::refused(failure);
    }
    try {
        numgap::fuzz::load_every_tensor(path);
    } catch (const numgap::error& failure) {
        numgap::fuzz::refused(failure);
    }
    return 0;
}

} // namespace npz_target
