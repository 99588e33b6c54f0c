#!/usr/bin/env bash
# train-augment on logs from another engine (issue #38; results in
# docs/train-augment-mujoco-results.md, written by this script).
# MuJoCo (bench/mujoco_record, built with the benchmarks where libmujoco-dev
# is installed) records the five-segment swimmer of
# configs/models/swimmer_fluid.xml: motor commands that change every 2 ms,
# logged with the state at 100 Hz, 900 samples per trajectory.
#   Experiment 1: the inertia-box fluid model, which our MJCF reader maps
#     exactly: our model replayed with each control interpolation.
#   Experiments 2 (water) and 3 (air): MuJoCo's ellipsoid fluid model (added
#     mass, Kutta and Magnus lift), which our model family lacks. Separate
#     files for training (10 trajectories, seed 1), validation (5, seed 2:
#     early stopping, best epoch, the baselines' learning rate) and test
#     (5, seed 3: reported once). Analytical model: the same MJCF with the
#     inertia-box model in the same medium.
# Usage: scripts/experiment_swimmer_mujoco.sh [BUILD_DIR] [OUT_DIR]
#        (defaults: build, out/experiments/swimmer_mujoco)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
out="${2:-out/experiments/swimmer_mujoco}"
model=configs/models/swimmer_fluid.xml
cfg=configs/train/swimmer_mujoco_hybrid.yaml
[ -x "$build/bench/mujoco_record" ] || { echo "needs $build/bench/mujoco_record (libmujoco-dev, -DNEURALSIM_BUILD_BENCH=ON)" >&2; exit 1; }
run() { "$@" -q --force || { echo "failed: $*" >&2; exit 1; }; }
record() { "$build/bench/mujoco_record" --model $model "$@" > /dev/null; }
start=$(date +%s)

# ---- data ----
mkdir -p "$out/box" "$out/water" "$out/air"
record --amplitude 0.5 --count 5 --seed 3 --out "$out/box/test.h5"
for medium in water air; do
  if [ $medium = water ]; then medium_flags=(--amplitude 0.5)
  else medium_flags=(--density 1.2 --viscosity 1.8e-5 --amplitude 0.05 --q0 0.2 --qd0 0.5); fi
  record --fluidshape ellipsoid "${medium_flags[@]}" --count 10 --seed 1 --out "$out/$medium/train.h5"
  record --fluidshape ellipsoid "${medium_flags[@]}" --count 5 --seed 2 --out "$out/$medium/validation.h5"
  record --fluidshape ellipsoid "${medium_flags[@]}" --count 5 --seed 3 --out "$out/$medium/test.h5"
done

# ---- experiment 1: the perfect model under each control interpolation ----
replay() {  # NAME, then --set overrides
  local name=$1; shift
  run "$build/rollout" --config configs/train/swimmer_mujoco_replay.yaml --compare "$out/box/test.h5" --out "$out/e1/$name" "$@"
}
replay zero_order_hold_dt0.01 --set "sim.controls={interpolation: zero_order_hold}" --set sim.dt=0.01
replay zero_order_hold --set "sim.controls={interpolation: zero_order_hold}"
replay linear --set "sim.controls={interpolation: linear}"
replay cubic --set "sim.controls={interpolation: cubic}"
replay hold_cubic_ticks
e1=$(date +%s)

# ---- experiments 2 and 3: drag law, hybrids, baselines; 3 seeds each ----
for medium in water air; do
  data=(--set "data.train=$PWD/$out/$medium/train.h5" --set "data.validation=$PWD/$out/$medium/validation.h5"
        --set "data.test=$PWD/$out/$medium/test.h5")
  [ $medium = air ] && data+=(--set model.density=1.2 --set model.viscosity=1.8e-5)
  for seed in 1 2 3; do
    nets=()
    for i in 0 1 2 3 4; do nets+=(--set "augment.$i.seed=$((100 * seed + i))"); done
    o="$out/$medium"
    run "$build/train-augment" --config $cfg "${data[@]}" --set "augment=[]" --out "$o/drag_s$seed" --seed $seed
    run "$build/train-augment" --config $cfg "${data[@]}" "${nets[@]}" --set "train.physical=[]" --out "$o/networks_s$seed" --seed $seed
    run "$build/train-augment" --config $cfg "${data[@]}" "${nets[@]}" --out "$o/both_s$seed" --seed $seed
    for baseline in mlp lstm; do
      for lr in 0.003 0.01; do
        run "$build/train-augment" --config $cfg "${data[@]}" --set "train.physical=[]" --set train.model=$baseline \
          --set train.baseline.parameters=1100 --set train.baseline.seed=$seed --set train.epochs=300 \
          --set train.learning_rate=$lr --out "$o/${baseline}_lr${lr}_s$seed" --seed $seed
      done
    done
  done
done
end=$(date +%s)
echo "{\"experiment1_s\": $((e1 - start)), \"experiments23_s\": $((end - e1))}" > "$out/times.json"
/usr/bin/python3 scripts/swimmer_mujoco_tables.py "$out" > docs/train-augment-mujoco-results.md
echo "wrote docs/train-augment-mujoco-results.md ($((end - start)) s)"
