// libFuzzer target: one ExecuTorch ETDump file (io/flatbuffer.hpp,
// io/etdump.hpp, io/etdump_run.hpp, io/etdump_source.hpp). The input is the
// ETDump's bytes, and the same bytes serve as its debug buffer, so tensor
// offsets land in (or past) data the fuzzer controls.
// The bytes are parsed in memory; then they are written to a file in the
// process's scratch directory and opened as a run (detected by content) with
// that file as debug buffer, for run 0 and run 1 (#run=N) and without a
// selector, and every tensor of each is loaded and read through the kernels.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include <numgap/core/error.hpp>
#include <numgap/io/etdump.hpp>
#include <numgap/io/run_directory.hpp>

#include "fuzz_support.hpp"

// A namespace of its own: the targets are compiled together (CMakeLists.txt).
namespace etdump_target {

NUMGAP_FUZZ_TARGET(etdump) {
    const std::span<const std::byte> bytes = numgap::fuzz::as_bytes(data, size);
    try {
        (void)numgap::io::parse_etdump(bytes, "fuzz.etdp");
    } catch (const numgap::error& failure) {
        numgap::fuzz::refused(failure);
    }
    static const std::filesystem::path path = numgap::fuzz::scratch_directory() / "fuzz.etdp";
    if (!numgap::fuzz::write_file(path, bytes)) numgap::fuzz::environment_failure("cannot write '" + path.string() + "'");
    numgap::io::read_policy policy;
    policy.debug_buffer = path;
    for (const std::string suffix : {"", "#run=0", "#run=1"}) {
        try {
            const numgap::io::run_directory run = numgap::io::run_directory::open(path.string() + suffix, policy);
            for (const std::string& key : run.keys()) {
                try {
                    numgap::fuzz::read_every_element(run.load(key).view());
                } catch (const numgap::error& failure) {
                    numgap::fuzz::refused(failure);
                }
            }
        } catch (const numgap::error& failure) {
            numgap::fuzz::refused(failure);
        }
    }
    return 0;
}

} // namespace etdump_target
