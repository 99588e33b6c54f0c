"""The rollout as a PyTorch layer, checked by torch.autograd.gradcheck
(double precision, central differences) for the named parameters, the
initial state, the controls and the network weights."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import neuralsim  # noqa: E402
from neuralsim.torch import Rollout, RolloutFunction  # noqa: E402


def test_gradcheck():
    sim = neuralsim.Simulator.from_config({
        "model": {"generator": "pendulum", "length": 1.0, "mass": 1.0},
        "sim": {"integrator": "rk4", "dt": 0.01},
        "augment": [{"name": "damping", "site": "joint.joint1.torque", "inputs": ["joint.joint1.qd"],
                     "hidden": [3], "output_scale": 0.1, "seed": 3}],
    })
    names = ["link.link1.length"]
    q0 = torch.tensor([0.4], dtype=torch.float64, requires_grad=True)
    qd0 = torch.tensor([0.1], dtype=torch.float64, requires_grad=True)
    U = torch.randn(15, 1, dtype=torch.float64, requires_grad=True)
    physical = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
    weights = torch.from_numpy(np.array(sim.weights)).requires_grad_(True)
    f = lambda *a: RolloutFunction.apply(sim, names, *a)  # noqa: E731
    assert torch.autograd.gradcheck(f, (q0, qd0, U, physical, weights), eps=1e-6, atol=1e-6, rtol=1e-5)


def test_layer_trains_a_parameter():
    sim = neuralsim.Simulator.from_config({"model": {"generator": "pendulum", "length": 1.0, "mass": 1.0},
                                          "sim": {"integrator": "rk4", "dt": 0.01}})
    layer = Rollout(sim, parameters=["link.link1.length"])
    q0, qd0, U = torch.tensor([0.5], dtype=torch.float64), torch.zeros(1, dtype=torch.float64), torch.zeros(50, 1, dtype=torch.float64)
    with torch.no_grad():
        target, _ = layer(q0, qd0, U)
        layer.physical.fill_(1.3)
    opt = torch.optim.Adam(layer.parameters(), lr=0.02)
    for _ in range(150):
        opt.zero_grad()
        Q, _ = layer(q0, qd0, U)
        loss = ((Q - target) ** 2).sum()
        loss.backward()
        opt.step()
    assert abs(layer.physical.item() - 1.0) < 0.02
