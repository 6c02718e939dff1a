// libFuzzer target: one safetensors file (io/safetensors.hpp,
// io/safetensors_run.hpp). The input is the file's bytes.
// The header is parsed straight from the bytes and every entry numgap can
// compute with is viewed and read through the kernels; then the bytes are
// written to a file in the process's scratch directory and opened as a run,
// which detects the format from the content, maps the file and loads every
// key (copying misaligned data into an aligned buffer first).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include <numgap/core/error.hpp>
#include <numgap/io/run_directory.hpp>
#include <numgap/io/safetensors.hpp>

#include "fuzz_support.hpp"

// A namespace of its own: the targets are compiled together (CMakeLists.txt).
namespace safetensors_target {

// The one place this target calls the parser. Misaligned entries are skipped
// here (safetensors_view's precondition); the run path below covers them.
void read_header_entries(std::span<const std::byte> bytes) {
    const numgap::io::safetensors_index index = numgap::io::parse_safetensors_header(bytes, "fuzz.safetensors");
    for (const numgap::io::safetensors_entry& entry : index.entries) {
        if (!entry.type) continue;
        const std::size_t alignment = numgap::size_of(*entry.type);
        if (reinterpret_cast<std::uintptr_t>(bytes.data() + entry.begin) % alignment != 0) continue;
        try {
            numgap::fuzz::read_every_element(numgap::io::safetensors_view(bytes, entry, "fuzz.safetensors"));
        } catch (const numgap::error& failure) {
            numgap::fuzz::refused(failure);
        }
    }
}

NUMGAP_FUZZ_TARGET(safetensors) {
    numgap::fuzz::parse_then_load_as_run(numgap::fuzz::as_bytes(data, size), "fuzz.safetensors", read_header_entries);
    return 0;
}

} // namespace safetensors_target
