// Energy bookkeeping of the integrators on the NeuralSim double pendulum
// (l = 3, 4; point masses 1, 1): conserved without damping, and dissipated
// exactly as fast as the dampers do work when damped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "neuralsim/dynamics/energy.hpp"
#include "neuralsim/step/stepper.hpp"
#include "support/files.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

using testing::sci;

double total_energy(const Model<double>& model, Data<double>& data, const Eigen::VectorXd& q,
                    const Eigen::VectorXd& qd) {
  forward_kinematics(model, data, q, qd);
  return kinetic_energy(model, data, qd) + potential_energy(model, data, q);
}

// Relative energy error |E(t) - E0| / |E0| at every step of a 10 s rollout.
std::vector<double> energy_drift(const Model<double>& model, Integrator integrator, double dt,
                                 double duration) {
  Eigen::VectorXd q(2), qd(2);
  q << 1.2, -0.8;  // a large swing: both links well away from small angles
  qd << 0.5, -0.3;
  const Eigen::VectorXd u = Eigen::VectorXd::Zero(2);
  Data<double> data(model);
  const double E0 = total_energy(model, data, q, qd);
  Stepper<double> stepper(model, StepOptions{integrator, dt, 1});
  const int n = static_cast<int>(std::lround(duration / dt));
  std::vector<double> drift(n);
  for (int k = 0; k < n; ++k) {
    stepper.step(q, qd, u, k * dt);
    drift[k] = std::abs(total_energy(model, data, q, qd) - E0) / std::abs(E0);
  }
  return drift;
}

Model<double> double_pendulum() {
  return load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
}

TEST(Energy, Rk4ConservesEnergyOfUndampedDoublePendulum) {
  const std::vector<double> drift = energy_drift(double_pendulum(), Integrator::kRK4, 1e-3, 10.0);
  const double max_drift = *std::max_element(drift.begin(), drift.end());
  RecordProperty("max_relative_drift", sci(max_drift));
  EXPECT_LT(max_drift, 1e-6);
}

TEST(Energy, SemiImplicitEulerEnergyErrorIsBoundedWithoutSecularGrowth) {
  const double dt = 1e-3;
  const std::vector<double> drift =
      energy_drift(double_pendulum(), Integrator::kSemiImplicitEuler, dt, 10.0);
  const int two_s = static_cast<int>(std::lround(2.0 / dt));
  const double first = *std::max_element(drift.begin(), drift.begin() + two_s);
  const double last = *std::max_element(drift.end() - two_s, drift.end());
  const double overall = *std::max_element(drift.begin(), drift.end());
  RecordProperty("max_drift_first_2s", sci(first));
  RecordProperty("max_drift_last_2s", sci(last));
  EXPECT_LT(overall, 1e-2);
  // Symplectic behaviour: the error oscillates instead of accumulating, so
  // the last two seconds are no worse than the first two (within a factor 2).
  // Explicit Euler, whose error grows steadily, gives a ratio of ~4 here.
  EXPECT_LT(last, 2 * first) << "first 2 s: " << first << ", last 2 s: " << last;
  EXPECT_GT(first, 0.0);
}

TEST(Energy, EnergyLossEqualsDampingWork) {
  Model<double> model = double_pendulum();
  const double d[2] = {0.3, 0.2};
  model.joints[0].dynamics.damping = d[0];
  model.joints[1].dynamics.damping = d[1];
  Data<double> data(model);
  Eigen::VectorXd q(2), qd(2);
  q << 1.2, -0.8;
  qd << 0.5, -0.3;
  const Eigen::VectorXd u = Eigen::VectorXd::Zero(2);
  const double dt = 1e-3, E0 = total_energy(model, data, q, qd);
  auto power = [&](const Eigen::VectorXd& v) { return -(d[0] * v[0] * v[0] + d[1] * v[1] * v[1]); };

  Stepper<double> stepper(model, StepOptions{Integrator::kRK4, dt, 1});
  double work = 0, max_error = 0, p_prev = power(qd);
  for (int k = 0; k < 10000; ++k) {
    stepper.step(q, qd, u, k * dt);
    const double p = power(qd);
    work += 0.5 * dt * (p_prev + p);  // trapezoid rule
    p_prev = p;
    max_error = std::max(max_error, std::abs(total_energy(model, data, q, qd) - E0 - work));
  }
  // Tolerance: the composite trapezoid rule errs by dt²/12 · (P'(t) - P'(0)),
  // with |P'| = |2 Σ dᵢ q̇ᵢ q̈ᵢ| ≲ 10 W/s here, i.e. ≲ 1e-6 J; RK4 adds ~1e-10 J.
  // The dampers remove ~8 J, so 1e-5 J checks the balance to ~1e-6.
  RecordProperty("max_energy_balance_error_J", sci(max_error));
  RecordProperty("damping_work_J", sci(work));
  EXPECT_LT(work, -1.0);  // the dampers did dissipate a sizeable amount
  EXPECT_LT(max_error, 1e-5) << "dissipated " << -work << " J";
}

}  // namespace
}  // namespace neuralsim
