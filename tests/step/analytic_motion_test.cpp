// Trajectories against closed-form mechanics: the small-angle pendulum
// period, ballistic flight of a tumbling body's COM, and the conservation
// laws of torque-free and spherical-joint motion.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "neuralsim/dynamics/centroidal.hpp"
#include "neuralsim/dynamics/energy.hpp"
#include "neuralsim/step/stepper.hpp"
#include "support/files.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {


using testing::sci;

Model<double> single_body(JointType type, const Inertia<double>& inertia) {
  Model<double> model;
  Joint<double> joint;
  joint.type = type;
  model.add_body("body", -1, joint, inertia);
  return model;
}

// Period from the upward zero crossings of q(t), linearly interpolated.
double measure_period(const Model<double>& model, double q0, double duration) {
  Eigen::VectorXd q(1), qd(1);
  q << q0;
  qd << 0;
  const Eigen::VectorXd u = Eigen::VectorXd::Zero(1);
  const double dt = 1e-3;
  Stepper<double> stepper(model, StepOptions{Integrator::kRK4, dt, 1});
  std::vector<double> crossings;
  for (int k = 0; k * dt < duration; ++k) {
    const double q_prev = q[0];
    stepper.step(q, qd, u, k * dt);
    if (q_prev < 0 && q[0] >= 0) crossings.push_back(k * dt + dt * q_prev / (q_prev - q[0]));
  }
  if (crossings.size() < 2) return 0;
  return (crossings.back() - crossings.front()) / (crossings.size() - 1);
}

TEST(AnalyticMotion, SmallAnglePendulumPeriod) {
  Model<double> model = load_yaml_model(testing::source_path("configs/models/pendulum.yaml"));
  const double g = 9.81;
  for (const double l : {1.0, 2.0}) {
    model.set_link_length(0, l);
    const double T0 = 2 * EIGEN_PI * std::sqrt(l / g);
    const double T = measure_period(model, 0.01, 5.2 * T0);  // 5 full periods
    const double rel = std::abs(T - T0) / T0;
    RecordProperty(l == 1.0 ? "period_rel_error_l1" : "period_rel_error_l2", sci(rel));
    EXPECT_LT(rel, 1e-3) << "l = " << l << ": T = " << T << ", 2π√(l/g) = " << T0;
    // Finer: the finite amplitude lengthens the period by q0²/16 = 6.25e-6
    // (next term ~4e-11), which the simulation must resolve.
    EXPECT_NEAR(T / T0 - 1, 0.01 * 0.01 / 16, 1e-8) << "l = " << l;
  }
}

TEST(AnalyticMotion, FreeFallingTumblingBodyComFollowsParabola) {
  // A box (2 kg, 0.4 x 0.3 x 0.2 m) whose COM is offset from the body origin,
  // thrown with linear and angular velocity: the COM flies on a parabola
  // whatever the rotation does.
  const double m = 2.0, a = 0.4, b = 0.3, c = 0.2;
  const Eigen::Vector3d I_diag(m * (b * b + c * c) / 12, m * (a * a + c * c) / 12,
                               m * (a * a + b * b) / 12);
  const Eigen::Vector3d com(0.3, -0.2, 0.1);
  const Model<double> model =
      single_body(JointType::kFree, Inertia<double>::from_com(m, com, I_diag.asDiagonal()));

  Eigen::VectorXd q(7), qd(6);
  const Eigen::Quaterniond r(Eigen::AngleAxisd(0.5, Eigen::Vector3d(1, 2, 3).normalized()));
  q << 1, 2, 3, r.x(), r.y(), r.z(), r.w();
  qd << 0.4, -0.7, 1.1, 0.5, 0.2, 3.0;  // body frame [ω; v_origin]
  // Initial COM position and velocity in world coordinates, from first principles.
  const Eigen::Matrix3d R0 = r.toRotationMatrix();
  const Eigen::Vector3d p0 = q.head<3>() + R0 * com;
  const Eigen::Vector3d v0 = R0 * (qd.tail<3>() + qd.head<3>().cross(com));

  const double dt = 1e-3;
  Stepper<double> stepper(model, StepOptions{Integrator::kRK4, dt, 1});
  const Eigen::VectorXd u = Eigen::VectorXd::Zero(6);
  double max_error = 0;
  for (int k = 0; k < 1000; ++k) {
    stepper.step(q, qd, u, k * dt);
    const double t = (k + 1) * dt;
    const Eigen::Quaterniond rt(q[6], q[3], q[4], q[5]);
    const Eigen::Vector3d p = q.head<3>() + rt.normalized().toRotationMatrix() * com;
    const Eigen::Vector3d expected = p0 + v0 * t + 0.5 * model.gravity * t * t;
    max_error = std::max(max_error, (p - expected).norm());
  }
  RecordProperty("max_com_error_m", sci(max_error));
  EXPECT_LT(max_error, 1e-6);
}

