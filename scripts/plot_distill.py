#!/usr/bin/env python3
"""Plots a distill-mpc run: the closed loop of the first evaluation episode
under the MPC and under the distilled network (torso height and velocity
against time, with their commands; for the linear case position, velocity
and control), and the training loss.

Usage: plot_distill.py CLOSED_LOOP_CSV LOSS_CSV OUT_PNG
OUT_PNG "-" writes the PNG to standard output (the tools do, and write it atomically).
(needs matplotlib; run under the plot interpreter, apps/common/python.hpp)
"""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_trace(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        columns = reader.fieldnames
        rows = list(reader)
    series = {}
    for row in rows:
        s = series.setdefault(row["controller"], {c: [] for c in columns[1:]})
        for c in columns[1:]:
            s[c].append(float(row[c]))
    return columns, series


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    columns, series = read_trace(sys.argv[1])
    quantities = [columns[2], columns[4], columns[6]]
    refs = [columns[3], columns[5], columns[7]]
    units = {"height": "m", "forward_velocity": "m/s", "yaw_rate": "rad/s", "position": "m", "velocity": "m/s",
             "control": "N"}
    has_loss = os.path.exists(sys.argv[2])
    fig, axes = plt.subplots(4 if has_loss else 3, 1, figsize=(8, 10 if has_loss else 8))
    style = {"mpc": dict(color="C0", lw=1.5), "network": dict(color="C1", lw=1.2, ls="--")}
    for ax, q, r in zip(axes, quantities, refs):
        for name, s in series.items():
            ax.plot(s["t"], s[q], label=name, **style.get(name, {}))
        first = next(iter(series.values()))
        if any(abs(v) > 0 for v in first[r]) or q in ("height", "forward_velocity", "yaw_rate"):
            ax.plot(first["t"], first[r], color="k", lw=0.8, alpha=0.6, label="command")
        ax.set_ylabel(f"{q} [{units.get(q, '')}]")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize=8)
    axes[2].set_xlabel("time [s]")
    if has_loss:
        epochs, train, validation = [], [], []
        with open(sys.argv[2], newline="") as f:
            for row in csv.DictReader(f):
                epochs.append(int(row["epoch"]))
                train.append(float(row["train_loss"]))
                validation.append(float(row["validation_loss"]))
        ax = axes[3]
        ax.semilogy(epochs, train, label="train")
        if any(math.isfinite(v) for v in validation):
            ax.semilogy(epochs, validation, label="validation")
        ax.set_xlabel("epoch")
        ax.set_ylabel("loss (normalized MSE)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    out = sys.argv[3]
    fig.savefig(sys.stdout.buffer if out == "-" else out, dpi=100, format="png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
