#!/usr/bin/env bash
# Experiment 3 of train-augment (docs/train-augment-pushing.md): planar
# pushing with a friction law the analytical model lacks. Generates the ground
# truth (Stribeck + viscous contact friction), replays the analytical model
# (smooth Coulomb only), trains the hybrid model (a network on every
# contact's friction force) on three seeds and the two baselines, and writes
# the table.
# Usage: scripts/experiment_pushing.sh [BUILD_DIR] [OUT_DIR]
#        (defaults: build, out/experiments/pushing)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
out="${2:-out/experiments/pushing}"
cfg=configs/train
mkdir -p "$out"
run() { "$@" -q --force --set output.plot=false || { echo "failed: $*" >&2; exit 1; }; }
start=$(date +%s)

# Ground truth: 10 pushes of 2 s at 1 kHz (8 train, the last 2 held out).
"$build/rollout" --config $cfg/pushing_truth.yaml --out "$out/truth" --seed 1 -q --force
data="data.train=$PWD/$out/truth/trajectories.h5"
"$build/rollout" --config $cfg/pushing_analytical.yaml --compare "$out/truth/trajectories.h5" --out "$out/analytical" -q --force

for seed in 1 2 3; do
  run "$build/train-augment" --config $cfg/pushing_hybrid.yaml --set "$data" --set augment.0.seed=$seed \
    --out "$out/hybrid_s$seed" --seed $seed
done
for model in mlp lstm; do
  for lr in 0.001 0.003; do
    run "$build/train-augment" --config $cfg/pushing_hybrid.yaml --set "$data" --set train.model=$model \
      --set train.baseline.parameters=2000 --set train.epochs=200 --set train.learning_rate=$lr \
      --out "$out/${model}_lr$lr" --seed 1
  done
done
end=$(date +%s)
echo "{\"experiment3_s\": $((end - start))}" > "$out/times.json"
/usr/bin/python3 scripts/pushing_table.py "$out" > docs/train-augment-pushing.md
echo "wrote docs/train-augment-pushing.md ($((end - start)) s)"
