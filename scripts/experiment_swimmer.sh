#!/usr/bin/env bash
# Experiments 1 and 2 of train-augment (docs/train-augment-results.md):
# the 5-link swimmer in a viscous medium (NeuralSim §IV-B) and seed 002's
# comparison of training modes and setups. Generates the ground truth,
# trains the hybrid model and the baselines, and writes the tables.
# Splits (issue #38): 10 training trajectories, 3 validation trajectories
# (early stopping and model selection: the config's validation_fraction and
# the choice of learning rate below) and 3 test trajectories from other
# initial states, evaluated once per run (metrics.test) and reported. Every
# table carries the analytical model and the no-motion predictor as
# reference rows (metrics.test.reference).
# Usage: scripts/experiment_swimmer.sh [BUILD_DIR] [OUT_DIR]
#        (defaults: build, out/experiments/swimmer)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
out="${2:-out/experiments/swimmer}"
cfg=configs/train
mkdir -p "$out"
run() { "$@" -q --force || { echo "failed: $*" >&2; exit 1; }; }
start=$(date +%s)

# Ground truth: 13 trajectories of 900 steps (10 train, 3 validation), and
# 3 test trajectories from other initial states (seed 2), never seen by
# training or selection.
run "$build/rollout" --config $cfg/swimmer_drag_truth.yaml --out "$out/truth" --seed 1
run "$build/rollout" --config $cfg/swimmer_drag_truth.yaml --set initial_states.count=3 --out "$out/test" --seed 2
data="data.train=$PWD/$out/truth/trajectories.h5"
test_data="data.test=$PWD/$out/test/trajectories.h5"

seed_sets() {  # network initialization of the five drag networks for seed $1
  for i in 0 1 2 3 4; do printf -- "--set augment.%d.seed=%d " "$i" $((100 * $1 + i)); done
}

# Experiment 1: hybrid against the baselines, for 1, 3 and 10 training
# trajectories. Every model gets the same number of optimizer steps whatever
# the data size (epochs scaled by 10/n: fewer windows, more epochs).
for n in 1 3 10; do
  run "$build/train-augment" --config $cfg/swimmer_drag_hybrid.yaml --set "$data" --set "$test_data" --set train.train_trajectories=$n \
    --set train.epochs=$((1000 / n)) --out "$out/e1/hybrid_n$n" --seed 1
  for model in mlp lstm; do
    for lr in 0.003 0.01; do
      run "$build/train-augment" --config $cfg/swimmer_drag_hybrid.yaml --set "$data" --set "$test_data" --set train.train_trajectories=$n \
        --set train.model=$model --set train.baseline.parameters=815 --set train.epochs=$((3000 / n)) \
        --set train.learning_rate=$lr --out "$out/e1/${model}_n${n}_lr$lr" --seed 1
    done
  done
done
e1=$(date +%s)

# Experiment 2: three training modes x two setups (correction: the solver
# steps and networks correct it; prediction: a network alone steps the
# state), three seeds each, 10 training trajectories.
for mode in one_step unrolled_detached unrolled; do
  for seed in 1 2 3; do
    # shellcheck disable=SC2046
    run "$build/train-augment" --config $cfg/swimmer_drag_hybrid.yaml --set "$data" --set "$test_data" --set train.mode=$mode \
      $(seed_sets $seed) --out "$out/e2/correction_${mode}_s$seed" --seed $seed
    run "$build/train-augment" --config $cfg/swimmer_drag_hybrid.yaml --set "$data" --set "$test_data" --set train.mode=$mode \
      --set train.model=mlp --set train.baseline.parameters=815 --set train.baseline.seed=$seed \
      --set train.epochs=300 --set train.learning_rate=0.003 --out "$out/e2/prediction_${mode}_s$seed" --seed $seed
  done
done
end=$(date +%s)
echo "{\"experiment1_s\": $((e1 - start)), \"experiment2_s\": $((end - e1))}" > "$out/times.json"
/usr/bin/python3 scripts/train_augment_tables.py "$out" > docs/train-augment-results.md
echo "wrote docs/train-augment-results.md (experiment 1: $((e1 - start)) s, experiment 2: $((end - e1)) s)"
