// The identification tests' common set-up: recordings of a model under
// sinusoidal controls, and a single-shooting fit of named parameters
// declared as in a config's `estimate.parameters`.
#pragma once

#include <string>
#include <vector>

#include "neuralsim/estimate/estimation_problem.hpp"
#include "neuralsim/estimate/imu.hpp"
#include "neuralsim/experiment/estimation_config.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/step/controllers.hpp"
#include "neuralsim/step/simulate.hpp"
#include "neuralsim/step/stepper.hpp"

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

}  // namespace neuralsim::testing
