#!/usr/bin/env bash
# NeuralSim against Pinocchio (issue #40), not part of the test command.
# Builds the benchmark bench/pinocchio_compare against a Pinocchio source
# tree, header-only (its URDF parser's two .cpp files compiled in), with
# NeuralSim's Release flags, then on each URDF: both libraries load the file
# with their own parser, q̈, τ, M and the derivatives must agree at random
# states (exit 1 otherwise), and each algorithm is timed interleaved with
# its counterpart (least time per call over the samples).
#
#   scripts/bench_pinocchio.sh PINOCCHIO_SOURCE [BUILD_DIR]
#
# PINOCCHIO_SOURCE: a Pinocchio source tree, e.g. the v3.7.0 tag from
#   https://github.com/stack-of-tasks/pinocchio (Pinocchio is not a Debian
#   package). Its jrl-cmakemodules submodule is not needed: the four small
#   headers its CMake would generate (version, export and deprecation
#   macros) are written below.
# BUILD_DIR: a Release build of NeuralSim (default: build, as setup.sh
#   makes it); it is installed into BUILD_DIR/pinocchio_compare/prefix.
# Needs libboost-dev and liburdfdom-dev (apt). URDFs: Laikago with a free
# base and the Panda arm with a fixed base, from ../shared/models.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ ! -f "$1/include/pinocchio/algorithm/aba.hpp" ]; then
  echo "usage: scripts/bench_pinocchio.sh PINOCCHIO_SOURCE [BUILD_DIR] (PINOCCHIO_SOURCE/include/pinocchio/algorithm/aba.hpp must exist)" >&2
  exit 2
fi
source_dir=$(realpath "$1")
build=$(realpath "${2:-build}")
if ! grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "bench_pinocchio: $build is not a Release build of NeuralSim (run scripts/setup.sh first)" >&2
  exit 2
fi
work="$build/pinocchio_compare"
rm -rf "$work/prefix"
cmake --install "$build" --prefix "$work/prefix" > /dev/null

version=$(sed -n 's:.*<version>\([0-9.]*\)</version>.*:\1:p' "$source_dir/package.xml" 2>/dev/null | head -1)
IFS=. read -r major minor patch <<< "${version:-0.0.0}"
generated="$work/pinocchio-generated/pinocchio"
mkdir -p "$generated/parsers"
cat > "$generated/config.hpp" <<HPP
#pragma once
#define PINOCCHIO_MAJOR_VERSION $major
#define PINOCCHIO_MINOR_VERSION $minor
#define PINOCCHIO_PATCH_VERSION $patch
#define PINOCCHIO_VERSION "${version:-unknown}"
#define PINOCCHIO_VERSION_AT_LEAST(ma, mi, pa) (PINOCCHIO_MAJOR_VERSION > ma || (PINOCCHIO_MAJOR_VERSION == ma && (PINOCCHIO_MINOR_VERSION > mi || (PINOCCHIO_MINOR_VERSION == mi && PINOCCHIO_PATCH_VERSION >= pa))))
#define PINOCCHIO_DLLAPI
#define PINOCCHIO_LOCAL
HPP
printf '#pragma once\n#define PINOCCHIO_DEPRECATED __attribute__((deprecated))\n#define PINOCCHIO_DEPRECATED_MESSAGE(m) __attribute__((deprecated(m)))\n' > "$generated/deprecated.hpp"
printf '#pragma once\n' > "$generated/warning.hpp"
printf '#pragma once\n#define PINOCCHIO_PARSERS_DLLAPI\n' > "$generated/parsers/config.hpp"

# The compiler that built NeuralSim builds Pinocchio and the benchmark too.
compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
cmake -S bench/pinocchio_compare -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${compiler:+-DCMAKE_CXX_COMPILER="$compiler"} \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DPINOCCHIO_SOURCE="$source_dir" \
  -DPINOCCHIO_INCLUDE="$work/pinocchio-generated" > /dev/null
cmake --build "$work/build" -j "$(nproc)"

shared="$(realpath ../shared 2>/dev/null || true)"
echo "Pinocchio ${version:-?} from $source_dir; NeuralSim $(git rev-parse --short HEAD); $($compiler --version | head -1)"
echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1); load $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
"$work/build/pinocchio_compare" "$shared/models/laikago/laikago_toes_zup.urdf" || status=1
echo
"$work/build/pinocchio_compare" "$shared/models/franka_panda/panda.urdf" --fixed-base || status=1
exit $status
