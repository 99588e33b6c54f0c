#!/usr/bin/env python3
"""Plots a designed excitation over one period (called by simid --design-excitation).

Usage: plot_excitation.py EXCITATION.h5 EXCITATION.json OUT_PNG
OUT_PNG "-" writes the PNG to standard output (the tools do, and write it atomically).

Needs h5py and matplotlib (Debian: python3-h5py python3-matplotlib); simid
skips the plot when they are missing. One column per designed joint, rows:
q, q̇ and the recorded command u (joint torque / gear) against time over
the first period, each limit from excitation.json drawn as a dashed red
line (q: the lower and upper bound; q̇ and u: ±bound).
"""
import json
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    h5_path, json_path, out = sys.argv[1:]
    with open(json_path) as f:
        design = json.load(f)
    period = design["trajectory"]["period"]
    joints = design["joints"]
    with h5py.File(h5_path, "r") as h:
        traj = h["trajectories"]["excitation"]
        t, q, qd, tau = (traj[k][:] for k in ("time", "q", "qd", "tau"))
    keep = t <= period * (1 + 1e-9)
    rows = [("q", q, "q_index", "rad | m", ("q_lower", "q_upper")),
            ("dq/dt", qd, "v_index", "rad/s | m/s", ("qd",)),
            ("u (command)", tau, "v_index", "N·m | N before the gear", ("tau",))]
    n = len(joints)
    cols = min(n, 6)  # more joints: blocks of three rows, six joints each
    blocks = (n + cols - 1) // cols
    fig, axes = plt.subplots(3 * blocks, cols, figsize=(3.6 * cols + 0.8, 6.6 * blocks + 0.4), squeeze=False,
                             sharex=True)
    for i in range(n, blocks * cols):
        for r in range(3):
            axes[3 * (i // cols) + r][i % cols].axis("off")
    for i, joint in enumerate(joints):
        c = i % cols
        for r, (label, data, index, unit, keys) in enumerate(rows):
            ax = axes[3 * (i // cols) + r][c]
            ax.plot(t[keep], data[keep, joint[index]], "k-", lw=1.2)
            lim = joint["limits"]
            for key in keys:
                value = lim.get(key)
                if value is None:
                    continue
                bounds = [value] if key.startswith("q_") else [value, -value]
                for b in bounds:
                    ax.axhline(b, color="tab:red", ls="--", lw=1)
            ax.grid(alpha=0.3)
            if r == 0:
                ax.set_title(joint["name"])
            if c == 0:
                ax.set_ylabel(f"{label}\n[{unit}]")
            if r == 2:
                ax.set_xlabel("time [s]")
                ax.xaxis.set_tick_params(labelbottom=True)
    fig.suptitle(f"designed excitation: one period of {period:g} s (dashed red: limits)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(sys.stdout.buffer if out == "-" else out, dpi=90, format="png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
