#!/usr/bin/env bash
# Builds and runs every numgap test on a fresh Debian 12 machine:
#   1. installs missing build dependencies (cmake/install-deps.sh),
#   2. builds tests, benchmarks and examples, runs CTest (unit tests, header
#      checks, the compile-fail test, both consumer builds, CLI tests and a
#      brief benchmark smoke run),
#   3. rebuilds the tests with clang++, AddressSanitizer and
#      UndefinedBehaviorSanitizer, with the libFuzzer targets beside them
#      (tests/fuzz), and runs both: the whole suite again, and each fuzz
#      target for a fixed number of inputs on its seed corpus (a smoke run,
#      not a timing),
#   4. with NUMGAP_TEST_CLANG=1, builds the tests, the examples and the CLI
#      with clang++ optimised (RelWithDebInfo) and runs them.
# Usage: bash cmake/run-tests.sh
#        (build folders: build/, build-sanitize/, build-clang/)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

bash cmake/install-deps.sh

# Release at -O2 without debug information: the same optimiser as
# RelWithDebInfo, and a third less compile time (CI's budget is 30 minutes).
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG"
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

# The sanitizer build is clang's: g++ 12 took twice the CPU time on the
# instrumented -O0 test units (52 s against 25 s for tests/metric), and the
# suite then runs built by both compilers. The fuzz targets (clang only) share
# the build and the CTest run, so their smoke runs share the cores with the
# suite's two entries (tests/CMakeLists.txt); for a smoke run they are built at
# -O0 (-O1, their default for fuzzing, took 3x the compile time).
cmake -S . -B build-sanitize -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug -DNUMGAP_SANITIZE=ON \
    -DNUMGAP_FUZZ=ON -DNUMGAP_FUZZ_OPTIMIZATION=-O0 \
    -DNUMGAP_BUILD_BENCHMARKS=OFF -DNUMGAP_HEADER_CHECK=OFF -DNUMGAP_INSTALL=OFF
cmake --build build-sanitize -j "$jobs"
# dispatch_odr, the consumer builds, the compile-fail test and the capture
# script compile or run programs of their own: they ran in the build above.
ctest --test-dir build-sanitize --output-on-failure -j "$jobs" \
    -E "^(dispatch_odr|consumer_.*|compile_fail_.*|torch_capture)$"

# clang 14 compiles the umbrella header (and xtensor.hpp) warning-free: a few
# seconds, always (the sanitizer build above compiles the tests with clang).
printf '#include <numgap/numgap.hpp>\n#include <numgap/xtensor.hpp>\nint main() { return 0; }\n' |
    clang++ -std=c++20 -Wall -Wextra -Wpedantic -Werror -Iinclude -x c++ - -fsyntax-only

# The suite with clang optimised (item 9 of issue 11: users build numgap with
# both compilers; the sanitizer build above is clang's at -O0). Benchmarks, the
# per-header checks and the install/consumer tests are left to the GCC build
# above. Opt-in (NUMGAP_TEST_CLANG=1): it adds about 7 minutes on 2 cores.
if [ "${NUMGAP_TEST_CLANG:-0}" = 1 ]; then
    cmake -S . -B build-clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DNUMGAP_BUILD_BENCHMARKS=OFF -DNUMGAP_HEADER_CHECK=OFF -DNUMGAP_INSTALL=OFF
    cmake --build build-clang -j "$jobs"
    ctest --test-dir build-clang --output-on-failure -j "$jobs"
fi
