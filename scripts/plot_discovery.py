#!/usr/bin/env python3
"""Plots discover's results from discovery.json.

Usage: plot_discovery.py DISCOVERY_JSON importance|path OUT_PNG
OUT_PNG "-" writes the PNG to standard output (the tools do, and write it atomically).
  importance: a bar chart of the selection frequency and the validation-loss
              increase when each group is removed (groups of selected sites first)
  path:       validation loss and number of selected groups along the penalty path
(needs matplotlib; run under /usr/bin/python3)
"""
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def importance(doc, out):
    groups = [g for g in doc["groups"] if g["selection_frequency"] > 0 or g["norm"] > 0]
    if not groups:
        groups = doc["groups"][:20]
    groups.sort(key=lambda g: (-g["selection_frequency"], -g["validation_loss_increase_when_removed"]))
    groups = groups[:40]
    labels = [g["label"] for g in groups]
    fig, axes = plt.subplots(1, 2, figsize=(11, 0.35 * len(groups) + 1.5), sharey=True)
    y = range(len(groups))
    axes[0].barh(y, [g["selection_frequency"] for g in groups],
                 color=["tab:green" if g["selected"] else "tab:gray" for g in groups])
    axes[0].set_xlabel("selection frequency")
    axes[0].set_xlim(0, 1)
    axes[0].set_yticks(list(y))
    axes[0].set_yticklabels(labels, fontsize=7)
    axes[0].invert_yaxis()
    axes[1].barh(y, [100 * g["validation_loss_increase_when_removed"] for g in groups], color="tab:blue")
    axes[1].set_xlabel("validation loss increase when removed (%)")
    fig.suptitle(doc["verdict"][:120], fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.stdout.buffer if out == "-" else out, dpi=100, format="png")


def path(doc, out):
    points = [p for p in doc["path"]["points"] if isinstance(p["lambda"], (int, float)) and p["lambda"] > 0]
    lam = [p["lambda"] for p in points]
    val = [p["validation_loss"] for p in points]
    sel = [p["selected_groups"] for p in points]
    analytical = doc["path"]["points"][-1]["validation_loss"]
    dense = doc["path"]["points"][0]["validation_loss"]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.semilogx(lam, val, "o-", label="validation loss")
    if analytical is not None:
        ax.axhline(analytical, color="tab:red", ls="--", label="analytical model")
    if dense is not None:
        ax.axhline(dense, color="tab:gray", ls=":", label="dense candidates")
    chosen = doc["path"]["chosen_lambda"]
    if isinstance(chosen, (int, float)) and chosen > 0 and math.isfinite(chosen):
        ax.axvline(chosen, color="tab:green", label="chosen penalty")
    ax.set_xlabel("penalty lambda")
    ax.set_ylabel("validation loss")
    ax.set_yscale("log")
    ax2 = ax.twinx()
    ax2.step(lam, sel, where="mid", color="tab:orange", label="selected groups")
    ax2.set_ylabel("selected groups")
    ax.legend(loc="upper left", fontsize=7)
    ax2.legend(loc="upper right", fontsize=7)
    fig.tight_layout()
    fig.savefig(sys.stdout.buffer if out == "-" else out, dpi=100, format="png")


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[2] not in ("importance", "path"):
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    (importance if sys.argv[2] == "importance" else path)(doc, sys.argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main())
