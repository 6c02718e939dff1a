#!/usr/bin/env bash
# Installs what numgap needs from Debian packages; safe to run again.
# Usage: bash cmake/install-deps.sh   (as root, or with sudo available)
set -euo pipefail

# clang and its runtime libraries build the sanitizer suite and the fuzz
# targets (cmake/run-tests.sh, tests/fuzz); the runtimes are only a
# Recommends of clang, which --no-install-recommends skips.
# libeigen3-dev is the Eigen baseline of benchmarks/kernels.cpp (benchmark-only;
# the tests smoke-run the benchmarks, so it is installed with them).
# flatbuffers-compiler (flatc) writes ETDump files for one reader test from a
# schema of numgap's own (tests/io/etdump.cpp; skipped without it).
# python3-torch and python3-torchvision run the torch_capture test
# (examples/torch_capture.py; skipped without them); on top of the rest they
# are 317 packages, 227 MB, about 3 minutes on 2 cores, so they are installed
# only with NUMGAP_WITH_TORCH=1 (CI leaves them out to stay within its time).
packages=(cmake g++ make xtensor-dev libxsimd-dev doctest-dev libbenchmark-dev libeigen3-dev clang libclang-rt-14-dev
    flatbuffers-compiler)
if [ "${NUMGAP_WITH_TORCH:-0}" = 1 ]; then packages+=(python3-torch python3-torchvision); fi
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
        missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "numgap: all build dependencies are installed"
    exit 0
fi

echo "numgap: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
