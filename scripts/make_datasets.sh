#!/usr/bin/env bash
# Regenerates the small datasets shipped in datasets/ (deterministic: fixed seeds).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build/rollout --config configs/rollout_double_pendulum.yaml --seed 1 --out "$tmp/dp" -q
cp "$tmp/dp/trajectories.h5" datasets/double_pendulum.h5
build/rollout --config configs/rollout_pendulum_pd.yaml --seed 1 --out "$tmp/pd" -q
cp "$tmp/pd/trajectories.h5" datasets/pendulum_pd.h5
build/rollout --config configs/rollout_double_pendulum_friction.yaml --seed 1 --out "$tmp/dpf" -q
cp "$tmp/dpf/trajectories.h5" datasets/double_pendulum_friction.h5
build/rollout --config configs/rollout_ball_bounce_slide.yaml --seed 1 --out "$tmp/bbs" -q
cp "$tmp/bbs/trajectories.h5" datasets/ball_bounce_slide.h5
build/rollout --config configs/rollout_drag_chain.yaml --seed 1 --out "$tmp/dc" -q
cp "$tmp/dc/trajectories.h5" datasets/drag_chain.h5
echo "wrote datasets/double_pendulum.h5 datasets/pendulum_pd.h5 datasets/double_pendulum_friction.h5 datasets/ball_bounce_slide.h5 datasets/drag_chain.h5"
