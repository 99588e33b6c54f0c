#!/usr/bin/env bash
# Sets up NeuralSim and runs the main job on shipped data: replays the
# shipped double-pendulum dataset with the model and reports prediction RMSE,
# then simulates fresh trajectories. Outputs go to out/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
build/rollout --config configs/rollout_double_pendulum.yaml --compare datasets/double_pendulum.h5 \
  --out out/demo/compare
build/rollout --config configs/rollout_double_pendulum.yaml --seed 7 --out out/demo/rollout
echo "demo: summaries in out/demo/compare/summary.json and out/demo/rollout/summary.json"
