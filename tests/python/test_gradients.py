"""Exact gradients of rollouts from Python (reverse mode in the library)
against central differences computed here, for named physical parameters,
the initial state, the controls and the weights of a network inside the
dynamics."""
import numpy as np
import pytest

import neuralsim
from conftest import source

T = 60


def loss_of(sim, q0, qd0, U, A, B):
    Q, QD = sim.rollout(q0, qd0, U)
    return float(np.sum(A * Q) + np.sum(B * QD))


def central(f, x, h):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.fixture
def setup(double_pendulum, rng):
    sim = neuralsim.Simulator(double_pendulum, dt=0.005, integrator="rk4")
    q0, qd0 = np.array([0.4, -0.3]), np.array([0.1, 0.2])
    U = rng.normal(scale=2.0, size=(T, 2))
    A, B = rng.normal(size=(T, 2)), rng.normal(size=(T, 2))
    return sim, q0, qd0, U, A, B


def test_rollout_shapes_and_step_agree(setup):
    sim, q0, qd0, U, _, _ = setup
    Q, QD = sim.rollout(q0, qd0, U)
    assert Q.shape == (T, 2) and QD.shape == (T, 2)
    q, qd = q0, qd0
    for k in range(3):
        q, qd = sim.step(q, qd, U[k], t=k * sim.dt)
    np.testing.assert_array_equal(q, Q[2])


def test_vjp_against_central_differences(setup):
    sim, q0, qd0, U, A, B = setup
    names = ["link.link1.length", "link.link2.mass", "gravity.z"]
    g = sim.rollout_vjp(q0, qd0, U, A, B, parameters=names)
    assert g.loss == pytest.approx(loss_of(sim, q0, qd0, U, A, B), rel=1e-12)
    p0 = sim.model.parameters.vector(names)

    def at_parameters(p):
        sim.model.parameters.set_vector(names, p)
        value = loss_of(sim, q0, qd0, U, A, B)
        sim.model.parameters.set_vector(names, p0)
        return value

    fd = central(at_parameters, p0, 1e-6)
    np.testing.assert_allclose([g.parameters[n] for n in names], fd, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(g.q0, central(lambda x: loss_of(sim, x, qd0, U, A, B), q0, 1e-6), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(g.qd0, central(lambda x: loss_of(sim, q0, x, U, A, B), qd0, 1e-6), rtol=1e-6, atol=1e-6)
    fdU = central(lambda x: loss_of(sim, q0, qd0, x.reshape(T, 2), A, B), U.ravel(), 1e-6).reshape(T, 2)
    np.testing.assert_allclose(g.controls, fdU, rtol=1e-5, atol=1e-6)


def test_network_weights_against_central_differences(rng):
    sim = neuralsim.Simulator.from_config({
        "model": {"generator": "pendulum", "length": 1.0, "mass": 1.0},
        "sim": {"integrator": "rk4", "dt": 0.01},
        "augment": [{"name": "damping", "site": "joint.joint1.torque", "inputs": ["joint.joint1.qd"],
                     "hidden": [4], "output_scale": 0.1, "seed": 3}],
    })
    w0 = sim.weights
    assert w0.size == 4 * 1 + 4 + 1 * 4 + 1
    q0, qd0, U = np.array([0.5]), np.array([0.0]), rng.normal(size=(40, 1))
    A, B = rng.normal(size=(40, 1)), rng.normal(size=(40, 1))
    g = sim.rollout_vjp(q0, qd0, U, A, B, parameters=["joint.joint1.damping"])

    def at_weights(w):
        sim.weights = w
        value = loss_of(sim, q0, qd0, U, A, B)
        sim.weights = w0
        return value

    np.testing.assert_allclose(g.weights, central(at_weights, w0, 1e-6), rtol=1e-6, atol=1e-7)


def test_value_and_grad_of_state_tracking(setup):
    sim, q0, qd0, U, _, _ = setup
    target = sim.rollout(q0, qd0, U)[0] + 0.01
    g = sim.value_and_grad(q0, qd0, U, target, parameters=["link.link1.length"])
    Q = sim.rollout(q0, qd0, U)[0]
    assert g.loss == pytest.approx(0.5 * np.sum((Q - target) ** 2), rel=1e-10)


def test_bad_gradient_arguments(setup):
    sim, q0, qd0, U, A, B = setup
    with pytest.raises(ValueError, match=r"dQ: expected shape \(60, 2\), got \(59, 2\)"):
        sim.rollout_vjp(q0, qd0, U, A[:-1], B)
    with pytest.raises(neuralsim.ConfigError, match="link.link1.lenth"):
        sim.rollout_vjp(q0, qd0, U, A, B, parameters=["link.link1.lenth"])
    with pytest.raises(ValueError, match="controls: expected shape"):
        sim.rollout(q0, qd0, np.zeros((5, 3)))


def test_transition_jacobians_against_central_differences(setup):
    """The exact one-step Jacobians against central differences of step()
    (hinge joints: the tangent coordinates are the joint angles)."""
    sim, q0, qd0, U, _, _ = setup
    u = U[0]
    A, B = sim.transition_jacobians(q0, qd0, u)
    assert A.shape == (4, 4) and B.shape == (4, 2)

    def step(x, uu):
        q, qd = sim.step(x[:2], x[2:], uu)
        return np.concatenate([q, qd])

    x0 = np.concatenate([q0, qd0])
    h = 1e-6
    A_fd = np.column_stack([(step(x0 + h * e, u) - step(x0 - h * e, u)) / (2 * h) for e in np.eye(4)])
    B_fd = np.column_stack([(step(x0, u + h * e) - step(x0, u - h * e)) / (2 * h) for e in np.eye(2)])
    np.testing.assert_allclose(A, A_fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(B, B_fd, rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError):
        sim.transition_jacobians(q0, qd0, np.zeros(3))
