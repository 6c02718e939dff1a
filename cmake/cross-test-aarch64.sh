#!/usr/bin/env bash
# Builds the test suite for 64-bit ARM (the NEON dispatch unit included) with
# Debian's cross compiler and runs it under qemu-user, so the NEON kernels are
# tested without an ARM machine. Not part of CI (about 45 minutes on 2 cores;
# NUMGAP_TEST_ACCURACY_LENGTH=1000000 in the environment saves 5 of them);
# run it after changing anything under include/numgap/kernels/.
# Usage: bash cmake/cross-test-aarch64.sh [build-dir]   (default build-aarch64)
set -euo pipefail

cd "$(dirname "$0")/.."
build_dir="${1:-build-aarch64}"

bash cmake/install-deps.sh
missing=()
for package in g++-aarch64-linux-gnu qemu-user; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# xsimd and xtensor are header-only, but Debian files their CMake packages
# under the host's multiarch directory, where a cross build does not look.
host_cmake="/usr/lib/$(gcc -print-multiarch)/cmake"
# The CLI tests execute the numgap binary directly, which an x86 host cannot,
# so examples (and with them the CLI) are off; those cases report SKIPPED.
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64 \
    -DCMAKE_CXX_COMPILER=aarch64-linux-gnu-g++ \
    -DCMAKE_CROSSCOMPILING_EMULATOR="qemu-aarch64;-L;/usr/aarch64-linux-gnu" \
    -Dxsimd_DIR="$host_cmake/xsimd" -Dxtensor_DIR="$host_cmake/xtensor" \
    -DNUMGAP_BUILD_BENCHMARKS=OFF -DNUMGAP_BUILD_EXAMPLES=OFF -DNUMGAP_INSTALL=OFF -DNUMGAP_HEADER_CHECK=OFF
cmake --build "$build_dir" -j "$(nproc)" --target numgap_tests
ctest --test-dir "$build_dir" --output-on-failure -R '^numgap_tests_'
