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
