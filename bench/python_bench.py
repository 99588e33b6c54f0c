#!/usr/bin/env python3
"""The Python module's overhead: the same Simulator calls timed from Python
(argument checks, numpy conversion, the worker thread that keeps Ctrl-C
working) and inside C++ (neuralsim._neuralsim._benchmark_*), the least of
N repetitions each, interleaved.

    PYTHONPATH=build/python python3 bench/python_bench.py [--repeats N]

Cases: a 1 000-step Laikago rollout with Hunt–Crossley ground contact
(configs/rollout_laikago_standing.yaml), and the gradient of a 900-step
swimmer loss with five drag networks w.r.t. the weights, one joint damping,
the initial state and every control (configs/train/swimmer_drag_hybrid.yaml's
model). Prints one line per case and the ratio Python / C++.
"""
import argparse
import os
import time

import numpy as np

import neuralsim
from neuralsim import _neuralsim

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def least(f, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def compare(label, python_call, cpp_call, repeats):
    python_call()  # warm: caches, the gradient system
    py_s, cpp_s = [], []
    for _ in range(3):  # interleaved rounds
        py_s.append(least(python_call, repeats))
        cpp_s.append(cpp_call(repeats))
    p, c = min(py_s), min(cpp_s)
    print(f"{label}: Python {p * 1e3:.3f} ms, C++ {c * 1e3:.3f} ms, ratio {p / c:.3f}")
    return p, c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()

    laikago = neuralsim.Simulator.from_config(os.path.join(ROOT, "configs/rollout_laikago_standing.yaml"))
    q0 = np.array([0, 0, 0.356162, 0, 0, 0, 1, 0, 0.67, -1.25, 0, 0.67, -1.25, 0, 0.67, -1.25, 0, 0.67, -1.25], dtype=float)
    qd0, U = np.zeros(18), np.zeros((1000, 18))
    compare("Laikago rollout, 1000 steps", lambda: laikago.rollout(q0, qd0, U),
            lambda n: _neuralsim._benchmark_rollout(laikago, q0, qd0, U, n), args.repeats)

    swimmer = neuralsim.Simulator.from_config(os.path.join(ROOT, "configs/train/swimmer_drag_hybrid.yaml"))
    T, nq, nv = 900, swimmer.model.nq, swimmer.model.nv
    sq0 = np.array([0.0, 0.0, 0.3, 0.2, -0.1, 0.15, -0.2])
    sqd0 = np.array([0.2, -0.1, 0.3, 0.5, -0.4, 0.2, 0.1])
    t = swimmer.dt * np.arange(T)
    SU = np.zeros((T, nv))
    for i in range(4):
        SU[:, 3 + i] = 0.002 * np.sin(2 * np.pi * t + 1.2 * i)
    rng = np.random.default_rng(1)
    dQ, dQD = rng.normal(size=(T, nq)), rng.normal(size=(T, nv))
    names = ["joint.joint1.damping"]
    print(f"swimmer: {swimmer.weights.size} network weights")
    compare("swimmer gradient, 900 steps", lambda: swimmer.rollout_vjp(sq0, sqd0, SU, dQ, dQD, names),
            lambda n: _neuralsim._benchmark_vjp(swimmer, sq0, sqd0, SU, dQ, dQD, names, n), max(3, args.repeats // 4))
    forward = least(lambda: swimmer.rollout(sq0, sqd0, SU), args.repeats)
    print(f"swimmer forward rollout, 900 steps, from Python: {forward * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
