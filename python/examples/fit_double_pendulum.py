#!/usr/bin/env python3
"""Fits the double pendulum's link lengths to trajectories held in numpy
arrays, with exact gradients of the rollout (Simulator.value_and_grad) and
SciPy's L-BFGS-B, then plots data and fit with matplotlib.

    PYTHONPATH=build/python python3 python/examples/fit_double_pendulum.py [fit.png]
"""
import os
import sys

import numpy as np
from scipy.optimize import minimize

import neuralsim

root = os.path.join(os.path.dirname(__file__), "..", "..")
model = neuralsim.load_model(os.path.join(root, "configs/models/double_pendulum.yaml"))
sim = neuralsim.Simulator(model, dt=0.01, integrator="rk4")
names = ["link.link1.length", "link.link2.length"]

# "Recorded" data: the true lengths (3, 4), three free swings, noise on q.
rng = np.random.default_rng(1)
T = 150
starts = [(np.array([0.8, -0.4]), np.zeros(2)), (np.array([-0.3, 1.0]), np.zeros(2)), (np.array([1.2, 0.2]), np.zeros(2))]
U = np.zeros((T, 2))
data = [sim.rollout(q0, qd0, U)[0] + rng.normal(scale=1e-3, size=(T, 2)) for q0, qd0 in starts]


def loss_and_grad(lengths):
    model.parameters.set_vector(names, lengths)
    loss, grad = 0.0, np.zeros(2)
    for (q0, qd0), Q in zip(starts, data):
        g = sim.value_and_grad(q0, qd0, U, Q, parameters=names)
        loss += g.loss
        grad += [g.parameters[n] for n in names]
    return loss, grad


fit = minimize(loss_and_grad, x0=[2.5, 4.5], jac=True, method="L-BFGS-B", bounds=[(0.5, 10), (0.5, 10)])
print(f"fitted lengths {fit.x} (true [3, 4]) after {fit.nit} iterations, loss {fit.fun:.3g}")

if len(sys.argv) > 1:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    model.parameters.set_vector(names, fit.x)
    t = sim.dt * np.arange(1, T + 1)
    fig, axes = plt.subplots(len(starts), 1, figsize=(7, 7), sharex=True)
    for ax, (q0, qd0), Q in zip(axes, starts, data):
        ax.plot(t, Q, ".", markersize=2, color="0.6", label="data")
        ax.plot(t, sim.rollout(q0, qd0, U)[0], "-", label="fit")
        ax.set_ylabel("q [rad]")
    axes[-1].set_xlabel("t [s]")
    fig.savefig(sys.argv[1], dpi=100)
