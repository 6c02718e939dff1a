// libFuzzer target: one Polygraphy RunResults JSON (io/polygraphy_json.hpp,
// io/polygraphy_source.hpp). The input is the file's bytes.
// The structure is parsed straight from the bytes and every output of every
// runner and iteration is decoded and read as a .npy through the kernels;
// then the bytes are written to a file in the process's scratch directory and
// opened as a run (detected by content when the first 4 KiB say Polygraphy),
// loading every output of the first runner.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include <numgap/core/error.hpp>
#include <numgap/io/npy.hpp>
#include <numgap/io/polygraphy_json.hpp>
#include <numgap/io/run_directory.hpp>

#include "fuzz_support.hpp"

// A namespace of its own: the targets are compiled together (CMakeLists.txt).
namespace polygraphy_json_target {

void decode_every_output(std::span<const std::byte> bytes) {
    const numgap::io::polygraphy_results results = numgap::io::parse_polygraphy_results(bytes, "fuzz.json");
    for (const numgap::io::polygraphy_runner& runner : results.runners)
        for (const numgap::io::polygraphy_iteration& iteration : runner.iterations)
            for (const numgap::io::polygraphy_output& output : iteration.outputs) {
                try {
                    std::unique_ptr<std::byte[]> storage;
                    const std::span<const std::byte> npy =
                        numgap::io::decode_polygraphy_array(bytes, output, "fuzz.json", "fuzz output", storage);
                    const numgap::io::npy_header header = numgap::io::parse_npy_header(npy, "fuzz output");
                    // operator new[] aligns the buffer; a hand-made header may still misalign the data.
                    const std::size_t alignment = numgap::size_of(header.type);
                    if (reinterpret_cast<std::uintptr_t>(npy.data() + header.data_offset) % alignment != 0) continue;
                    numgap::fuzz::read_every_element(numgap::io::npy_view(npy, header));
                } catch (const numgap::error& failure) {
                    numgap::fuzz::refused(failure);
                }
            }
}

NUMGAP_FUZZ_TARGET(polygraphy_json) {
    numgap::fuzz::parse_then_load_as_run(numgap::fuzz::as_bytes(data, size), "fuzz.json", decode_every_output);
    return 0;
}

} // namespace polygraphy_json_target
