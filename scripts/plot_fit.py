#!/usr/bin/env python3
"""Plots fitted against measured joint trajectories (called by simid).

Usage: plot_fit.py MEASURED.h5 FITTED.h5 OUT_PNG
OUT_PNG "-" writes the PNG to standard output (the tools do, and write it atomically).

Needs h5py and matplotlib (Debian: python3-h5py python3-matplotlib); simid
skips the plot when they are missing. One row per trajectory (at most 6),
one column per joint: measured q as a line, the fitted model's windowed
prediction dashed.
"""
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    measured_path, fitted_path, out = sys.argv[1:]
    with h5py.File(measured_path, "r") as m, h5py.File(fitted_path, "r") as f:
        names = [n for n in f["trajectories"] if n in m["trajectories"]][:6]
        joints = [j.decode() if isinstance(j, bytes) else str(j) for j in m.attrs["joint_names"]]
        nq = m["trajectories"][names[0]]["q"].shape[1]
        fig, axes = plt.subplots(len(names), nq, figsize=(4 * nq, 2.2 * len(names)), squeeze=False)
        for r, name in enumerate(names):
            tm, qm = m["trajectories"][name]["time"][:], m["trajectories"][name]["q"][:]
            tf, qf = f["trajectories"][name]["time"][:], f["trajectories"][name]["q"][:]
            for c in range(nq):
                ax = axes[r][c]
                ax.plot(tm, qm[:, c], "k-", lw=1, label="measured")
                ax.plot(tf, qf[:, c], "r--", lw=1, label="fitted")
                if r == 0:
                    ax.set_title(joints[c] if c < len(joints) else f"q{c}")
                if c == 0:
                    ax.set_ylabel(name)
        axes[0][0].legend(loc="best", fontsize=7)
        for ax in axes[-1]:
            ax.set_xlabel("time [s]")
        fig.tight_layout()
        fig.savefig(sys.stdout.buffer if out == "-" else out, dpi=90, format="png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
