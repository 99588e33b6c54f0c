#!/usr/bin/env python3
"""The tools under MPI, 1 process against 2 (1 TBB thread each), on this
machine: throughput, and the bytes each process sends (summary.json's
processes.bytes_sent_by_rank_0). Figures go to docs/cluster.md.

    python3 bench/mpi_bench.py [--build build] [--repeats 3]

Cases:
  - simid basin hopping, 8 starts per round, 4 rounds (double pendulum link
    lengths, configs/simid_double_pendulum_lengths.yaml, no early stop):
    starts spread over the ranks, and each solve shared by both ranks
    (estimate.basin_hopping.processes_per_start=2). Throughput: starts per
    second of the fit.
  - train-augment, the swimmer experiment (configs/train/swimmer_drag_hybrid.yaml
    on recordings made by configs/train/swimmer_drag_truth.yaml), 5 epochs:
    seconds per epoch (training and validation).
  - distill-mpc data generation, the Laikago trotting under its centroidal
    MPC (configs/distill_laikago.yaml, 16 episodes of 2 s): seconds to
    generate the dataset.
The least of --repeats runs is kept.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def run(build, tool, args, processes, out):
    cmd = [os.path.join(build, tool)] + args + ["-q", "--seed", "1", "--threads", "1", "--force", "--out", out]
    if processes > 1:
        launcher = ["mpirun", "--oversubscribe", "-np", str(processes)]
        if os.geteuid() == 0:
            launcher.append("--allow-run-as-root")
        cmd = launcher + cmd
    subprocess.run(cmd, cwd=ROOT, check=True)
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def least(build, tool, args, processes, out, repeats, measure):
    best = None
    for _ in range(repeats):
        s = run(build, tool, args, processes, out)
        if best is None or measure(s) < measure(best):
            best = s
    return best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--repeats", type=int, default=3)
    a = p.parse_args()
    if shutil.which("mpirun") is None:
        sys.exit("mpi_bench: mpirun not found (apt-get install openmpi-bin libopenmpi-dev, then rebuild)")
    work = tempfile.mkdtemp(prefix="neuralsim_mpi_bench_")
    out = os.path.join(work, "run")

    # Basin hopping.
    rounds, population = 4, 8
    simid = ["--config", "configs/simid_double_pendulum_lengths.yaml",
             "--set", "estimate.basin_hopping.cost_threshold=0", "--set", f"estimate.basin_hopping.rounds={rounds}",
             "--set", f"estimate.basin_hopping.population={population}"]
    fit_s = lambda s: s["timings"]["fit_s"]
    base = least(a.build, "simid", simid, 1, out, a.repeats, fit_s)
    print(f"basin hopping, {population} starts x {rounds} rounds, 1 process: "
          f"{rounds * population / fit_s(base):.2f} starts/s")
    for label, extra in [("starts spread", []),
                         ("solves shared", ["--set", "estimate.basin_hopping.processes_per_start=2"])]:
        s = least(a.build, "simid", simid + extra, 2, out, a.repeats, fit_s)
        print(f"  2 processes, {label}: {rounds * population / fit_s(s):.2f} starts/s, "
              f"{fit_s(base) / fit_s(s):.2f}x; {s['processes']['bytes_sent_by_rank_0'] / rounds / 1e3:.1f} kB "
              f"sent per round by rank 0")

    # Training.
    truth = os.path.join(work, "swimmer_truth")
    run(a.build, "rollout", ["--config", "configs/train/swimmer_drag_truth.yaml"], 1, truth)
    epochs = 5
    train = ["--config", "configs/train/swimmer_drag_hybrid.yaml",
             "--set", "data.train=" + os.path.join(truth, "trajectories.h5"),
             "--set", f"train.epochs={epochs}", "--set", "output.plot=false"]
    train_s = lambda s: s["timings"]["train_s"]
    base = least(a.build, "train-augment", train, 1, out, a.repeats, train_s)
    s = least(a.build, "train-augment", train, 2, out, a.repeats, train_s)
    cfg, m = s["config"]["train"], s["metrics"]
    stride = cfg.get("window_stride", cfg["window_steps"])
    windows = m["num_train_trajectories"] * ((m["train_samples"] - m["window_steps"]) // stride + 1)
    steps = math.ceil(windows / cfg["batch_size"])
    sent = s["processes"]["bytes_sent_by_rank_0"] / epochs
    print(f"train-augment swimmer epoch ({windows} windows, {steps} steps, {m['num_parameters']} parameters): "
          f"1 process {1e3 * train_s(base) / epochs:.1f} ms, 2 processes {1e3 * train_s(s) / epochs:.1f} ms, "
          f"{train_s(base) / train_s(s):.2f}x; rank 0 sends {sent / 1e3:.1f} kB per epoch, "
          f"{sent / steps / 1e3:.1f} kB per step")

    # Distillation data.
    distill = ["--config", "configs/distill_laikago.yaml", "--set", "distill.data.episodes=16",
               "--set", "distill.data.duration=2", "--set", "distill.train.epochs=1",
               "--set", "distill.evaluate.episodes=1", "--set", "distill.evaluate.duration=0.5"]
    data_s = lambda s: s["timings"]["data_s"]
    base = least(a.build, "distill-mpc", distill, 1, out, a.repeats, data_s)
    s = least(a.build, "distill-mpc", distill, 2, out, a.repeats, data_s)
    print(f"distill-mpc dataset ({s['metrics']['dataset']['samples']} samples): 1 process {data_s(base):.3f} s, "
          f"2 processes {data_s(s):.3f} s, {data_s(base) / data_s(s):.2f}x")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
