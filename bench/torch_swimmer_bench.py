#!/usr/bin/env python3
"""The swimmer loss and its gradient written in PyTorch ops (the plain
alternative a PyTorch user has), against neuralsim's reverse mode.

    PYTHONPATH=build/python python3 bench/torch_swimmer_bench.py [--repeats N]

The case of bench/python_bench.py: configs/train/swimmer_drag_hybrid.yaml's
model (a planar 5-link swimmer, x/y slides and yaw at the head, joint
damping, one drag network per link reading the link origin's body-frame
linear and angular velocity and giving a body-frame force at its centre of
mass), semi-implicit Euler, 900 steps, controls on every joint; the
gradient of <dQ, Q> + <dQD, QD> w.r.t. the network weights, joint1's
damping, the initial state and every control.

The PyTorch version writes the planar dynamics in closed form (COM
Jacobians of the chain, M q̈ = u + τ_passive − Σ m Jᵀ J̇q̇ + Σ Jᵀ F, one 7×7
solve per step; CPU, double precision) and backpropagates with autograd.
Before timing, it checks that both give the same trajectory and gradients
(relative error printed; an error above 1e-6 aborts). Prints the least of
N runs of each and the ratio PyTorch / neuralsim.
"""
import argparse
import os
import sys
import time

import numpy as np

import neuralsim

try:
    import torch
except ImportError:
    sys.exit("torch_swimmer_bench: PyTorch not installed (apt-get install python3-torch)")

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
LINKS, LENGTH, MASS, DAMPING = 5, 0.1, 0.1, 0.001  # configs/models/swimmer5.yaml
HIDDEN, INPUTS, OUTPUTS, OUTPUT_SCALE = 16, 6, 3, 0.01  # the config's augment: entries


def unpack_networks(weights):
    """The Simulator's weight vector: per network, W0 (row-major), b0, W1, b1."""
    nets, at = [], 0
    for _ in range(LINKS):
        layer = []
        for n_in, n_out in [(INPUTS, HIDDEN), (HIDDEN, OUTPUTS)]:
            W = weights[at:at + n_in * n_out].reshape(n_out, n_in)
            at += n_in * n_out
            b = weights[at:at + n_out]
            at += n_out
            layer += [W, b]
        nets.append(layer)
    assert at == len(weights), (at, len(weights))
    return nets


def torch_rollout(q0, qd0, U, nets, damping1, dt):
    """Semi-implicit Euler rollout of the swimmer; returns Q, QD (T × 7)."""
    dtype = q0.dtype
    L = LENGTH
    # A[i, j]: lever of link j's normal direction in link i's COM (L before
    # i, L/2 at i); B: the same for link i's origin.
    A = torch.tril(torch.full((LINKS, LINKS), L, dtype=dtype), -1) + torch.eye(LINKS, dtype=dtype) * (L / 2)
    B = torch.tril(torch.full((LINKS, LINKS), L, dtype=dtype), -1)
    Tri = torch.tril(torch.ones(LINKS, LINKS, dtype=dtype))  # φ = Tri θ
    I2 = torch.eye(2, dtype=dtype).expand(LINKS, 2, 2)
    izz = MASS * L * L / 12.0
    W0 = torch.stack([n[0] for n in nets])  # (5, 16, 6)
    b0 = torch.stack([n[1] for n in nets])
    W1 = torch.stack([n[2] for n in nets])  # (5, 3, 16)
    b1 = torch.stack([n[3] for n in nets])
    dvec = torch.cat([torch.zeros(3, dtype=dtype), damping1.reshape(1), torch.full((3,), DAMPING, dtype=dtype)])
    q, qd = q0, qd0
    Qs, QDs = [], []
    for t in range(U.shape[0]):
        phi = Tri @ q[2:]
        phid = Tri @ qd[2:]
        e = torch.stack([torch.cos(phi), torch.sin(phi)], 1)  # (5, 2)
        n = torch.stack([-torch.sin(phi), torch.cos(phi)], 1)
        # COM Jacobians (5, 2, 7) and velocity-product accelerations (5, 2).
        Jth = torch.einsum("ij,jd,jk->idk", A, n, Tri)
        J = torch.cat([I2, Jth], 2)
        bias = -torch.einsum("ij,jd->id", A, e * (phid ** 2)[:, None])
        # Drag networks: link origin velocity and angular velocity, body frame.
        po = qd[:2][None, :] + torch.einsum("ij,jd->id", B, n * phid[:, None])
        v_body = torch.stack([(e * po).sum(1), (n * po).sum(1), torch.zeros_like(phid)], 1)
        w_body = torch.stack([torch.zeros_like(phid), torch.zeros_like(phid), phid], 1)
        x = torch.cat([v_body, w_body], 1)  # (5, 6)
        h = torch.tanh(torch.einsum("lij,lj->li", W0, x) + b0)
        y = (torch.einsum("lij,lj->li", W1, h) + b1) * OUTPUT_SCALE
        F = y[:, :1] * e + y[:, 1:2] * n  # world force at the COM (its z part acts on no planar joint)
        M = MASS * torch.einsum("idk,idl->kl", J, J)
        M = M + izz * torch.nn.functional.pad(Tri.T @ Tri, (2, 0, 2, 0))
        rhs = U[t] - dvec * qd - MASS * torch.einsum("idk,id->k", J, bias) + torch.einsum("idk,id->k", J, F)
        qdd = torch.linalg.solve(M, rhs)
        qd = qd + dt * qdd
        q = q + dt * qd
        Qs.append(q)
        QDs.append(qd)
    return torch.stack(Qs), torch.stack(QDs)


