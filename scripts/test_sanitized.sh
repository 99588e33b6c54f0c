#!/usr/bin/env bash
# Builds the tools and the tests with AddressSanitizer and
# UndefinedBehaviorSanitizer (-DNEURALSIM_SANITIZE=ON, optimized with debug
# info) in build-sanitize/ and runs the whole suite. Any report fails the
# run: UBSan aborts on its first finding (-fno-sanitize-recover), ASan on
# memory errors and, at exit, on leaks.
# Usage: scripts/test_sanitized.sh [BUILD_DIR]   (default: build-sanitize)
# CI does not run it (it takes several times the normal build); run it
# before releases and after changes to memory handling.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build-sanitize}"
NEURALSIM_BUILD_TYPE=RelWithDebInfo \
  NEURALSIM_CMAKE_ARGS="-DNEURALSIM_SANITIZE=ON -DNEURALSIM_BUILD_TESTS=ON -DNEURALSIM_BUILD_BENCH=OFF" \
  scripts/setup.sh "$build_dir"
# The HDF5 readers' address-space cap (RLIMIT_AS) is off under ASan, whose
# shadow memory it would break; ASan refuses single allocations above the
# same 256 MiB budget instead (as scripts/fuzz.sh does), so a corrupt
# variable-length string length is still an error and not an OOM kill.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:allocator_may_return_null=1:max_allocation_size_mb=256:fast_unwind_on_malloc=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp"  # a third-party leak, see the file
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 1500
