#!/usr/bin/env python3
"""Writes the tables of docs/discover-results.md from scripts/experiment_discover.sh's outputs.

Usage: discover_tables.py tables OUT_DIR DOC_MD
The tables replace what lies between "<!-- generated:begin -->" and
"<!-- generated:end -->" in DOC_MD.
"""
import json
import os
import sys

TRUE_INPUTS = {"joint.joint1.torque <- joint.joint1.qd", "joint.joint2.torque <- joint.joint2.qd"}


def load(path):
    with open(path) as f:
        return json.load(f)


def seconds(out, name):
    try:
        with open(os.path.join(out, name + ".seconds")) as f:
            return float(f.read())
    except OSError:
        return float("nan")


def input_labels(labels):
    return {label for label in labels if "(output)" not in label}


def experiment1(out):
    d = load(os.path.join(out, "e1", "discovery.json"))
    lines = ["### Experiment 1: double pendulum with unmodeled joint friction", "",
             "Ten repetitions of one run (`stability.seeds: 10`: network initializations and minibatch orders); "
             "the true inputs are each joint's own q̇ at its own torque site.", "",
             "| seed | λ_max | chosen λ | explained | selected inputs | precision | recall |",
             "|---:|---:|---:|---:|---|---:|---:|"]
    ps, rs = [], []
    for r in d["repetitions"]:
        sel = input_labels(r["selected"])
        tp = len(sel & TRUE_INPUTS)
        p = tp / len(sel) if sel else float("nan")
        rc = tp / len(TRUE_INPUTS)
        ps.append(p)
        rs.append(rc)
        lam = r["chosen_lambda"]
        lines.append("| %d | %.3g | %s | %.1f %% | %s | %.2f | %.2f |" % (
            r["index"], r["lambda_max"], lam if isinstance(lam, str) else "%.3g" % lam, 100 * r["explained"],
            ", ".join(sorted(s.replace("joint.", "") for s in sel)) or "–", p, rc))
    valid = [p for p in ps if p == p]
    lines += ["", "Mean precision %.2f, mean recall %.2f over %d seeds; every seed exact: %s." % (
        sum(valid) / max(len(valid), 1), sum(rs) / len(rs), len(rs),
        "yes" if all(p == 1 and r == 1 for p, r in zip(ps, rs)) else "no"), ""]
    m = d["summary"]
    lines += ["Stability selection (frequency ≥ 0.8): %s. Validation loss: analytical %.4g, dense candidates %.4g, "
              "chosen %.4g, pruned and retrained %s. Wall time %.0f s for 10 repetitions and the retrain "
              "(2 cores)." % (", ".join(m["selected_inputs"]) or "nothing", m["validation_loss"]["analytical"],
                              m["validation_loss"]["dense_candidates"], m["validation_loss"]["chosen"],
                              "%.4g" % m["validation_loss"]["retrained_pruned"]
                              if "retrained_pruned" in m["validation_loss"] else "–", seconds(out, "e1")), ""]
    lines += ["Importances at seed 0's chosen point, and frequencies over the 10 seeds:", "", "```"]
    with open(os.path.join(out, "e1", "discovery.txt")) as f:
        lines += [l.rstrip("\n") for l in f.readlines()[2:20]]
    lines += ["```", ""]
    s = load(os.path.join(out, "e1_shipped", "summary.json"))
    lines += ["The shipped config as is (5 seeds and 5 bootstrap resamples, retrain): %s; selected %s; "
              "**%.0f s** wall time (goal: under 5 minutes on 2 cores)." % (
                  s["metrics"]["verdict"], ", ".join(s["metrics"]["selected_inputs"]), seconds(out, "e1_shipped")),
              ""]
    return lines


def verdict_section(out, name, title, what):
    m = load(os.path.join(out, name, "summary.json"))["metrics"]
    d = load(os.path.join(out, name, "discovery.json"))
    freq = sorted(((g["selection_frequency"], g["label"]) for g in d["groups"]), reverse=True)[:8]
    return ["### " + title, "", what, "",
            "- verdict: " + m["verdict"],
            "- selected: " + (", ".join(m["selected_inputs"]) or "nothing"),
            "- highest selection frequencies: " + ", ".join("%s %.2f" % (l, f) for f, l in freq),
            "- wall time %.0f s" % seconds(out, name), ""]


def experiment4(out):
    rows = []
    an = load(os.path.join(out, "e4", "analytical", "summary.json"))["metrics"]["per_trajectory"]
    an_val = [t["rmse_q"] for t in an][-8:]
    analytical = sum(an_val) / len(an_val)
    lines = ["### Experiment 4: data efficiency", "",
             "Free-rollout RMSE of q (rad) over the 8 held-out recordings of 3 s, after training on the first N "
             "samples of the first n recordings (windows of 10 steps). Hybrid: experiment 1's augment.yaml "
             "(2 networks, 50 weights); MLP: a Δ-state network with 2×64 hidden units (4 868 weights); "
             "analytical: the model without friction, %.3f rad at every N." % analytical, "",
             "| samples (n × N) | hybrid | MLP | analytical |", "|---:|---:|---:|---:|"]
    for n, N in ((1, 12), (4, 30), (8, 150), (40, 300)):
        vals = []
        for kind in ("hybrid", "mlp"):
            try:
                m = load(os.path.join(out, "e4", "%s_%dx%d" % (kind, n, N), "summary.json"))["metrics"]
                v = m["validation"]["mean_rmse_q"]
                vals.append("%.4f" % v if v is not None else "diverged")
            except (OSError, KeyError):
                vals.append("–")
        lines.append("| %d (%d × %d) | %s | %s | %.3f |" % (n * N, n, N, vals[0], vals[1], analytical))
    return lines + [""]


def main():
    if len(sys.argv) != 4 or sys.argv[1] != "tables":
        print(__doc__, file=sys.stderr)
        return 2
    out, doc = sys.argv[2], sys.argv[3]
    lines = experiment1(out)
    lines += verdict_section(out, "e2", "Experiment 2: swimmer drag",
                             "Candidates (21 sites): a torque at every joint (the planar root's x, y and yaw "
                             "included) reading its q and q̇; a force and a drag force at every link (the root's "
                             "two slider links included), in the link's frame, reading its body-frame velocities "
                             "(and, for drag, angle of attack and speed). True defect: drag on the five segments.")
    lines += verdict_section(out, "e3", "Experiment 3: null control",
                             "The recordings come from the analytical model itself, with observation noise.")
    lines += experiment4(out)
    lines += verdict_section(out, "e5", "Experiment 5: wrong sites offered",
                             "Experiment 1's recordings (friction, a function of q̇); the only candidates are the "
                             "joints' spring stiffnesses reading q (position-dependent torques).")
    with open(doc) as f:
        text = f.read()
    begin, end = "<!-- generated:begin -->", "<!-- generated:end -->"
    i, j = text.index(begin) + len(begin), text.index(end)
    with open(doc, "w") as f:
        f.write(text[:i] + "\n" + "\n".join(lines) + "\n" + text[j:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
