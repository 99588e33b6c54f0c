#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan, -DNEURALSIM_FUZZ=ON)
# in build-fuzz/ and runs each for SECONDS (default 300) on its corpus in
# fuzz/corpus/<target>/ (new inputs are added there). Crash inputs are
# written to fuzz/crashes/<target>/; keep them: the test suite replays both
# directories (tests/fuzz/fuzz_regression_test.cpp).
# Usage: scripts/fuzz.sh [SECONDS [TARGET...]]   (targets: config csv_import
#        hdf5_trajectories urdf checkpoint; default all, two at a time)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-300}"
shift || true
targets=("$@")
((${#targets[@]})) || targets=(config csv_import hdf5_trajectories urdf checkpoint)
CC=clang CXX=clang++ NEURALSIM_CMAKE_ARGS="-DNEURALSIM_FUZZ=ON -DNEURALSIM_BUILD_TESTS=OFF -DNEURALSIM_BUILD_BENCH=OFF" \
  NEURALSIM_BUILD_TYPE=RelWithDebInfo scripts/setup.sh build-fuzz "${targets[@]/#/fuzz_}"
mkdir -p out/fuzz
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp"
# The production readers cap HDF5's variable-length allocations with
# RLIMIT_AS, which ASan's shadow memory forbids; here ASan refuses (returns
# null for) single allocations above 256 MiB, the production budget, so HDF5 reports the same
# error rather than libFuzzer an out-of-memory.
# HDF5 and urdfdom are built without frame pointers: the slow (DWARF)
# unwinder gives allocation stacks that reach their functions, which the
# leak suppressions name.
export ASAN_OPTIONS="allocator_may_return_null=1:max_allocation_size_mb=256:fast_unwind_on_malloc=0"
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t" "fuzz/crashes/$t"
  ( rc=0
    build-fuzz/fuzz_$t "fuzz/corpus/$t" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=4096 \
      -timeout=20 -artifact_prefix="fuzz/crashes/$t/" -print_final_stats=1 > "out/fuzz/$t.log" 2>&1 || rc=$?
    echo "fuzz: $t: exit $rc ($(grep -E 'stat::number_of_executed_units' "out/fuzz/$t.log" | tail -1))" ) &
  while (($(jobs -rp | wc -l) >= 2)); do sleep 1; done
done
wait
echo "fuzz: logs in out/fuzz/, crash inputs (if any) in fuzz/crashes/"
