#pragma once
// Test support: resident kilobytes of one mapping, from /proc/self/smaps
// (Linux), for tests that check pages were handed back.
#include <fstream>
#include <string>

namespace numgap_test {

// Resident kilobytes of the mapping that starts at `start`; -1 when the mapping is not listed.
inline long resident_kb(const void* start) {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool inside = false;
    const unsigned long wanted = reinterpret_cast<unsigned long>(start);
    while (std::getline(smaps, line)) {
        const std::size_t dash = line.find('-');
        if (dash != std::string::npos && dash > 0 && line.find(' ') > dash &&
            line.find_first_not_of("0123456789abcdef") == dash) {
            inside = std::stoul(line.substr(0, dash), nullptr, 16) == wanted;
            continue;
        }
        if (inside && line.rfind("Rss:", 0) == 0) return std::stol(line.substr(4));
    }
    return -1;
}

} // namespace numgap_test
