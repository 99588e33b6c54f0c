#!/usr/bin/env python3
"""Plots train-augment's loss curves: loss.csv -> loss.png (log scale).

Usage: plot_loss.py LOSS_CSV OUT_PNG   (needs matplotlib; run under /usr/bin/python3)
OUT_PNG "-" writes the PNG to standard output (the tools do, and write it atomically).
"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    epochs, train, validation = [], [], []
    with open(sys.argv[1], newline="") as f:
        for row in csv.DictReader(f):
            epochs.append(int(row["epoch"]))
            train.append(float(row["train_loss"]))
            validation.append(float(row["validation_loss"]))
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.semilogy(epochs, train, label="train (training mode)")
    if any(math.isfinite(v) for v in validation):
        ax.semilogy(epochs, validation, label="validation (unrolled)")
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss (normalized squared error)")
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    out = sys.argv[2]
    fig.savefig(sys.stdout.buffer if out == "-" else out, dpi=100, format="png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
