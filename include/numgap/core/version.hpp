#pragma once
// The single source of numgap's version; CMake parses these three lines.
#define NUMGAP_VERSION_MAJOR 0
#define NUMGAP_VERSION_MINOR 1
#define NUMGAP_VERSION_PATCH 0

namespace numgap {
inline constexpr int version_major = NUMGAP_VERSION_MAJOR;
inline constexpr int version_minor = NUMGAP_VERSION_MINOR;
inline constexpr int version_patch = NUMGAP_VERSION_PATCH;
} // namespace numgap
