// libFuzzer target: a QNN converter model JSON (io/qnn_net_json.hpp) and the
// QNN raw output folder it describes (io/qnn_raw_source.hpp). The input is
// the JSON's bytes. It is parsed straight from the bytes; then it is written
// to the process's scratch directory next to a fixed folder of .raw files
// (0, 1, 12 and 48 bytes, named after the tensors the seeds describe) and the
// folder is opened with the JSON as --qnn-net-json, loading every tensor the
// JSON describes and reading it through the kernels.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <numgap/core/error.hpp>
#include <numgap/io/qnn_net_json.hpp>
#include <numgap/io/run_directory.hpp>

#include "fuzz_support.hpp"

// A namespace of its own: the targets are compiled together (CMakeLists.txt).
namespace qnn_net_json_target {

// The raw folder, written once per process.
const std::filesystem::path& raw_folder() {
    static const std::filesystem::path folder = [] {
        const std::filesystem::path path = numgap::fuzz::scratch_directory() / "qnn";
        std::error_code failure;
        std::filesystem::create_directories(path, failure);
        if (failure) numgap::fuzz::environment_failure("cannot create '" + path.string() + "'");
        const std::vector<std::byte> bytes(48, std::byte{0x3f});
        for (const auto& [name, size] : {std::pair{"empty", 0}, {"t", 1}, {"x", 12}, {"conv_out", 48}})
            if (!numgap::fuzz::write_file(path / (std::string(name) + ".raw"), std::span(bytes.data(), std::size_t(size))))
                numgap::fuzz::environment_failure("cannot write the raw files under '" + path.string() + "'");
        return path;
    }();
    return folder;
}

NUMGAP_FUZZ_TARGET(qnn_net_json) {
    const std::span<const std::byte> bytes = numgap::fuzz::as_bytes(data, size);
    try {
        (void)numgap::io::read_qnn_net_json(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz_net.json");
    } catch (const numgap::error& failure) {
        numgap::fuzz::refused(failure);
    }
    const std::filesystem::path net_json = numgap::fuzz::scratch_directory() / "fuzz_net.json";
    if (!numgap::fuzz::write_file(net_json, bytes)) numgap::fuzz::environment_failure("cannot write '" + net_json.string() + "'");
    numgap::io::read_policy policy;
    policy.qnn_net_json = net_json;
    try {
        numgap::fuzz::load_every_tensor(raw_folder(), policy);
    } catch (const numgap::error& failure) {
        numgap::fuzz::refused(failure);
    }
    return 0;
}

} // namespace qnn_net_json_target
