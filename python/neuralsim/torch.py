"""A rollout as a PyTorch layer: loss.backward() reaches the simulator's
named physical parameters, its initial state, its controls and its
augmentation networks' weights, by the library's exact reverse mode
(Simulator.rollout_vjp). Imports only where torch is installed (Debian
python3-torch).

    from neuralsim.torch import Rollout
    layer = Rollout(sim, parameters=["link.link1.length"])   # nn.Module
    Q, QD = layer(q0, qd0, controls)                          # torch tensors, float64
    loss = ((Q - target) ** 2).sum(); loss.backward()
    layer.physical.grad, layer.weights.grad
"""
import numpy as np
import torch

from ._neuralsim import Simulator


def _numpy(t):
    return t.detach().cpu().numpy().astype(np.float64, copy=False)


def _tensor(a):
    return torch.from_numpy(np.array(a, dtype=np.float64))  # a writable copy


class RolloutFunction(torch.autograd.Function):
    """(q0, qd0, controls, physical, weights) -> (Q, QD) through sim.rollout;
    the backward pass is sim.rollout_vjp."""

    @staticmethod
    def forward(ctx, sim, names, q0, qd0, controls, physical, weights):
        if len(names):
            sim.model.parameters.set_vector(list(names), _numpy(physical))
        if weights.numel():
            sim.weights = _numpy(weights)
        Q, QD = sim.rollout(_numpy(q0), _numpy(qd0), _numpy(controls))
        ctx.sim, ctx.names = sim, list(names)
        ctx.save_for_backward(q0, qd0, controls)
        return _tensor(Q), _tensor(QD)

    @staticmethod
    def backward(ctx, dQ, dQD):
        q0, qd0, controls = ctx.saved_tensors
        T = controls.shape[0]
        dQ = torch.zeros(T, ctx.sim.model.nq, dtype=torch.float64) if dQ is None else dQ
        dQD = torch.zeros(T, ctx.sim.model.nv, dtype=torch.float64) if dQD is None else dQD
        g = ctx.sim.rollout_vjp(_numpy(q0), _numpy(qd0), _numpy(controls), _numpy(dQ), _numpy(dQD), ctx.names)
        physical = torch.tensor([g.parameters[n] for n in ctx.names], dtype=torch.float64)
        return None, None, _tensor(g.q0), _tensor(g.qd0), _tensor(g.controls), physical, _tensor(g.weights)


class Rollout(torch.nn.Module):
    """A simulator as a layer: forward(q0, qd0, controls) -> (Q, QD). Its
    trainable tensors are `physical` (the named parameters, initialized
    from the model) and `weights` (the augmentation networks')."""

    def __init__(self, sim: Simulator, parameters=()):
        super().__init__()
        self.sim = sim
        self.names = list(parameters)
        self.physical = torch.nn.Parameter(
            torch.tensor([sim.model.parameters[n] for n in self.names], dtype=torch.float64))
        self.weights = torch.nn.Parameter(_tensor(sim.weights))

    def forward(self, q0, qd0, controls):
        return RolloutFunction.apply(self.sim, self.names, q0, qd0, controls, self.physical, self.weights)
