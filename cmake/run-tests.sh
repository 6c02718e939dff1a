#!/usr/bin/env bash
# Builds and runs every numgap test on a fresh Debian 12 machine:
#   1. installs missing build dependencies (cmake/install-deps.sh),
#   2. builds tests, benchmarks and examples, runs CTest (unit tests, header
#      checks, the compile-fail test, both consumer builds, CLI tests and a
#      brief benchmark smoke run),
#   3. rebuilds the tests with AddressSanitizer + UndefinedBehaviorSanitizer
#      and runs them again,
#   4. builds the tests, the examples and the CLI with clang++ (Release with
#      debug info, the second compiler users build numgap with) and runs them,
#   5. builds the libFuzzer targets with clang (tests/fuzz) and runs each for
#      a fixed number of inputs on its seed corpus (a smoke run, not a timing).
# Usage: bash cmake/run-tests.sh
#        (build folders: build/, build-sanitize/, build-clang/, build-fuzz/)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

bash cmake/install-deps.sh

# Release at -O2 without debug information: the same optimiser as
# RelWithDebInfo, and a third less compile time (CI's budget is 30 minutes).
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG"
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DNUMGAP_SANITIZE=ON \
    -DNUMGAP_BUILD_BENCHMARKS=OFF -DNUMGAP_HEADER_CHECK=OFF -DNUMGAP_INSTALL=OFF
cmake --build build-sanitize -j "$jobs"
# dispatch_odr, the consumer builds, the compile-fail test and the capture
# script compile or run programs of their own: they ran in the build above.
ctest --test-dir build-sanitize --output-on-failure -j "$jobs" \
    -E "^(dispatch_odr|consumer_.*|compile_fail_.*|torch_capture)$"

# clang 14 compiles the umbrella header (and xtensor.hpp) warning-free: a few
# seconds, always; the fuzz targets below are clang builds of the parsers too.
printf '#include <numgap/numgap.hpp>\n#include <numgap/xtensor.hpp>\nint main() { return 0; }\n' |
    clang++ -std=c++20 -Wall -Wextra -Wpedantic -Werror -Iinclude -x c++ - -fsyntax-only

# The suite again with clang (item 9 of issue 11: users build numgap with both
# compilers). Benchmarks, the per-header checks and the install/consumer tests
# are left to the GCC build above. Opt-in (NUMGAP_TEST_CLANG=1) until CI's
# 30-minute budget has room: it adds about 7 minutes on 2 cores.
if [ "${NUMGAP_TEST_CLANG:-0}" = 1 ]; then
    cmake -S . -B build-clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DNUMGAP_BUILD_BENCHMARKS=OFF -DNUMGAP_HEADER_CHECK=OFF -DNUMGAP_INSTALL=OFF
    cmake --build build-clang -j "$jobs"
    ctest --test-dir build-clang --output-on-failure -j "$jobs"
fi

# Only the fuzz targets and their CTest smoke runs: no tests, examples, install
# or dispatch units (the targets run the portable kernels).
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug -DNUMGAP_FUZZ=ON -DNUMGAP_DISPATCH=OFF \
    -DNUMGAP_BUILD_TESTS=OFF -DNUMGAP_BUILD_BENCHMARKS=OFF -DNUMGAP_BUILD_EXAMPLES=OFF -DNUMGAP_INSTALL=OFF
cmake --build build-fuzz -j "$jobs"
ctest --test-dir build-fuzz --output-on-failure -j "$jobs"
