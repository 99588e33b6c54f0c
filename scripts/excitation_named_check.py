#!/usr/bin/env python3
"""The design's predicted standard errors of nonlinear parameters against simid's fits (docs/simid.md,
"Excitation design", named parameters).

Usage: excitation_named_check.py BUILD_DIR WORK_DIR [SEEDS]

Designs an excitation of the geared arm for the elbow's origin (the upper arm's length), gravity and the
elbow's gear ratio (no link inertia: links: []), records its command with N(0, σ²) noise (σ = 0.05, 0.03:
gear·σ = 0.15 N·m on both joints, as simid's inverse-dynamics fit weighs them equally) SEEDS times, fits
the three parameters with simid's inverse-dynamics route from a start 5 % off, and prints per parameter
the predicted error, the mean Gauss–Newton error simid reports and the spread of the fitted values.
"""
import json
import os
import subprocess
import sys

import h5py
import numpy as np

NAMES = ["joint.elbow.origin.x", "gravity.y", "joint.elbow.gear_ratio"]


def main():
    build, work = sys.argv[1], sys.argv[2]
    seeds = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    model = os.path.join(root, "configs", "models", "geared_arm.yaml")
    os.makedirs(work, exist_ok=True)
    design_cfg = os.path.join(work, "design.yaml")
    with open(design_cfg, "w") as f:
        f.write(f"model: {{file: {model}}}\nexcitation:\n  period: 4\n  harmonics: 4\n  sample_rate: 25\n"
                "  output_rate: 100\n  noise: [0.05, 0.03]\n  links: []\n"
                f"  parameters: [{', '.join(NAMES)}]\n"
                "  limits: {q_lower: [-1.5, -2], q_upper: [1, 2], qd: [3, 4], qdd: [30, 40], tau: [6, 3]}\n")
    out = os.path.join(work, "design")
    subprocess.run([os.path.join(build, "simid"), "--config", design_cfg, "--design-excitation", "-q", "--force",
                    "--out", out], check=True)
    design = json.load(open(os.path.join(out, "excitation.json")))
    predicted = {p["name"]: p["std_error"] for p in design["named_parameters"]}
    truth = {p["name"]: p["model_value"] for p in design["named_parameters"]}
    rng = np.random.default_rng(7)
    fitted, reported = {n: [] for n in NAMES}, {n: [] for n in NAMES}
    for s in range(seeds):
        noisy = os.path.join(work, f"noisy{s}.h5")
        with h5py.File(os.path.join(out, "excitation.h5"), "r") as src, h5py.File(noisy, "w") as dst:
            for k, v in src.attrs.items():
                dst.attrs[k] = v
            src.copy("trajectories", dst)
            tau = dst["trajectories/excitation/tau"]
            tau[...] = tau[...] + rng.normal(size=tau.shape) * np.array([0.05, 0.03])
        cfg = os.path.join(work, f"fit{s}.yaml")
        params = "".join(f"    - {{name: {n}, initial: {truth[n] * 1.05}}}\n" for n in NAMES)
        with open(cfg, "w") as f:
            f.write(f"model: {{file: {model}}}\nsim: {{dt: 0.01}}\ndata: {{train: {noisy}}}\nestimate:\n"
                    f"  parameters:\n{params}  observe: {{q: 1.0}}\n"
                    "  residual: {type: inverse_dynamics, derivatives: {method: savitzky_golay, window: 9, order: 4}}\n"
                    "  solver: {max_iterations: 50}\n  basin_hopping: {enabled: false}\noutput: {plot: false}\n")
        fit_out = os.path.join(work, f"fit{s}")
        subprocess.run([os.path.join(build, "simid"), "--config", cfg, "-q", "--force", "--out", fit_out], check=True)
        p = json.load(open(os.path.join(fit_out, "params.json")))["parameters"]
        for n in NAMES:
            fitted[n].append(p[n]["value"])
            reported[n].append(p[n]["std_error"])
    print(f"{'parameter':26s} {'model':>9s} {'predicted':>10s} {'simid GN (mean)':>16s} {'spread of fits':>15s}")
    for n in NAMES:
        print(f"{n:26s} {truth[n]:9.4f} {predicted[n]:10.4g} {np.mean(reported[n]):16.4g} "
              f"{np.std(fitted[n], ddof=1):15.4g}")


if __name__ == "__main__":
    sys.exit(main())
