#!/usr/bin/env bash
# discover's experiments (docs/discover-results.md): 1 the double pendulum's
# unmodeled friction (10 seeds: precision and recall), 2 swimmer drag,
# 3 the null control, 4 data efficiency against a fully learned model and
# the analytical one, 5 wrong sites offered. Writes the tables into
# docs/discover-results.md (between its generated-table markers).
# Usage: scripts/experiment_discover.sh [BUILD_DIR] [OUT_DIR] [EXPERIMENTS]
#        (defaults: build, out/experiments/discover, "1 2 3 4 5"; 4 needs 1's outputs)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
out="${2:-out/experiments/discover}"
cfg=configs/discover
parts=" ${3:-1 2 3 4 5} "
want() { [[ "$parts" == *" $1 "* ]]; }
mkdir -p "$out"
run() { "$@" -q --force || { echo "failed: $*" >&2; exit 1; }; }
timed() {  # timed NAME COMMAND...: wall seconds into $out/NAME.seconds
  local name=$1; shift
  local t0; t0=$(date +%s.%N)
  run "$@"
  echo "$(date +%s.%N) - $t0" | bc > "$out/$name.seconds"
}

# 1. Ten seeds (network initializations and minibatch orders) of one run.
if want 1; then
timed e1 "$build/discover" --config $cfg/double_pendulum_friction.yaml --set discover.stability.seeds=10 \
  --set discover.stability.bootstrap=0 --set discover.retrain.epochs=40 --out "$out/e1" --seed 1
# 1b. The shipped config as is (3 seeds and 2 bootstrap resamples).
timed e1_shipped "$build/discover" --config $cfg/double_pendulum_friction.yaml --out "$out/e1_shipped" --seed 1
fi

# 2. Swimmer: the recordings of train-augment's experiment 1.
if want 2; then
run "$build/rollout" --config configs/train/swimmer_drag_truth.yaml --out "$out/swimmer_truth" --seed 1
timed e2 "$build/discover" --config $cfg/swimmer_drag.yaml --set "data.train=$PWD/$out/swimmer_truth/trajectories.h5" \
  --out "$out/e2" --seed 1
fi

# 3. Null control, 5. wrong sites.
want 3 && timed e3 "$build/discover" --config $cfg/double_pendulum_null.yaml --out "$out/e3" --seed 1
want 5 && timed e5 "$build/discover" --config $cfg/double_pendulum_wrong_sites.yaml --out "$out/e5" --seed 1

# 4. Data efficiency: 40 training recordings of experiment 1's system and 8
# held out (the last 8 of 48); the discovered hybrid (experiment 1's augment.yaml), the MLP
# baseline and the analytical model trained on the first N samples of the
# first n recordings, N·n from 12 to 12 000.
if want 4; then
run "$build/rollout" --config $cfg/double_pendulum_friction_truth.yaml --set initial_states.count=48 \
  --out "$out/e4_truth" --seed 7
model='model: {generator: double_pendulum, lengths: [1.0, 1.0], masses: [1.5, 0.8]}'
sim='sim: {integrator: rk4, dt: 0.01, substeps: 5}'
for kind in hybrid mlp; do
  {
    echo "$model"; echo "$sim"
    echo "data: {train: $PWD/$out/e4_truth/trajectories.h5, validation_fraction: 0.17}"
    baseline=""; [[ $kind == mlp ]] && baseline=", baseline: {hidden: [64, 64]}"
    echo "train: {model: $kind, mode: unrolled, window_steps: 10, window_stride: 2, batch_size: 16, learning_rate: 0.01,"
    echo "        validation_steps: 50$baseline}"
    echo "evaluate: {horizons: [10, 100, 300]}"
    [[ $kind == hybrid ]] && cat "$out/e1/augment.yaml"
  } > "$out/e4_$kind.yaml"
done
for size in "1 12" "4 30" "8 150" "40 300"; do
  set -- $size
  for kind in hybrid mlp; do
    if [[ $kind == hybrid ]]; then epochs=60; else epochs=300; fi
    run "$build/train-augment" --config "$out/e4_$kind.yaml" --set train.train_trajectories=$1 \
      --set train.train_samples=$2 --set train.epochs=$((epochs * 40 / $1 > 2000 ? 2000 : epochs * 40 / $1)) \
      --out "$out/e4/${kind}_$1x$2" --seed 1
  done
done
printf '%s\n%s\ncompare: {horizons: [10, 100, 300]}\n' "$model" "$sim" > "$out/e4_analytical.yaml"
run "$build/rollout" --config "$out/e4_analytical.yaml" --compare "$out/e4_truth/trajectories.h5" --out "$out/e4/analytical"
fi

/usr/bin/python3 scripts/discover_tables.py tables "$out" docs/discover-results.md
echo "wrote docs/discover-results.md"
