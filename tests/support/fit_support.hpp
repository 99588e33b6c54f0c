// The identification tests' common set-up: recordings of a model under
// sinusoidal controls, and a single-shooting fit of named parameters
// declared as in a config's `estimate.parameters`.
#pragma once

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "neuralsim/estimate/estimation_problem.hpp"
#include "neuralsim/estimate/imu.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/model/parameters.hpp"
#include "neuralsim/step/controllers.hpp"
#include "neuralsim/step/simulate.hpp"
#include "neuralsim/step/stepper.hpp"
#include "support/files.hpp"

namespace neuralsim::testing {

// One recording: u_i = amplitude_i sin(2π frequency_i t) from (q0, 0).
struct SinusoidRun {
  Eigen::VectorXd q0, amplitude, frequency_hz;
};

inline std::vector<Trajectory> record_sinusoids(const Model<double>& truth, const StepOptions& step,
                                                const std::vector<SinusoidRun>& runs, int steps) {
  std::vector<Trajectory> data;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    Stepper<double> stepper(truth, step);
    Sinusoid s;
    s.offset = s.phase = Eigen::VectorXd::Zero(truth.nv);
    s.amplitude = runs[k].amplitude;
    s.frequency_hz = runs[k].frequency_hz;
    SinusoidControl<double> control(s);
    const Eigen::VectorXd qd0 = Eigen::VectorXd::Zero(truth.nv);
    data.push_back(simulate(stepper, runs[k].q0, qd0, control, steps, [] { return false; }));
    data.back().name = std::to_string(k);
  }
  return data;
}

// The IMU tests' sensor "tip": on the double pendulum's second link, off
// its origin and tilted (config: {name: tip, link: link2, position: [0.2,
// 0.1, -1.5], rpy: [0.2, -0.3, 0.5]}).
inline ImuMount double_pendulum_tip_mount(const Model<double>& model) {
  ImuMount m;
  m.body = model.body_index("link2");
  m.position = Eigen::Vector3d(0.2, 0.1, -1.5);
  m.rotation = rpy_rotation(0.2, -0.3, 0.5);
  return m;
}

struct SingleShootingFit {
  ParameterSet params;
  LocalResult result;
  double value(int i) const { return params.physical<double>(i, result.x[static_cast<std::size_t>(i)]); }
};

// Single shooting over windows of `window` samples from `start`, fitting the
// parameters of `parameters_yaml` (a YAML list: [{name, initial, bounds}]).
inline SingleShootingFit fit_single_shooting(const Model<double>& start, const std::string& parameters_yaml,
                                             const std::vector<Trajectory>& data, const StepOptions& step,
                                             int max_iterations, int window = 100) {
  SingleShootingFit fit{read_parameter_set(Config::parse("p: " + parameters_yaml, "test.yaml"), "p", start), {}};
  std::vector<const Trajectory*> train;
  for (const auto& t : data) train.push_back(&t);
  ResidualContext ctx{&start, &fit.params, step, ObservationSpec{}};
  ProblemOptions po;
  po.window = window;
  EstimationProblem problem(ctx, train, po);
  SolverOptions so;
  so.max_iterations = max_iterations;
  fit.result = problem.solve(fit.params.initial_variables(), so);
  return fit;
}

inline StepOptions rk4_step(double dt) {
  StepOptions s;
  s.integrator = Integrator::kRK4;
  s.dt = dt;
  return s;
}

inline bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}
inline bool bitwise_equal(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The double pendulum (configs/models/double_pendulum.yaml, joint 1 damped
// at 0.3) under sinusoidal torques (amplitude 2, 0.5–1.1 Hz) from seeded
// random angles at rest, RK4 at 10 ms: n trajectories of `steps` steps, to
// fit both lengths (from 2.6 and 4.5) and the damping (from 0.1), with or
// without bounds.
struct DampedPendulumFit {
  Model<double> truth = load_yaml_model(source_path("configs/models/double_pendulum.yaml"));
  ParameterSet params;
  std::vector<Trajectory> data;
  std::vector<const Trajectory*> train;

  DampedPendulumFit(int n, int steps, unsigned seed, bool bounds = true) {
    set_parameter(truth, resolve_parameter(truth, "joint.joint1.damping"), 0.3);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<SinusoidRun> runs(static_cast<std::size_t>(n));
    for (SinusoidRun& run : runs) {
      run.q0.resize(truth.nq);
      for (int i = 0; i < truth.nq; ++i) run.q0[i] = u(rng);
      run.amplitude = Eigen::VectorXd::Constant(truth.nv, 2.0);
      run.frequency_hz = Eigen::VectorXd::LinSpaced(truth.nv, 0.5, 1.1);
    }
    data = record_sinusoids(truth, rk4_step(0.01), runs, steps);
    for (const auto& t : data) train.push_back(&t);
    params = read_parameter_set(
        Config::parse(bounds ? "p: [{name: link.link1.length, initial: 2.6, bounds: [0.1, 10]},"
                               " {name: link.link2.length, initial: 4.5, bounds: [0.1, 10]},"
                               " {name: joint.joint1.damping, initial: 0.1, bounds: [0, 5]}]"
                             : "p: [{name: link.link1.length, initial: 2.6}, {name: link.link2.length, initial: 4.5},"
                               " {name: joint.joint1.damping, initial: 0.1}]",
                      "damped_pendulum_fit.yaml"),
        "p", truth);
  }
  ResidualContext ctx() const { return ResidualContext{&truth, &params, rk4_step(0.01), ObservationSpec{}}; }
};

// An empty recording of n samples: time, q (n × nq), q̇ and τ (n × nv).
inline Trajectory sized_trajectory(const std::string& name, int n, int nq, int nv) {
  Trajectory tr;
  tr.name = name;
  tr.time.resize(n);
  tr.q.resize(n, nq);
  tr.qd.resize(n, nv);
  tr.tau.resize(n, nv);
  return tr;
}

}  // namespace neuralsim::testing
