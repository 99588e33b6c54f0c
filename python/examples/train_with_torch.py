#!/usr/bin/env python3
"""Trains a network inside the simulator with PyTorch: a pendulum whose
model lacks joint damping gets a torque network on its joint (augment:),
and the rollout is a layer (neuralsim.torch.Rollout), so loss.backward()
reaches the network's weights through the dynamics.

    PYTHONPATH=build/python python3 python/examples/train_with_torch.py
"""
import numpy as np
import torch

import neuralsim
from neuralsim.torch import Rollout

truth = neuralsim.Simulator.from_config({
    "model": {"generator": "pendulum", "length": 1.0, "mass": 1.0},
    "sim": {"integrator": "rk4", "dt": 0.01}})
truth.model.parameters["joint.joint1.damping"] = 0.3

hybrid = neuralsim.Simulator.from_config({
    "model": {"generator": "pendulum", "length": 1.0, "mass": 1.0},
    "sim": {"integrator": "rk4", "dt": 0.01},
    "augment": [{"name": "damping", "site": "joint.joint1.torque", "inputs": ["joint.joint1.qd"],
                 "hidden": [16], "output_scale": 0.1, "seed": 1}]})
layer = Rollout(hybrid)

rng = np.random.default_rng(0)
starts = [np.array([a]) for a in rng.uniform(-1.5, 1.5, size=8)]
T = 200
U = torch.zeros(T, 1, dtype=torch.float64)
targets = [torch.from_numpy(truth.rollout(q0, np.zeros(1), U.numpy())[0]) for q0 in starts]

opt = torch.optim.Adam(layer.parameters(), lr=3e-3)
for epoch in range(200):
    opt.zero_grad()
    loss = sum(((layer(torch.from_numpy(q0), torch.zeros(1, dtype=torch.float64), U)[0] - Q) ** 2).mean()
               for q0, Q in zip(starts, targets)) / len(starts)
    loss.backward()
    opt.step()
    if epoch % 50 == 0 or epoch == 199:
        print(f"epoch {epoch}: loss {loss.item():.3e}")
