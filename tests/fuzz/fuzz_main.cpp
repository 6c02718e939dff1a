// The libFuzzer entry points of the one fuzz program (CMakeLists.txt): the
// target is chosen once, before the first input, by the program's name -
// numgap_fuzz_<target>, one symbolic link per target, which is also the name
// libFuzzer's -fork / -jobs children are started under - or, for the program
// run as plain numgap_fuzz, by the environment variable NUMGAP_FUZZ_TARGET.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "fuzz_support.hpp"

namespace {

numgap::fuzz::entry_point chosen = nullptr;

std::string_view base_name(const char* path) {
    const std::string_view text = path;
    const std::size_t slash = text.rfind('/');
    return slash == std::string_view::npos ? text : text.substr(slash + 1);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    constexpr std::string_view prefix = "numgap_fuzz_";
    std::string_view wanted;
    const std::string_view program = *argc > 0 ? base_name((*argv)[0]) : std::string_view{};
    if (program.substr(0, prefix.size()) == prefix) wanted = program.substr(prefix.size());
    else if (const char* variable = std::getenv("NUMGAP_FUZZ_TARGET")) wanted = variable;
    for (const numgap::fuzz::fuzz_target& target : numgap::fuzz::linked_targets())
        if (wanted == target.name) chosen = target.run;
    if (chosen == nullptr) {
        std::fprintf(stderr, "numgap fuzz: no target '%.*s'; run as numgap_fuzz_<target> or set NUMGAP_FUZZ_TARGET to one of:",
                     int(wanted.size()), wanted.data());
        for (const numgap::fuzz::fuzz_target& target : numgap::fuzz::linked_targets()) std::fprintf(stderr, " %s", target.name);
        std::fprintf(stderr, "\n");
        std::exit(2);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) { return chosen(data, size); }
