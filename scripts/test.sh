#!/usr/bin/env bash
# Installs dependencies, builds the tools and the test suite (no benchmarks)
# and runs every test. This is the command CI runs (.ci/run) and the one
# README.md gives. It does not install python3-matplotlib (NEURALSIM_PLOTS=1
# does): the tools' plots are optional, and the one test that draws a plot
# checks the PNG only where matplotlib is installed (e.g. after demo.sh).
# Nor does it compile through ccache: CI's machine is fresh, every unit a
# miss (a developer rebuilding incrementally runs ninja in build/).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
# A new build directory is configured with Clang (setup.sh installs it
# where it is missing, ~10 s): a clean build takes a third less time than
# with GCC, mostly because the test code compiles at -O0 (CMakeLists.txt).
# GCC builds the same code otherwise (and builds the benchmarks' figures).
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  export CC=clang CXX=clang++
fi
NEURALSIM_PLOTS="${NEURALSIM_PLOTS:-0}" NEURALSIM_CMAKE_ARGS="-DNEURALSIM_BUILD_TESTS=ON -DNEURALSIM_BUILD_BENCH=OFF -DNEURALSIM_CCACHE=OFF ${NEURALSIM_CMAKE_ARGS:-}" \
  scripts/setup.sh "$build_dir"
# setup.sh installed the tests' independent oracles (Ipopt, MuJoCo, h5py), and CI
# has ../shared beside the checkout (robot models, real recordings): a test
# that finds either missing fails instead of skipping.
NEURALSIM_REQUIRE_ORACLES=1 ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