TEST(AnalyticMotion, FastSpinningSphereFliesStraightWithSemiImplicitEuler) {
  // A solid sphere (isotropic inertia: ω stays constant) spinning at 60 rad/s
  // while flying in free fall. Its origin must follow the parabola exactly up
  // to round-off with semi-implicit Euler too: explicit integration of the
  // body-frame Coriolis term -ω×v would grow |v| by sqrt(1 + (hω)²) per step
  // (6x per second here), which made spinning balls in contact speed up.
  const double m = 1.0, I = 0.004;
  const Model<double> model =
      single_body(JointType::kFree, Inertia<double>::from_com(m, Eigen::Vector3d::Zero(),
                                                              Eigen::Matrix3d::Identity() * I));
  Eigen::VectorXd q(7), qd(6);
  q << 0, 0, 1, 0, 0, 0, 1;
  qd << 20.0, -50.0, 30.0, 2.0, 0.5, 3.0;  // |ω| = 61.6 rad/s; identity pose: body = world
  const Eigen::Vector3d p0 = q.head<3>(), v0 = qd.tail<3>();
  const double dt = 1e-3;
  Stepper<double> stepper(model, StepOptions{Integrator::kSemiImplicitEuler, dt, 1});
  const Eigen::VectorXd u = Eigen::VectorXd::Zero(6);
  double max_error = 0;
  for (int k = 0; k < 2000; ++k) {
    stepper.step(q, qd, u, k * dt);
    const double t = (k + 1) * dt;
    // Semi-implicit Euler on constant gravity: p_k = p0 + v0 t + g t (t + h) / 2.
    const Eigen::Vector3d expected = p0 + v0 * t + 0.5 * model.gravity * t * (t + dt);
    max_error = std::max(max_error, (q.head<3>() - expected).norm());
  }
  RecordProperty("max_position_error_m", sci(max_error));
  EXPECT_LT(max_error, 1e-9);
  EXPECT_NEAR(qd.head<3>().norm(), std::sqrt(20.0 * 20 + 50 * 50 + 30 * 30), 1e-9);
}

TEST(AnalyticMotion, TumblingAsymmetricBodyConservesAngularMomentumAndEnergy) {
  // Principal inertias 1, 2, 3 and no gravity: spin about the intermediate
  // axis is unstable (Dzhanibekov effect), so the body flips repeatedly.
  Model<double> model = single_body(
      JointType::kFree,
      Inertia<double>::from_com(1.0, Eigen::Vector3d::Zero(), Eigen::Vector3d(1, 2, 3).asDiagonal()));
  model.gravity.setZero();
  Eigen::VectorXd q(7), qd(6);
  q << 0, 0, 0, 0, 0, 0, 1;
  qd << 0.05, 3.0, 0.05, 0, 0, 0;  // mostly about the intermediate axis
  Data<double> data(model);
  forward_kinematics(model, data, q, qd);
  const Eigen::Vector3d L0 = centroidal(model, data).angular_momentum;
  const double E0 = kinetic_energy(model, data, qd);

  const double dt = 1e-3;
  Stepper<double> stepper(model, StepOptions{Integrator::kRK4, dt, 1});
  const Eigen::VectorXd u = Eigen::VectorXd::Zero(6);
  double max_L = 0, max_E = 0, min_wy = qd[1];
  for (int k = 0; k < 5000; ++k) {
    stepper.step(q, qd, u, k * dt);
    forward_kinematics(model, data, q, qd);
    // L = R I ω in world axes, computed here directly from the state.
    const Eigen::Matrix3d R = Eigen::Quaterniond(q[6], q[3], q[4], q[5]).normalized().toRotationMatrix();
    const Eigen::Vector3d L = R * Eigen::Vector3d(1, 2, 3).asDiagonal() * qd.head<3>();
    EXPECT_LT((centroidal(model, data).angular_momentum - L).norm(), 1e-12 * L0.norm());
    max_L = std::max(max_L, (L - L0).norm() / L0.norm());
    max_E = std::max(max_E, std::abs(kinetic_energy(model, data, qd) - E0) / E0);
    min_wy = std::min(min_wy, qd[1]);
  }
  RecordProperty("max_rel_angular_momentum_error", sci(max_L));
  RecordProperty("max_rel_energy_error", sci(max_E));
  EXPECT_LT(min_wy, -2.0) << "the body never flipped: the test would be trivial";
  EXPECT_LT(max_L, 1e-6);
  EXPECT_LT(max_E, 1e-6);
}

