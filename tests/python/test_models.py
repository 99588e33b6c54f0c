"""Models, named parameters and the rigid-body algorithms from numpy,
checked against each other (ABA against CRBA + RNEA) and against the
model's definition."""
import numpy as np
import pytest

import neuralsim
from conftest import source


def test_model_and_parameters(double_pendulum):
    m = double_pendulum
    assert (m.nq, m.nv) == (2, 2)
    assert "nq=2" in repr(m)
    assert m.parameters["link.link1.length"] == 3.0
    assert "link.link2.length" in m.parameters and "link.link9.length" not in m.parameters
    m.parameters["link.link1.length"] = 2.5
    assert m.parameters.vector(["link.link1.length", "link.link2.length"]).tolist() == [2.5, 4.0]
    m.parameters.set_vector(["link.link2.length"], np.array([3.5]))
    assert dict(m.parameters.items())["link.link2.length"] == 3.5
    assert len(m.parameters) == len(list(m.parameters))
    assert m.parameters.bounds("link.link1.mass") == (0.0, float("inf"))
    assert m.parameters.bounds("gravity.z") == (float("-inf"), float("inf"))


def test_mjcf_model_loads_by_extension():
    # tests/fixtures/mjcf/defaults.xml: a free base (7 + 6) and three hinges.
    m = neuralsim.load_model(source("tests/fixtures/mjcf/defaults.xml"))
    assert (m.nq, m.nv) == (10, 9)
    assert m.body_names == ["trunk", "arm", "forearm", "hand"]
    with pytest.raises(neuralsim.ConfigError, match="expected one of hinge, slide, ball, free"):
        neuralsim.load_model(source("tests/fixtures/mjcf/bad_joint_type.xml"))


def test_unknown_parameter_is_a_key_error_naming_it(double_pendulum):
    with pytest.raises(KeyError) as e:
        double_pendulum.parameters["link.link1.lenght"]
    assert isinstance(e.value, neuralsim.ConfigError)
    assert "link.link1.lenght" in str(e.value)
    with pytest.raises(neuralsim.UnknownParameterError):
        double_pendulum.parameters["no.such"] = 1.0


def test_unphysical_value_is_refused_and_the_old_one_kept(double_pendulum):
    with pytest.raises(ValueError):
        double_pendulum.parameters["link.link1.mass"] = -1.0
    assert double_pendulum.parameters["link.link1.mass"] == 1.0
    with pytest.raises(ValueError, match="finite"):
        double_pendulum.parameters["link.link1.mass"] = float("nan")


def test_aba_agrees_with_crba_and_rnea(rng):
    for path, fb in [("configs/models/double_pendulum.yaml", False), ("configs/models/chain5.yaml", False),
                     ("configs/models/swimmer5.yaml", False)]:
        m = neuralsim.load_model(source(path), floating_base=fb)
        q, qd, tau = rng.normal(size=m.nq), rng.normal(size=m.nv), rng.normal(size=m.nv)
        qdd = neuralsim.aba(m, q, qd, tau)
        M = neuralsim.crba(m, q)
        bias = neuralsim.rnea(m, q, qd, np.zeros(m.nv))
        np.testing.assert_allclose(M @ qdd + bias, tau, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(M, M.T, atol=1e-12)
        # Kinetic energy is ½ q̇ᵀ M q̇.
        assert neuralsim.kinetic_energy(m, q, qd) == pytest.approx(0.5 * qd @ M @ qd, rel=1e-12)


def test_link_pose_and_jacobian_of_the_double_pendulum(double_pendulum):
    m = double_pendulum
    q = np.array([0.3, -0.5])
    names = m.body_names
    p, quat = neuralsim.link_pose(m, q, names[1])
    assert quat.shape == (4,) and abs(np.linalg.norm(quat) - 1) < 1e-12
    # The Jacobian's linear rows are ∂p/∂q, checked by central differences.
    J = neuralsim.jacobian(m, q, names[1])
    h = 1e-6
    for j in range(2):
        dq = np.zeros(2)
        dq[j] = h
        fd = (neuralsim.link_pose(m, q + dq, names[1])[0] - neuralsim.link_pose(m, q - dq, names[1])[0]) / (2 * h)
        np.testing.assert_allclose(J[3:, j], fd, atol=1e-8)


@pytest.mark.parametrize("arg,bad,message", [
    ("q", np.zeros(3), "q: expected shape (2,), got (3,)"),
    ("q", np.zeros(2, dtype=np.float32), "q: expected dtype float64, got float32"),
    ("qd", np.array([0.0, np.nan]), "qd: expected finite values"),
    ("tau", "abc", "tau: expected"),
])
def test_bad_arrays_name_the_argument(double_pendulum, arg, bad, message):
    args = {"q": np.zeros(2), "qd": np.zeros(2), "tau": np.zeros(2)}
    args[arg] = bad
    with pytest.raises((ValueError, TypeError)) as e:
        neuralsim.aba(double_pendulum, args["q"], args["qd"], args["tau"])
    assert message in str(e.value)


def test_a_bad_model_file_raises_with_file_and_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("generator: pendulum\nlength: [1\n")
    with pytest.raises(neuralsim.ConfigError, match="bad.yaml"):
        neuralsim.load_model(str(bad))
    with pytest.raises(neuralsim.Error, match="missing.yaml"):
        neuralsim.load_model(str(tmp_path / "missing.yaml"))
