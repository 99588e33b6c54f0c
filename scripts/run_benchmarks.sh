#!/usr/bin/env bash
# Builds the benchmark programs (Release, the project's default flags) and
# runs them, writing Google Benchmark JSON to out/bench/<program>.json and
# the console output (with the summaries and ratios) to out/bench/<program>.txt.
#
# Usage: scripts/run_benchmarks.sh [extra benchmark flags...]
#   e.g. scripts/run_benchmarks.sh --benchmark_filter=ABA --benchmark_min_time=0.2
# Environment:
#   BUILD_DIR   build directory           (default: build-bench; build-bench-native with NATIVE=1)
#   NATIVE=1    configure with -DNEURALSIM_NATIVE=ON (-march=native for the benchmarks)
#   OUT_DIR     output directory          (default: out/bench; out/bench-native with NATIVE=1)
#   JOBS        parallel build jobs       (default: 2)
#   BENCHES     programs to run           (default: all that were built)
#
# The machine should be quiet: the load average is recorded in each JSON
# file's context; summaries use the minimum CPU time over 5 repetitions.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NATIVE="${NATIVE:-0}"
if [[ "$NATIVE" == 1 ]]; then
  BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench-native}"
  OUT_DIR="${OUT_DIR:-$ROOT/out/bench-native}"
  NATIVE_FLAG=ON
else
  BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench}"
  OUT_DIR="${OUT_DIR:-$ROOT/out/bench}"
  NATIVE_FLAG=OFF
fi
JOBS="${JOBS:-2}"
ALL_BENCHES=(bench_dynamics bench_step bench_autodiff bench_mujoco)

cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DNEURALSIM_BUILD_TESTS=OFF -DNEURALSIM_BUILD_BENCH=ON -DNEURALSIM_NATIVE="$NATIVE_FLAG" >/dev/null

# bench_mujoco exists only when MuJoCo was found at configure time.
known="$(ninja -C "$BUILD_DIR" -t targets all)"
targets=()
for b in "${ALL_BENCHES[@]}"; do
  if grep -q "^$b:" <<<"$known"; then targets+=("$b"); fi
done
ninja -C "$BUILD_DIR" -j"$JOBS" "${targets[@]}"

read -r -a benches <<<"${BENCHES:-${targets[*]}}"
mkdir -p "$OUT_DIR"
status=0
for b in "${benches[@]}"; do
  exe="$BUILD_DIR/bench/$b"
  if [[ ! -x "$exe" ]]; then
    echo "skipping $b (not built)" >&2
    continue
  fi
  echo "=== $b ===" >&2
  if ! "$exe" --benchmark_out="$OUT_DIR/$b.json" --benchmark_out_format=json \
      --benchmark_color=false "$@" | tee "$OUT_DIR/$b.txt"; then
    echo "$b failed" >&2
    status=1
  fi
done
echo "results in $OUT_DIR" >&2
exit $status
