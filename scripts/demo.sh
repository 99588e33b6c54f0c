#!/usr/bin/env bash
# Sets up NeuralSim and runs the main job on shipped data: identifies the
# double pendulum's link lengths from datasets/double_pendulum.h5 with simid
# (parallel basin hopping from random starts), then replays the dataset with
# the fitted parameters (rollout --compare). Outputs go to out/demo/ (a rerun
# replaces them: --force). Builds only the two tools.
set -euo pipefail
cd "$(dirname "$0")/.."
NEURALSIM_CMAKE_ARGS="-DNEURALSIM_BUILD_TESTS=OFF -DNEURALSIM_BUILD_BENCH=OFF ${NEURALSIM_CMAKE_ARGS:-}" \
  scripts/setup.sh build rollout simid
build/simid --config configs/simid_double_pendulum_lengths.yaml --seed 1 --force --out out/demo/simid
build/rollout --config configs/rollout_double_pendulum.yaml --set params_file=out/demo/simid/params.json \
  --compare datasets/double_pendulum.h5 --force --out out/demo/compare
echo "demo: fitted parameters in out/demo/simid/params.json (report: out/demo/simid/report.html),"
echo "      replay errors in out/demo/compare/summary.json"
