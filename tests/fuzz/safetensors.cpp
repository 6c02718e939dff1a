// libFuzzer target: one safetensors file (io/safetensors.hpp,
// io/safetensors_run.hpp). The input is the file's bytes.
// The header is parsed straight from the bytes and every entry numgap can
// compute with is viewed and read through the kernels; then the bytes are
// written to a file in the process's scratch directory and opened as a run,
// which detects the format from the content, maps the file and loads every
// key (copying misaligned data into an aligned buffer first). Last, the file
// is added to a safetensors_tensors on its own, whose compact records must
// agree with the parsed index key by key, or fail with the parser's message.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include <fcntl.h>

#include <numgap/core/error.hpp>
#include <numgap/io/run_directory.hpp>
#include <numgap/io/safetensors.hpp>
#include <numgap/io/safetensors_run.hpp>

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

[[noreturn]] void disagree(const std::string& what) {
    std::fprintf(stderr, "numgap fuzz: safetensors_tensors and parse_safetensors_header disagree: %s\n", what.c_str());
    std::abort();
}

// The run's compact records against the parsed index (or both refusals,
// with one message). The file is the one parse_then_load_as_run wrote.
void compare_records(std::span<const std::byte> bytes) {
    std::optional<numgap::io::safetensors_index> index;
    std::string parse_failure;
    try {
        index = numgap::io::parse_safetensors_header(bytes, "fuzz.safetensors");
    } catch (const numgap::error& failure) {
        parse_failure = failure.what();
    }
    const std::filesystem::path path = numgap::fuzz::scratch_directory() / "fuzz.safetensors";
    numgap::io::safetensors_tensors tensors;
    try {
        tensors.add("fuzz.safetensors", numgap::io::file_descriptor(::open(path.c_str(), O_RDONLY | O_CLOEXEC)),
                    "fuzz.safetensors");
    } catch (const numgap::error& failure) {
        if (index || parse_failure != failure.what()) disagree(std::string("add refused: ") + failure.what());
        return;
    }
    if (!index) disagree("add accepted what the parser refused: " + parse_failure);
    if (tensors.size() != index->entries.size()) disagree("key counts");
    for (const numgap::io::safetensors_entry& entry : index->entries) {
        const auto where = tensors.find(entry.key);
        if (!where || where->key != entry.key || where->dtype_name != entry.dtype_name || where->type != entry.type ||
            !std::equal(where->shape.begin(), where->shape.end(), entry.shape.begin(), entry.shape.end()) ||
            where->begin != entry.begin || where->end != entry.end)
            disagree("key '" + entry.key + "'");
    }
}

NUMGAP_FUZZ_TARGET(safetensors) {
    const std::span<const std::byte> bytes = numgap::fuzz::as_bytes(data, size);
    numgap::fuzz::parse_then_load_as_run(bytes, "fuzz.safetensors", read_header_entries);
    compare_records(bytes);
    return 0;
}

} // namespace safetensors_target
