// Runs a controlled simulation and records it as a Trajectory.
#pragma once

#include <functional>

#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/step/controllers.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

// Simulates `num_steps` steps of stepper.options().dt from (q0, qd0) and
// records T = num_steps + 1 samples, including the control applied during
// each step (the last sample repeats the last control).
// `should_stop` is polled between steps (Ctrl-C); returns early when true.
template <class StopFn>
Trajectory simulate(Stepper<double>& stepper, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
                    Controller<double>& controller, long long num_steps, StopFn&& should_stop,
                    double t0 = 0.0) {
  const Model<double>& model = stepper.model();
  Trajectory traj;
  traj.time.resize(num_steps + 1);
  traj.q.resize(num_steps + 1, model.nq);
  traj.qd.resize(num_steps + 1, model.nv);
  traj.tau.resize(num_steps + 1, model.nv);
  Eigen::VectorXd q = q0, qd = qd0, u = Eigen::VectorXd::Zero(model.nv);
  const double dt = stepper.options().dt;
  long long k = 0;
  for (; k < num_steps; ++k) {
    const double t = t0 + k * dt;
    traj.time[k] = t;
    traj.q.row(k) = q.transpose();
    traj.qd.row(k) = qd.transpose();
    controller.compute(k, t, q, qd, u);
    traj.tau.row(k) = u.transpose();
    stepper.step(q, qd, u, t);
    if (should_stop()) {
      ++k;
      break;
    }
  }
  traj.time[k] = t0 + k * dt;
  traj.q.row(k) = q.transpose();
  traj.qd.row(k) = qd.transpose();
  traj.tau.row(k) = u.transpose();
  if (k < num_steps) {  // interrupted: keep what was simulated
    traj.time.conservativeResize(k + 1);
    traj.q.conservativeResize(k + 1, Eigen::NoChange);
    traj.qd.conservativeResize(k + 1, Eigen::NoChange);
    traj.tau.conservativeResize(k + 1, Eigen::NoChange);
  }
  return traj;
}

// Steps from (q, qd) under each row of `controls` (T × nv, row k held over
// step k), writing the state after step k into row k of Q (T × nq) and QD
// (T × nv); q and qd end at the last state. `should_stop` (may be empty) is
// polled every 1000 steps. Returns the number of steps taken (< T when it
// stopped). Compiled in the library, so that a caller's glue (the Python
// module) adds no per-step cost.
Eigen::Index rollout_controls(Stepper<double>& stepper, Eigen::VectorXd& q, Eigen::VectorXd& qd,
                              const Eigen::Ref<const RowMatrixXd>& controls, Eigen::Ref<RowMatrixXd> Q,
                              Eigen::Ref<RowMatrixXd> QD, const std::function<bool()>& should_stop);

}  // namespace neuralsim
