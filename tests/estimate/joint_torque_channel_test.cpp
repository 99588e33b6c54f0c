// The joint-force channels (observe.joint_torques, observe.motor_currents;
// issue #36) against the double pendulum's closed-form equations of motion:
// on data our simulator recorded (with joint damping and armature, so the
// sensor's link-side torque differs from the drive's), the channel's model
// torque is M(q)q̈ + h(q, q̇) + g(q) of the rigid links at the true
// acceleration, and its current is the applied input over k_t; the Jets'
// derivatives equal central differences.
#include <gtest/gtest.h>

#include <cmath>

#include "neuralsim/estimate/residual_common.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "support/fit_support.hpp"

namespace neuralsim::joint_torque_channel_test {
namespace {

constexpr double kJtcDamping = 0.4, kJtcArmature = 0.3, kJtcGravity = 9.81;
const double kJtcTorqueConstant[2] = {2.0, 0.5};

Model<double> jtc_model() {
  return parse_yaml_model(
      "model: {generator: double_pendulum, lengths: [3.0, 4.0], masses: [1.0, 1.0], joints: {joint1: {damping: 0.4, "
      "armature: 0.3}, joint2: {damping: 0.4, armature: 0.3}}}",
      "jtc.yaml");
}

StepOptions jtc_step() {
  StepOptions s;
  s.integrator = Integrator::kRK4;
  s.dt = 0.01;
  return s;
}

// The point-mass double pendulum (m = 1, 1; l = 3, 4; q2 relative, q = 0
// hanging down) from its Lagrangian: the rigid links' torque
// M(q)q̈ + h(q, q̇) + g(q), and the true q̈ from (M + armature)q̈ =
// u − b q̇ − h − g. (Invariant under mirroring the plane, so the joint
// axes' sign does not enter.)
struct JtcClosedForm {
  Eigen::Vector2d qdd, link_torque;
};
JtcClosedForm jtc_closed_form(const Eigen::Vector2d& q, const Eigen::Vector2d& qd, const Eigen::Vector2d& u) {
  const double m1 = 1, m2 = 1, l1 = 3, l2 = 4, g = kJtcGravity;
  const double c2 = std::cos(q[1]), s2 = std::sin(q[1]);
  Eigen::Matrix2d M;
  M(0, 0) = (m1 + m2) * l1 * l1 + m2 * l2 * l2 + 2 * m2 * l1 * l2 * c2;
  M(0, 1) = M(1, 0) = m2 * l2 * l2 + m2 * l1 * l2 * c2;
  M(1, 1) = m2 * l2 * l2;
  Eigen::Vector2d h;
  h[0] = -m2 * l1 * l2 * s2 * (2 * qd[0] * qd[1] + qd[1] * qd[1]) + (m1 + m2) * g * l1 * std::sin(q[0]) +
         m2 * g * l2 * std::sin(q[0] + q[1]);
  h[1] = m2 * l1 * l2 * s2 * qd[0] * qd[0] + m2 * g * l2 * std::sin(q[0] + q[1]);
  JtcClosedForm out;
  out.qdd = (M + kJtcArmature * Eigen::Matrix2d::Identity()).lu().solve(u - kJtcDamping * qd - h);
  out.link_torque = M * out.qdd + h;
  return out;
}

// One recording under sinusoidal torques, with zero sensor readings: the
// residuals (weight 1) are then the model's torques and currents.
Trajectory jtc_recording(const Model<double>& model) {
  testing::SinusoidRun run{Eigen::Vector2d(0.5, -0.3), Eigen::Vector2d(20.0, 8.0), Eigen::Vector2d(0.7, 1.3)};
  Trajectory tr = testing::record_sinusoids(model, jtc_step(), {run}, 40)[0];
  tr.tau_measured = RowMatrixXd::Zero(tr.size(), 2);
  tr.current = RowMatrixXd::Zero(tr.size(), 2);
  return tr;
}

ObservationSpec jtc_observe() {
  ObservationSpec o;
  o.q_weight = 0;
  o.joint_torques = {1.0, {0, 1}};
  o.motor_currents = {1.0, {0, 1}};
  o.torque_constant = {kJtcTorqueConstant[0], kJtcTorqueConstant[1]};
  return o;
}

// A length and a torque constant, both at the truth.
ParameterSet jtc_parameters(const Model<double>& model) {
  EstimatedParameter length;
  length.target = *resolve_named_parameter("link.link2.length", model, false);
  length.initial = 4.0;
  EstimatedParameter kt;
  kt.target = *resolve_named_parameter("joint.joint2.torque_constant", model, false);
  kt.initial = kJtcTorqueConstant[1];
  kt.lower = 0.1;
  kt.upper = 10;
  return ParameterSet({length, kt});
}

}  // namespace

TEST(JointTorqueChannel, ShootingTorqueIsTheLinkSideTorqueOfTheClosedForm) {
  const Model<double> model = jtc_model();
  const Trajectory tr = jtc_recording(model);
  const ParameterSet params = jtc_parameters(model);
  const ResidualContext ctx{&model, &params, jtc_step(), jtc_observe()};
  ASSERT_EQ(ctx.observe.residuals_per_sample(model), 4);
  const Window w{&tr, 0, 39};
  const std::unique_ptr<ceres::CostFunction> cost(make_single_shooting_cost(ctx, w));
  const std::vector<double> x = params.initial_variables();
  const double* blocks[] = {x.data()};
  std::vector<double> r(static_cast<size_t>(cost->num_residuals()));
  ASSERT_TRUE(cost->Evaluate(blocks, r.data(), nullptr));
  double drive_terms = 0;
  for (int k = 1; k <= 39; ++k) {
    const Eigen::Vector2d q = tr.q.row(k).transpose(), qd = tr.qd.row(k).transpose(), u = tr.tau.row(k).transpose();
    const JtcClosedForm cf = jtc_closed_form(q, qd, u);
    const double* rk = r.data() + 4 * (k - 1);
    for (int i = 0; i < 2; ++i) {
      EXPECT_NEAR(rk[i], cf.link_torque[i], 1e-9 * (1 + std::abs(cf.link_torque[i]))) << "sample " << k;
      EXPECT_NEAR(rk[2 + i], u[i] / kJtcTorqueConstant[i], 1e-9 * (1 + std::abs(u[i]))) << "sample " << k;
      drive_terms = std::max(drive_terms, std::abs(cf.link_torque[i] - u[i]));
    }
  }
  EXPECT_GT(drive_terms, 0.5);  // damping and armature make the sensor's torque differ from the drive's
}

TEST(JointTorqueChannel, InverseDynamicsRowsFollowTheTorqueRows) {
  const Model<double> model = jtc_model();
  const Trajectory tr = jtc_recording(model);
  const ParameterSet params = jtc_parameters(model);
  const ResidualContext ctx{&model, &params, jtc_step(), jtc_observe()};
  // Three samples at the closed form's exact q̈ (no filter in the way).
  auto samples = std::make_shared<InverseDynamicsSamples>();
  samples->trajectory = &tr;
  const int rows[] = {5, 17, 33};
  samples->q.resize(3, 2);
  samples->qd.resize(3, 2);
  samples->qdd.resize(3, 2);
  samples->tau.resize(3, 2);
  for (int s = 0; s < 3; ++s) {
    const int k = rows[s];
    samples->rows.push_back(k);
    samples->q.row(s) = tr.q.row(k);
    samples->qd.row(s) = tr.qd.row(k);
    samples->tau.row(s) = tr.tau.row(k);
    samples->qdd.row(s) = jtc_closed_form(tr.q.row(k).transpose(), tr.qd.row(k).transpose(),
                                          tr.tau.row(k).transpose()).qdd.transpose();
  }
  const std::vector<double> x = params.initial_variables();
  const double* blocks[] = {x.data()};
  for (int s = 0; s < 3; ++s) {
    const std::unique_ptr<ceres::CostFunction> cost(make_inverse_dynamics_cost(ctx, samples, s, 1.0));
    ASSERT_EQ(cost->num_residuals(), 6);
    double r[6];
    ASSERT_TRUE(cost->Evaluate(blocks, r, nullptr));
    const Eigen::Vector2d u = tr.tau.row(rows[s]).transpose();
    const JtcClosedForm cf = jtc_closed_form(tr.q.row(rows[s]).transpose(), tr.qd.row(rows[s]).transpose(), u);
    for (int i = 0; i < 2; ++i) {
      EXPECT_NEAR(r[i], 0.0, 1e-9 * (1 + std::abs(u[i])));  // the commanded torque rows, at the truth
      EXPECT_NEAR(r[2 + i], cf.link_torque[i], 1e-9 * (1 + std::abs(cf.link_torque[i])));
      EXPECT_NEAR(r[4 + i], u[i] / kJtcTorqueConstant[i], 1e-9 * (1 + std::abs(u[i])));
    }
  }
}

// The Jacobian by Jets against central differences, for a length (through
// the simulated motion and the link-side torque) and k_t (through the
// current), with a measured reading so the residuals are not the model's alone.
TEST(JointTorqueChannel, JetDerivativesMatchCentralDifferences) {
  const Model<double> model = jtc_model();
  Trajectory tr = jtc_recording(model);
  tr.tau_measured.setConstant(0.3);
  tr.current.setConstant(-0.2);
  const ParameterSet params = jtc_parameters(model);
  const ResidualContext ctx{&model, &params, jtc_step(), jtc_observe()};
  const std::unique_ptr<ceres::CostFunction> cost(make_single_shooting_cost(ctx, Window{&tr, 3, 12}));
  std::vector<double> x = params.initial_variables();
  const int n = cost->num_residuals();
  std::vector<double> r(static_cast<size_t>(n)), J(static_cast<size_t>(n) * 2), rp(r), rm(r);
  const double* blocks[] = {x.data()};
  double* jac[] = {J.data()};
  ASSERT_TRUE(cost->Evaluate(blocks, r.data(), jac));
  for (int p = 0; p < 2; ++p) {
    const double h = 1e-6, x0 = x[static_cast<size_t>(p)];
    x[static_cast<size_t>(p)] = x0 + h;
    ASSERT_TRUE(cost->Evaluate(blocks, rp.data(), nullptr));
    x[static_cast<size_t>(p)] = x0 - h;
    ASSERT_TRUE(cost->Evaluate(blocks, rm.data(), nullptr));
    x[static_cast<size_t>(p)] = x0;
    double largest = 0;
    for (int i = 0; i < n; ++i) {
      const double fd = (rp[static_cast<size_t>(i)] - rm[static_cast<size_t>(i)]) / (2 * h);
      EXPECT_NEAR(J[static_cast<size_t>(i) * 2 + p], fd, 1e-5 * (1 + std::abs(fd))) << "residual " << i << ", parameter " << p;
      largest = std::max(largest, std::abs(fd));
    }
    EXPECT_GT(largest, 0.1) << "parameter " << p;  // each parameter moves the residuals
  }
}

}  // namespace neuralsim::joint_torque_channel_test