// A rod-like body hanging from a ball joint: gravity has no moment about the
// vertical through the pivot, so L_z is conserved along with the energy.
// Returns the maximum relative errors {energy, L_z} over 5 s of RK4 at dt.
std::pair<double, double> spherical_pendulum_errors(double dt) {
  Model<double> model = single_body(
      JointType::kSpherical,
      Inertia<double>::from_com(1.5, Eigen::Vector3d(0, 0, -0.8),
                                Eigen::Vector3d(0.08, 0.05, 0.01).asDiagonal()));
  Data<double> data(model);
  Eigen::VectorXd q(4), qd(3);
  const Eigen::Quaterniond r(Eigen::AngleAxisd(0.9, Eigen::Vector3d(1, 0.3, 0).normalized()));
  q << r.x(), r.y(), r.z(), r.w();
  qd << 0.5, -1.2, 2.0;
  auto energy = [&] {
    forward_kinematics(model, data, q, qd);
    return kinetic_energy(model, data, qd) + potential_energy(model, data, q);
  };
  auto vertical_momentum = [&] {
    forward_kinematics(model, data, q, qd);
    const Centroidal<double> c = centroidal(model, data);
    return (c.angular_momentum + c.com.cross(c.linear_momentum)).z();  // about the pivot
  };
  const double E0 = energy(), Lz0 = vertical_momentum();
  Stepper<double> stepper(model, StepOptions{Integrator::kRK4, dt, 1});
  const Eigen::VectorXd u = Eigen::VectorXd::Zero(3);
  double max_E = 0, max_Lz = 0;
  for (int k = 0; k * dt < 5.0; ++k) {
    stepper.step(q, qd, u, k * dt);
    max_E = std::max(max_E, std::abs(energy() - E0) / std::abs(E0));
    max_Lz = std::max(max_Lz, std::abs(vertical_momentum() - Lz0) / std::abs(Lz0));
  }
  return {max_E, max_Lz};
}

TEST(AnalyticMotion, SphericalPendulumConservesEnergyAndVerticalAngularMomentum) {
  const auto [max_E, max_Lz] = spherical_pendulum_errors(1e-3);
  RecordProperty("max_rel_energy_error", sci(max_E));
  RecordProperty("max_rel_Lz_error", sci(max_Lz));
  // A fourth-order method reaches ~1e-12 here; 1e-8 leaves a wide margin.
  EXPECT_LT(max_E, 1e-8);
  EXPECT_LT(max_Lz, 1e-8);
}

TEST(AnalyticMotion, Rk4IsFourthOrderOnRotations) {
  // Halving dt must shrink the error of a 4th-order method ~16x (2nd order: 4x).
  const double e_coarse = spherical_pendulum_errors(2e-3).first;
  const double e_fine = spherical_pendulum_errors(1e-3).first;
  RecordProperty("energy_error_ratio_dt2_over_dt1", sci(e_coarse / e_fine));
  EXPECT_GT(e_coarse / e_fine, 10.0) << "errors " << e_coarse << " (dt 2 ms), " << e_fine << " (dt 1 ms)";
}

}  // namespace
}  // namespace neuralsim
