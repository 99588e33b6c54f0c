#!/usr/bin/env bash
# Installs dependencies, builds everything and runs the full test suite.
# This is the command CI runs (.ci/run) and the one README.md gives.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
scripts/setup.sh "$build_dir"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
