#!/usr/bin/env bash
# Installs NeuralSim's build dependencies (Debian packages), configures the
# build directory and builds the given targets (default: everything the
# configuration enables).
# Usage: scripts/setup.sh [BUILD_DIR [TARGET...]]   (default BUILD_DIR: build)
# Env: NEURALSIM_BUILD_TYPE (Release), NEURALSIM_CMAKE_ARGS (extra flags),
#      NEURALSIM_PLOTS (1: install python3-matplotlib, which the tools use to
#      draw their PNG plots; 0: skip it), NEURALSIM_KEEP_THP (1: leave the
#      kernel's transparent huge page mode alone during the build).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
shift || true

packages=(build-essential cmake ninja-build pkg-config git
  libeigen3-dev libceres-dev libcli11-dev libyaml-cpp-dev nlohmann-json3-dev
  libtbb-dev libspdlog-dev libhdf5-dev liburdfdom-dev libtinyxml-dev libtinyxml2-dev python3-h5py)
# Google Benchmark only for the benchmarks (the test command turns them off).
[[ " ${NEURALSIM_CMAKE_ARGS:-} " == *" -DNEURALSIM_BUILD_BENCH=OFF "* ]] || packages+=(libbenchmark-dev)
[[ " ${NEURALSIM_CMAKE_ARGS:-} " == *" -DNEURALSIM_CCACHE=OFF "* ]] || packages+=(ccache)
# The Python module (pybind11 against Debian's Python and numpy; pytest for
# its tests), unless -DNEURALSIM_BUILD_PYTHON=OFF.
[[ " ${NEURALSIM_CMAKE_ARGS:-} " == *" -DNEURALSIM_BUILD_PYTHON=OFF "* ]] ||
  packages+=(pybind11-dev python3-dev python3-numpy python3-pytest)
# Open MPI, with which the tools run under mpirun and srun (docs/cluster.md),
# unless -DNEURALSIM_MPI=OFF.
[[ " ${NEURALSIM_CMAKE_ARGS:-} " == *" -DNEURALSIM_MPI=OFF "* ]] || packages+=(libopenmpi-dev openmpi-bin)
# GoogleTest, Ipopt's runtime library as the QP solver's test oracle
# (loaded by the test; its -dev package would pull MPI and MUMPS headers,
# 15 s of a fresh install) and MuJoCo as the MJCF reader's oracle, only for
# the tests.
[[ " ${NEURALSIM_CMAKE_ARGS:-} " == *" -DNEURALSIM_BUILD_TESTS=OFF "* ]] ||
  packages+=(libgtest-dev libgmock-dev coinor-libipopt1v5 libmujoco-dev)
# matplotlib (plots are optional: a tool without it writes every result but
# the PNG) pulls SciPy, SymPy and fontTools: 40 s of a fresh install.
[[ "${NEURALSIM_PLOTS:-1}" == 0 ]] || packages+=(python3-matplotlib)
# Clang, when the caller chose it (scripts/test.sh does).
[[ "${CXX:-}" != clang++ ]] || packages+=(clang)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
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

# ccache (unless -DNEURALSIM_CCACHE=OFF) keeps rebuilds from scratch cheap;
# its default cache lives in ~/.cache/ccache.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${NEURALSIM_BUILD_TYPE:-Release}" \
  ${NEURALSIM_CMAKE_ARGS:-} >/dev/null

# GCC grows its heap to 1-2 GB on the engine's and the tests' units, one
# 4 KiB page fault and TLB entry at a time where the kernel gives huge pages
# only on request (Debian's default mode, "madvise"). In mode "always" a
# clean build takes 18% less CPU (docs/performance.md). As root, the mode is
# switched for the build and restored afterwards.
thp=/sys/kernel/mm/transparent_hugepage/enabled
if [[ "${NEURALSIM_KEEP_THP:-0}" != 1 && "$(id -u)" -eq 0 && -w "$thp" ]] && ! grep -q '\[always\]' "$thp"; then
  thp_mode=$(sed -E 's/.*\[([a-z]+)\].*/\1/' "$thp")
  if echo always 2>/dev/null >"$thp"; then
    trap 'echo "$thp_mode" >"$thp"' EXIT
    echo "setup: transparent huge pages 'always' during the build (was '$thp_mode'; NEURALSIM_KEEP_THP=1 keeps it)"
  fi
fi

if (($#)); then
  cmake --build "$build_dir" -j "$(nproc)" --target "$@"
else
  cmake --build "$build_dir" -j "$(nproc)"
fi