def least(f, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (neuralsim's rollout is one thread)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    sim = neuralsim.Simulator.from_config(os.path.join(ROOT, "configs/train/swimmer_drag_hybrid.yaml"))
    T, nq, nv = 900, sim.model.nq, sim.model.nv
    q0 = np.array([0.0, 0.0, 0.3, 0.2, -0.1, 0.15, -0.2])
    qd0 = np.array([0.2, -0.1, 0.3, 0.5, -0.4, 0.2, 0.1])
    t = sim.dt * np.arange(T)
    U = np.zeros((T, nv))
    for i in range(4):
        U[:, 3 + i] = 0.002 * np.sin(2 * np.pi * t + 1.2 * i)
    rng = np.random.default_rng(1)
    dQ, dQD = rng.normal(size=(T, nq)), rng.normal(size=(T, nv))
    # Non-trivial weights (the config's initialization scaled up), so that
    # the networks' forces matter in the comparison.
    sim.weights = rng.normal(scale=0.5, size=sim.weights.size)
    names = ["joint.joint1.damping"]

    def ours():
        return sim.rollout_vjp(q0, qd0, U, dQ, dQD, names)

    def theirs():
        tq0 = torch.tensor(q0, requires_grad=True)
        tqd0 = torch.tensor(qd0, requires_grad=True)
        tU = torch.tensor(U, requires_grad=True)
        tw = torch.tensor(sim.weights, requires_grad=True)
        td = torch.tensor(DAMPING, dtype=torch.float64, requires_grad=True)
        Q, QD = torch_rollout(tq0, tqd0, tU, unpack_networks(tw), td, sim.dt)
        loss = (Q * torch.from_numpy(dQ)).sum() + (QD * torch.from_numpy(dQD)).sum()
        loss.backward()
        return Q.detach().numpy(), QD.detach().numpy(), tq0.grad.numpy(), tqd0.grad.numpy(), tU.grad.numpy(), \
            tw.grad.numpy(), td.grad.item()

    # The same numbers first.
    Q, QD = sim.rollout(q0, qd0, U)
    g = ours()
    tQ, tQD, gq0, gqd0, gU, gw, gd = theirs()
    rel = lambda a, b: float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))
    errors = {"Q": rel(tQ, Q), "QD": rel(tQD, QD), "dq0": rel(gq0, g.q0), "dqd0": rel(gqd0, g.qd0),
              "dcontrols": rel(gU, g.controls), "dweights": rel(gw, g.weights),
              "ddamping": abs(gd - g.parameters[names[0]]) / abs(g.parameters[names[0]])}
    print("PyTorch against neuralsim, max relative difference: " +
          ", ".join(f"{k} {v:.1e}" for k, v in errors.items()))
    if max(errors.values()) > 1e-6:
        sys.exit("torch_swimmer_bench: the two do not compute the same thing")

    ours_s = least(ours, args.repeats)
    theirs_s = least(theirs, max(1, args.repeats // 2))
    print(f"swimmer loss + gradient, {T} steps, {sim.weights.size} weights: neuralsim {ours_s * 1e3:.2f} ms, "
          f"PyTorch ops ({args.threads} thread{'s' if args.threads > 1 else ''}) {theirs_s * 1e3:.1f} ms, "
          f"ratio {theirs_s / ours_s:.0f}x")


if __name__ == "__main__":
    main()
