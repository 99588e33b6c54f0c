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


def test_swimmer_written_in_torch_ops_agrees_with_the_engine():
    """An independent implementation of the swimmer (closed-form planar
    dynamics in PyTorch ops, bench/torch_swimmer_bench.py) gives the same
    trajectory, and autograd the same gradients, as the engine's ABA and
    reverse mode."""
    import importlib.util
    from conftest import source
    spec = importlib.util.spec_from_file_location("torch_swimmer_bench", source("bench/torch_swimmer_bench.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    sim = neuralsim.Simulator.from_config(source("configs/train/swimmer_drag_hybrid.yaml"))
    rng = np.random.default_rng(3)
    sim.weights = rng.normal(scale=0.5, size=sim.weights.size)
    T = 60
    q0, qd0 = rng.normal(scale=0.3, size=7), rng.normal(scale=0.3, size=7)
    U = rng.normal(scale=0.002, size=(T, 7))
    dQ, dQD = rng.normal(size=(T, 7)), rng.normal(size=(T, 7))
    g = sim.rollout_vjp(q0, qd0, U, dQ, dQD, ["joint.joint1.damping"])
    Q, QD = sim.rollout(q0, qd0, U)
    t = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in
         {"q0": q0, "qd0": qd0, "U": U, "w": np.array(sim.weights), "d": bench.DAMPING}.items()}
    tQ, tQD = bench.torch_rollout(t["q0"], t["qd0"], t["U"], bench.unpack_networks(t["w"]), t["d"], sim.dt)
    ((tQ * torch.from_numpy(dQ)).sum() + (tQD * torch.from_numpy(dQD)).sum()).backward()
    np.testing.assert_allclose(tQ.detach().numpy(), Q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(tQD.detach().numpy(), QD, rtol=0, atol=1e-12)
    for ours, theirs in [(g.q0, t["q0"]), (g.qd0, t["qd0"]), (g.controls, t["U"]), (g.weights, t["w"])]:
        np.testing.assert_allclose(theirs.grad.numpy(), ours, rtol=1e-9, atol=1e-12)
    assert t["d"].grad.item() == pytest.approx(g.parameters["joint.joint1.damping"], rel=1e-9)
