#!/usr/bin/env bash
# Installs NeuralSim's build dependencies (Debian packages), configures the
# build directory and builds the given targets (default: everything the
# configuration enables).
# Usage: scripts/setup.sh [BUILD_DIR [TARGET...]]   (default BUILD_DIR: build)
# Env: NEURALSIM_BUILD_TYPE (Release), NEURALSIM_CMAKE_ARGS (extra flags).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
shift || true

packages=(build-essential cmake ninja-build ccache pkg-config git
  libeigen3-dev libceres-dev libcli11-dev libyaml-cpp-dev nlohmann-json3-dev
  libtbb-dev libspdlog-dev libhdf5-dev libgtest-dev libgmock-dev
  liburdfdom-dev libtinyxml-dev coinor-libipopt-dev python3-h5py python3-matplotlib)
# Google Benchmark only for the benchmarks (the test command turns them off).
[[ " ${NEURALSIM_CMAKE_ARGS:-} " == *" -DNEURALSIM_BUILD_BENCH=OFF "* ]] || packages+=(libbenchmark-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  # No fsync per unpacked file (dpkg --force-unsafe-io, as container builds
  # do). The package lists are refreshed only when the first attempt fails
  # (lists missing or stale): a fresh machine has them.
  install=("${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-unsafe-io)
  if ! "${install[@]}" "${missing[@]}" >/dev/null 2>&1; then
    "${sudo_cmd[@]}" apt-get update -qq
    "${install[@]}" "${missing[@]}" >/dev/null
  fi
fi

# ccache keeps rebuilds cheap; its default cache lives in ~/.cache/ccache.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${NEURALSIM_BUILD_TYPE:-Release}" \
  ${NEURALSIM_CMAKE_ARGS:-} >/dev/null
if (($#)); then
  cmake --build "$build_dir" -j "$(nproc)" --target "$@"
else
  cmake --build "$build_dir" -j "$(nproc)"
fi
