"""The tools as functions: the same library calls as the command line."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import neuralsim
from conftest import source


def test_identify_recovers_the_double_pendulum_lengths():
    r = neuralsim.identify(source("configs/simid_double_pendulum_lengths.yaml"), seed=1)
    assert r.status == "ok" and r.has_fit
    assert r.parameters["link.link1.length"] == pytest.approx(3.0, abs=1e-6)
    assert r.parameters["link.link2.length"] == pytest.approx(4.0, abs=1e-6)
    assert r.identifiable
    assert "Identifiability report" in r.full_report()
    assert r.covariance_method == "gauss_newton"


def test_identify_evaluates_given_values_without_a_fit(tmp_path):
    values = tmp_path / "p.json"
    values.write_text('{"link.link1.length": 3.0, "link.link2.length": 4.0}')
    r = neuralsim.identify(source("configs/simid_double_pendulum_lengths.yaml"),
                           overrides={"data.max_samples": 51}, evaluate=str(values))
    assert r.status == "ok" and r.has_fit and r.evaluate_only
    assert r.parameters == {"link.link1.length": 3.0, "link.link2.length": 4.0}
    assert r.cost < 1e-12  # the data were made with these lengths


def test_identify_returns_the_fitted_starting_states():
    r = neuralsim.identify(source("configs/simid_double_pendulum_lengths.yaml"), seed=3,
                           overrides={"data.max_samples": 101, "estimate.residual.window": 20,
                                      "estimate.residual.fit_initial_state": {"q": True, "qd": True}})
    assert r.status == "ok" and r.has_fit
    assert r.start_states  # one entry per training trajectory
    for name, s in r.start_states.items():
        assert s["samples"] == [0, 20, 40, 60, 80]
        assert s["q"].shape == (5, 2) and s["qd"].shape == (5, 2)
        # Exact data: every fitted start is the recorded state.
        assert s["q"] == pytest.approx(r.measured[name]["q"][::20][:5], abs=1e-5)
        assert "fitted_start_" + name in r.fitted


def test_gradient_check_of_a_fit():
    c = neuralsim.check_identification_gradient(source("configs/simid_double_pendulum_lengths.yaml"),
                                                overrides={"data.max_samples": 101, "estimate.residual.window": 20,
                                                           "estimate.parameters": [
                                                               {"name": "link.link1.length", "initial": 2.5},
                                                               {"name": "link.link2.length", "initial": 4.5}]})
    assert c.passed and c.methods == ["forward_mode"] and c.disagreeing == 0
    assert [r["name"] for r in c.rows] == ["link.link1.length", "link.link2.length"]
    for r in c.rows:
        assert r["verdict"] == "agrees"
        assert r["gradient"][0] == pytest.approx(r["central_difference"], rel=1e-7)
    assert "PASSED" in c.report()


def test_overrides_and_yaml_errors(tmp_path):
    with pytest.raises(neuralsim.ConfigError, match=r"estimate\.solver\.max_iterations"):
        neuralsim.identify(source("configs/simid_double_pendulum_lengths.yaml"),
                           overrides={"estimate.solver.max_iterations": -3})
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: {file: x.yaml\n")
    with pytest.raises(neuralsim.ConfigError, match="bad.yaml:"):
        neuralsim.identify(str(bad))
    with pytest.raises(TypeError, match="config"):
        neuralsim.identify(42)


def test_rollout_and_compare_from_a_dict(tmp_path):
    config = {"model": {"file": source("configs/models/double_pendulum.yaml")},
              "sim": {"integrator": "rk4", "dt": 0.01, "duration": 0.5},
              "initial_states": {"list": [{"q": [0.3, 0.1], "qd": [0.0, 0.0]}]}}
    r = neuralsim.rollout(config, seed=1)
    assert r.status == "ok"
    (name, tr), = r.trajectories.items()
    assert tr["q"].shape == (51, 2)
    # The shipped dataset is the shipped rollout config's: replayed to round-off, as by rollout --compare.
    c = neuralsim.compare(source("configs/rollout_double_pendulum.yaml"), source("datasets/double_pendulum.h5"))
    assert c.status == "ok" and len(c.per_trajectory) > 0
    assert c.mean_rmse_q < 1e-12
    assert c.pooled["rmse_q"] < 1e-12 and c.pooled["samples"] == sum(len(t["time"]) for t in c.predictions.values())


def test_discover_returns_the_command_lines_discovery(tmp_path):
    # A short run: the selection itself is tested in C++ (DiscoverApp).
    overrides = {"discover.stability.seeds": 1, "discover.stability.bootstrap": 0, "discover.retrain.epochs": 0,
                 "discover.penalty.points": 3,
                 "discover.epochs.dense": 10, "discover.epochs.per_point": 4, "discover.epochs.refit": 4,
                 "train.train_samples": 150, "output.plot": False}
    config = source("configs/discover/double_pendulum_friction.yaml")
    r = neuralsim.discover(config, overrides=overrides, seed=2)
    assert r.status == "ok" and r.explained_by_candidates
    assert set(r.selected) <= {"joint_joint1_torque", "joint_joint2_torque"} and r.selected
    assert len(r.groups) == 16 and r.sites == ["joint.joint1.torque", "joint.joint2.torque"]
    assert all(name in r.augment_yaml for name in r.selected)
    assert r.path[-1]["lambda"] == float("inf")
    # The same library call as the command line: the same numbers.
    out = tmp_path / "cli"
    args = [os.path.join(os.environ["NEURALSIM_BINARY_DIR"], "discover"), "--config", config, "--seed", "2", "-q",
            "--out", str(out)] + [a for k, v in overrides.items() for a in ("--set", f"{k}={str(v).lower()}")]
    subprocess.run(args, check=True)
    import json
    groups = json.load(open(out / "discovery.json"))["groups"]
    assert [g["norm"] for g in groups] == [g["norm"] for g in r.groups]


def test_ctrl_c_stops_a_long_call_within_a_second():
    script = (
        "import neuralsim, sys\n"
        "print('start', flush=True)\n"
        "try:\n"
        f"    neuralsim.identify({source('configs/simid_double_pendulum_lengths.yaml')!r}, seed=1,\n"
        "        overrides={'estimate.basin_hopping.rounds': 1000, 'estimate.basin_hopping.cost_threshold': -1,\n"
        "                   'estimate.basin_hopping.population': 2})\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=os.environ)
    assert p.stdout.readline().strip() == "start"
    time.sleep(1.0)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=30)
    assert "interrupted" in out
    assert time.monotonic() - t0 < 1.5


def test_import_recordings_returns_both_parts_of_a_split():
    """A description with csv_import.split: the training and validation
    parts, as import-csv writes them to trajectories.h5 and validation.h5;
    the validation part is never dropped silently."""
    config = source("configs/import/example_positions_rate.yaml")
    with pytest.raises(ValueError, match="with_validation=True"):
        neuralsim.import_recordings(config)
    train, validation = neuralsim.import_recordings(config, with_validation=True)
    assert len(train) == 1 and len(validation) == 1
    (t,), (v,) = train.values(), validation.values()
    # 801 samples less the 10 at each end a 21-sample window drops; the last
    # quarter of the time span for validation, contiguous with training.
    n_train, n_val = len(t["time"]), len(v["time"])
    assert n_train + n_val == 781
    assert abs(n_val / 781 - 0.25) < 0.01
    assert v["time"][0] > t["time"][-1]
    np.testing.assert_allclose(np.diff(t["time"]), 1 / 400, rtol=1e-9)


# The payload experiment of tests/tools/simid_configurations_test.cpp
# (issue #36), noise-free: a two-link arm recorded bare and carrying a
# payload at its tip. The model files hold wrong values; the data are made
# with the truth given as params.
_ARM = ("model:\n"
        "  name: arm\n"
        "  gravity: [0, -9.81, 0]\n"
        "  bodies:\n"
        "    - {name: link1, joint: {name: shoulder, axis: [0, 0, 1], damping: 0.1}, mass: 1.0, com: [0.25, 0, 0],"
        " inertia: [0.001, 0.02, 0.02]}\n"
        "    - {name: link2, parent: link1, joint: {name: elbow, axis: [0, 0, 1], origin: {xyz: [0.5, 0, 0]},"
        " damping: 0.5}, mass: 0.5, com: [0.2, 0, 0], inertia: [0.001, 0.015, 0.015]}\n")
_PAYLOAD = "    - {name: payload, parent: link2, mass: 1.0, com: [0.4, 0, 0], inertia: [0.0002, 0.0002, 0.0002]}\n"
_SHARED_TRUTH = {"link.link2.mass": 0.8, "joint.elbow.damping": 0.2}
_TRUTH = {"bare": {**_SHARED_TRUTH, "joint.shoulder.damping": 0.3},
          "payload": {**_SHARED_TRUTH, "joint.shoulder.damping": 0.45, "link.payload.mass": 0.5}}


def _record_configuration(tmp_path, name, model, amplitude, frequency):
    """Two noise-free recordings of `model` with the truth of `name` under
    sinusoidal torques, written as CSV files: (the CSV-import description
    that simid reads as data, the recorded trajectories)."""
    r = neuralsim.rollout({"model": {"file": str(model)}, "params": _TRUTH[name],
                           "sim": {"integrator": "rk4", "dt": 0.01, "duration": 1.0},
                           "initial_states": {"list": [{"q": [0.3, -0.2], "qd": [0.0, 0.0]},
                                                       {"q": [-0.5, 0.4], "qd": [0.0, 0.0]}]},
                           "controls": {"type": "sinusoid", "amplitude": amplitude, "frequency": frequency}})
    assert r.status == "ok" and len(r.trajectories) == 2
    (tmp_path / name).mkdir()
    for trajectory, t in r.trajectories.items():  # one file per trajectory, named after it
        table = np.column_stack([t["time"], t["q"], t["qd"], t["tau"]])
        np.savetxt(tmp_path / name / f"{trajectory}.csv", table, delimiter=",", fmt="%.17g", comments="",
                   header="time,q0,q1,qd0,qd1,tau0,tau1")
    description = tmp_path / f"{name}.yaml"
    description.write_text(f"csv_import:\n  files: ['{name}/*.csv']\n  time: time\n  model: arm\n"
                           "  joint_names: [shoulder, elbow]\n  q: [q0, q1]\n  qd: [qd0, qd1]\n  tau: [tau0, tau1]\n")
    return str(description), r.trajectories


def test_identify_joint_fit_over_configurations(tmp_path):
    arm, arm_payload = tmp_path / "arm.yaml", tmp_path / "arm_payload.yaml"
    arm.write_text(_ARM)
    arm_payload.write_text(_ARM + _PAYLOAD)
    bare, bare_recorded = _record_configuration(tmp_path, "bare", arm, [6.0, 2.0], [0.7, 1.3])
    payload, payload_recorded = _record_configuration(tmp_path, "payload", arm_payload, [5.0, 2.5], [1.1, 0.6])
    recorded = {"bare": bare_recorded, "payload": payload_recorded}
    config = {
        "model": {"file": str(arm)},
        "sim": {"integrator": "rk4", "dt": 0.01},
        "output": {"plot": False},
        "estimate": {"observe": {"q": 500}, "residual": {"type": "single_shooting", "window": 20},
                     "solver": {"max_iterations": 50}, "basin_hopping": {"enabled": False},
                     "parameters": [
                         {"name": "link.link2.mass", "bounds": [0.1, 3]},
                         {"name": "joint.elbow.damping", "bounds": [0, 2]},
                         {"name": "joint.shoulder.damping", "bounds": [0, 2], "per_configuration": True},
                         {"name": "link.payload.mass", "bounds": [0.05, 3], "configurations": ["payload"]}]},
        "configurations": [{"name": "bare", "data": {"train": bare}},
                           {"name": "payload", "model": {"file": str(arm_payload)}, "data": {"train": payload}}]}
    r = neuralsim.identify(config, seed=1)
    assert r.status == "ok" and r.has_fit, r.message
    # The joint vector: shared values once, the per-configuration one as <name>@<configuration>.
    # Exact data: the truth to round-off (measured: relative errors of 1e-13 to 5e-11).
    assert r.parameters == pytest.approx({"link.link2.mass": 0.8, "joint.elbow.damping": 0.2,
                                          "joint.shoulder.damping@bare": 0.3,
                                          "joint.shoulder.damping@payload": 0.45,
                                          "link.payload.mass": 0.5}, rel=1e-8)
    assert [t["name"] for t in r.train] == ["bare.000", "bare.001", "payload.000", "payload.001"]
    # Each configuration's own result: the parameters that apply to it, under their names in its
    # model; its own recordings, and predictions that follow them.
    assert r.configuration == "" and [c.configuration for c in r.configurations] == ["bare", "payload"]
    for c in r.configurations:
        assert c.parameters == pytest.approx(_TRUTH[c.configuration], rel=1e-8)
        assert c.parameters["joint.shoulder.damping"] == r.parameters["joint.shoulder.damping@" + c.configuration]
        assert [t["name"] for t in c.train] == ["000", "001"]
        for name, t in recorded[c.configuration].items():
            np.testing.assert_array_equal(c.measured[name]["q"], t["q"])
            np.testing.assert_allclose(c.fitted[name]["q"], t["q"], rtol=0, atol=1e-8)

    # Bad configurations are refused naming the key.
    bare_entry, payload_entry = config["configurations"]
    one = r"key 'configurations': expected at least two configurations, got 1"
    with pytest.raises(neuralsim.ConfigError, match=one):
        neuralsim.identify(dict(config, configurations=[bare_entry]))
    twice = r"key 'configurations\.1\.name': configuration 'bare' is named twice"
    with pytest.raises(neuralsim.ConfigError, match=twice):
        neuralsim.identify(dict(config, configurations=[bare_entry, dict(payload_entry, name="bare")]))
