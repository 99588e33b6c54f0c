// Excitation design beyond the regressor (estimate/excitation_design.hpp,
// estimate/excitation_parameters.hpp):
//  - the named parameters' columns ∂u/∂θ (gravity, a joint origin, a gear
//    ratio, a Stribeck law's static level) are central differences of the
//    recorded command u in θ;
//  - the criterion's gradient with named parameters in F matches central
//    differences of the same function;
//  - what the torques cannot see is reported, not given a small error:
//    gravity along the joint axes and the first joint's origin (a fixed base
//    in uniform gravity) have no effect; the elbow's origin together with
//    gravity and every inertia is one direction of dimensional analysis
//    (lengths × α, gravity × α, masses × α⁻²: the same torques), while either
//    alone with the inertias is identifiable; a name already in F (a chosen
//    link's mass, a joint term) is refused;
//  - the predicted standard errors of nonlinear parameters (a length, the
//    gravity, a gear ratio) are the spread of Gauss–Newton fits of them to
//    noisy commands along the same trajectory;
//  - a floating base on a stand: finite information, every limit kept, the
//    base held at its pose; the stand's wrench rows add identifiable
//    combinations, among them the total mass, which the joint torques
//    cannot see (the base link's mass acts on no joint) and the force rows
//    see (at rest they read −M g in base axes).
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <random>

#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/estimate/excitation_design.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/step/passive_forces.hpp"
#include "support/excitation_support.hpp"
#include "support/files.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace excitation_named_test {
namespace {

Model<double> named_arm() {
  Model<double> m = load_yaml_model(testing::source_path("configs/models/geared_arm.yaml"));
  JointDynamics<double>& d = m.joints[0].dynamics;  // a Stribeck law on the shoulder
  d.friction_law = FrictionLaw::kStribeck;
  d.coulomb_friction = 0.2;
  d.friction_static = 0.35;
  d.stribeck_velocity = 0.3;
  d.friction_velocity = 0.05;
  return m;
}

ExcitationDesignOptions named_options() {
  ExcitationDesignOptions o = testing::two_link_excitation_options();
  o.harmonics = 2;
  o.sample_rate = 10;
  o.limits.qdd = Eigen::Vector2d::Constant(std::numeric_limits<double>::infinity());
  o.max_iterations = 15;
  o.seed = 3;
  return o;
}

// The recorded command u of `model` at (q, q̇, q̈).
Eigen::VectorXd named_command(const Model<double>& model, const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
                              const Eigen::VectorXd& qdd) {
  Data<double> data(model);
  rnea(model, data, q, qd, qdd);
  passive_forces(model, data, q, qd);
  Eigen::VectorXd u(model.nv);
  for (int j = 0; j < model.nv; ++j)
    u[j] = (data.tau[j] - data.tau_passive[j]) / model.joints[static_cast<size_t>(j)].dynamics.gear_ratio;
  return u;
}

Model<double> named_with(const Model<double>& model, const std::string& name, double value) {
  Model<double> m = model;
  set_named_parameter<double>(*resolve_named_parameter(name, m, false), value, &m, nullptr, nullptr);
  return m;
}

TEST(ExcitationNamed, JacobianColumnsAreCentralDifferencesOfTheCommand) {
  const Model<double> model = named_arm();
  const std::vector<std::string> names = {"gravity.y", "joint.elbow.origin.x", "joint.elbow.gear_ratio",
                                          "joint.shoulder.friction_static", "link.link2.mass"};
  const ExcitationParameterJacobian jac(model, names, {0, 1}, {true, true});
  ExcitationParameterJacobian::Workspace ws(jac);
  const Eigen::Vector2d q(0.4, -0.9), qd(0.2, 1.1), qdd(-1.3, 0.7);
  Eigen::MatrixXd J;
  jac.evaluate(ws, q, qd, qdd, J);
  for (int c = 0; c < jac.size(); ++c) {
    const double v = jac.values()[static_cast<size_t>(c)], h = 1e-6 * std::max(1.0, std::abs(v));
    const Eigen::VectorXd fd = (named_command(named_with(model, names[static_cast<size_t>(c)], v + h), q, qd, qdd) -
                                named_command(named_with(model, names[static_cast<size_t>(c)], v - h), q, qd, qdd)) /
                               (2 * h);
    EXPECT_GT(fd.norm(), 1e-3) << names[static_cast<size_t>(c)];  // each acts on u here
    EXPECT_LE((J.col(c) - fd).norm(), 1e-7 * (1 + fd.norm())) << names[static_cast<size_t>(c)];
  }
}

TEST(ExcitationNamed, GradientWithNamedParametersMatchesCentralDifferences) {
  const Model<double> model = named_arm();
  ExcitationDesignOptions o = named_options();
  o.parameters = {"gravity.y", "joint.elbow.gear_ratio", "joint.shoulder.friction_static"};
  o.penalty = 10;
  const ExcitationObjective objective(model, o);
  ASSERT_EQ(objective.named().size(), 3u);
  std::mt19937 rng(5);
  std::normal_distribution<double> n;
  Eigen::VectorXd z(objective.num_free()), g;
  for (Eigen::Index i = 0; i < z.size(); ++i) z[i] = 0.6 * n(rng);
  double value = 0;
  ASSERT_TRUE(objective.evaluate(z, &value, &g));
  const Eigen::VectorXd fd = testing::excitation_central_differences(objective, z);
  for (Eigen::Index i = 0; i < z.size(); ++i)
    EXPECT_NEAR(g[i], fd[i], 1e-5 * (1 + g.cwiseAbs().maxCoeff())) << "variable " << i;
}

bool named_in_f(const ExcitationObjective& o, const std::string& name) {
  for (const std::string& n : o.named())
    if (n == name) return true;
  return false;
}

TEST(ExcitationNamed, WhatTheTorquesCannotSeeIsNotIdentifiable) {
  const Model<double> model = named_arm();
  ExcitationDesignOptions o = named_options();
  // Gravity along the joints' z axes exerts no torque about them; moving the
  // whole arm (the first joint's origin) in uniform gravity changes nothing.
  o.parameters = {"gravity.z", "joint.shoulder.origin.x", "joint.shoulder.origin.y", "gravity.y"};
  {
    const ExcitationObjective obj(model, o);
    EXPECT_EQ(obj.named(), std::vector<std::string>{"gravity.y"});
    ASSERT_EQ(obj.unidentifiable().size(), 3u);
    for (const auto& [name, with] : obj.unidentifiable()) EXPECT_TRUE(with.empty()) << name;  // no effect at all
  }
  // Dimensional analysis: with every inertia free, scaling lengths and
  // gravity by α and masses by α⁻² keeps every torque; the elbow's origin
  // (the upper arm's length) is then a combination of gravity and β.
  o.parameters = {"gravity.y", "joint.elbow.origin.x"};
  {
    const ExcitationObjective obj(model, o);
    EXPECT_TRUE(named_in_f(obj, "gravity.y"));
    EXPECT_FALSE(named_in_f(obj, "joint.elbow.origin.x"));
    ASSERT_EQ(obj.unidentifiable().size(), 1u);
    EXPECT_FALSE(obj.unidentifiable()[0].second.empty());
  }
  // Already in F: a chosen link's inertia (its base parameters), a joint term.
  o.parameters = {"link.link2.mass"};
  EXPECT_THROW(ExcitationObjective(model, o), InvalidArgument);
  o.bodies = {0};  // link1 only: link2's mass is a named parameter of its own
  EXPECT_TRUE(named_in_f(ExcitationObjective(model, o), "link.link2.mass"));
  o.bodies.clear();
  o.parameters = {"joint.elbow.damping"};
  o.joint_terms = {ExcitationJointTerm::kDamping};
  EXPECT_THROW(ExcitationObjective(model, o), InvalidArgument);
  o.joint_terms.clear();
  for (const char* alone : {"gravity.y", "joint.elbow.origin.x"}) {
    o.parameters = {alone};
    const ExcitationObjective obj(model, o);
    EXPECT_TRUE(named_in_f(obj, alone)) << alone;
    EXPECT_TRUE(obj.unidentifiable().empty()) << alone;
  }
}

TEST(ExcitationNamed, PredictedErrorsOfNonlinearParametersAreTheSpreadOfFits) {
  // Only named parameters (no inertia): a length, gravity and a gear ratio,
  // fitted by Gauss–Newton on the commands along a design.
  const Model<double> model = named_arm();
  ExcitationDesignOptions o = named_options();
  o.link_inertias = false;
  o.parameters = {"joint.elbow.origin.x", "gravity.y", "joint.elbow.gear_ratio"};
  o.output_rate = 20;
  o.max_iterations = 10;
  const ExcitationDesignResult r = design_excitation(model, o);
  ASSERT_EQ(r.named.size(), 3u);
  ASSERT_EQ(r.designed.std_errors.size(), 3);
  const int N = static_cast<int>(r.time.size()), P = 3;
  auto commands = [&](const Eigen::Vector3d& theta) {
    Model<double> m = model;
    for (int c = 0; c < P; ++c) m = named_with(m, o.parameters[static_cast<size_t>(c)], theta[c]);
    Eigen::VectorXd u(2 * N);
    for (int k = 0; k < N; ++k)
      u.segment(2 * k, 2) = named_command(m, r.q.row(k).transpose(), r.qd.row(k).transpose(), r.qdd.row(k).transpose());
    return u;
  };
  const Eigen::Vector3d truth(r.named_values[0], r.named_values[1], r.named_values[2]);
  const Eigen::VectorXd clean = commands(truth);
  Eigen::VectorXd w(2 * N);  // 1/σ per row
  for (int k = 0; k < N; ++k) w.segment(2 * k, 2) = o.noise.cwiseInverse();
  std::mt19937 rng(99);
  std::normal_distribution<double> n;
  const int seeds = 80;
  Eigen::MatrixXd est(seeds, P);
  for (int s = 0; s < seeds; ++s) {
    Eigen::VectorXd y = clean;
    for (int k = 0; k < N; ++k)
      for (int j = 0; j < 2; ++j) y[2 * k + j] += o.noise[j] * n(rng);
    Eigen::Vector3d theta = truth;
    for (int it = 0; it < 2;
         ++it) {  // Gauss–Newton from the truth (the noise moves it little), Jacobian by central differences
      Eigen::MatrixXd J(2 * N, P);
      for (int c = 0; c < P; ++c) {
        const double h = 1e-6 * std::max(1.0, std::abs(theta[c]));
        Eigen::Vector3d tp = theta, tm = theta;
        tp[c] += h;
        tm[c] -= h;
        J.col(c) = (commands(tp) - commands(tm)) / (2 * h);
      }
      const Eigen::VectorXd res = w.asDiagonal() * (y - commands(theta));
      theta += (w.asDiagonal() * J).colPivHouseholderQr().solve(res);
    }
    est.row(s) = theta.transpose();
  }
  for (int c = 0; c < P; ++c) {
    const Eigen::VectorXd e = est.col(c);
    const double spread = std::sqrt((e.array() - e.mean()).square().sum() / (seeds - 1));
    // 80 draws: the sample standard deviation is within ±25 % of σ with probability 0.998.
    EXPECT_NEAR(spread / r.designed.std_errors[c], 1.0, 0.25) << r.named[static_cast<size_t>(c)];
    EXPECT_NEAR(e.mean(), truth[c], 4 * r.designed.std_errors[c] / std::sqrt(double(seeds)));
  }
}

// A base on a free joint and two revolute links with skew axes.
Model<double> named_floating_model() {
  std::mt19937 rng(17);
  Model<double> m;
  m.name = "stand";
  auto joint = [](JointType t, Eigen::Vector3d axis, Eigen::Vector3d xyz) {
    Joint<double> j;
    j.type = t;
    j.axis = axis.normalized();
    j.origin = Transform<double>(Eigen::Matrix3d::Identity(), xyz);
    return j;
  };
  m.add_body("base", -1, joint(JointType::kFree, {0, 0, 1}, {0, 0, 0}), testing::random_inertia(rng));
  m.add_body("upper", 0, joint(JointType::kRevolute, {0, 1, 0.3}, {0.1, 0, 0.2}), testing::random_inertia(rng));
  m.add_body("lower", 1, joint(JointType::kRevolute, {1, 0, 0.2}, {0, 0.1, -0.4}), testing::random_inertia(rng));
  return m;
}

ExcitationDesignOptions named_stand_options(bool wrench) {
  ExcitationDesignOptions o = named_options();
  o.limits.tau = Eigen::Vector2d(60.0, 40.0);
  o.mount.pose.resize(7);
  o.mount.pose << 0.1, -0.2, 0.8, 0.2, 0.1, 0.0, std::sqrt(1 - 0.05);
  o.mount.wrench = wrench;
  o.mount.force_noise = 0.5;
  o.mount.torque_noise = 0.1;
  return o;
}

// Whether the total mass Σ m_i lies in the row space of β = B π.
double named_total_mass_residual(const Model<double>& m, const BaseParameters& base) {
  const int n = 10 * m.num_bodies();
  const Eigen::MatrixXd B = base.combination_matrix(n);
  Eigen::VectorXd c = Eigen::VectorXd::Zero(n);
  for (int b = 0; b < m.num_bodies(); ++b) c[10 * b] = 1;  // the m column of each link
  const Eigen::VectorXd coeff = B.transpose().colPivHouseholderQr().solve(c);
  return (B.transpose() * coeff - c).norm() / c.norm();
}

TEST(ExcitationNamed, FloatingBaseOnAStandWithAndWithoutTheWrench) {
  const Model<double> model = named_floating_model();
  const ExcitationObjective joints_only(model, named_stand_options(false));
  const ExcitationObjective with_wrench(model, named_stand_options(true));
  EXPECT_GT(with_wrench.base().rank, joints_only.base().rank);
  EXPECT_GT(named_total_mass_residual(model, joints_only.base()), 0.1);   // not identifiable from joint torques
  EXPECT_LT(named_total_mass_residual(model, with_wrench.base()), 1e-8);  // identifiable with the force rows
  std::printf("stand: %d base parameters from the joint torques, %d with the wrench\n", joints_only.base().rank,
              with_wrench.base().rank);

  const ExcitationDesignOptions o = named_stand_options(true);
  const ExcitationDesignResult r = design_excitation(model, o);
  EXPECT_TRUE(std::isfinite(r.designed.log_det));
  EXPECT_TRUE(r.designed.std_errors.allFinite());
  for (const ExcitationLimitMargin& lm : r.margins) EXPECT_GE(lm.margin, 0) << lm.quantity << " " << lm.joint;
  ASSERT_EQ(r.model_q.cols(), model.nq);
  for (Eigen::Index k = 0; k < r.time.size(); ++k) {
    EXPECT_LE((r.model_q.row(k).head(7).transpose() - o.mount.pose).norm(), 1e-15);  // held at its pose
    EXPECT_EQ(r.model_qd.row(k).head(6).norm(), 0.0);
    for (int j = 0; j < 2; ++j) {
      EXPECT_GE(r.q(k, j), o.limits.q_lower[j]);
      EXPECT_LE(r.q(k, j), o.limits.q_upper[j]);
    }
  }
  // At rest (t = 0) the stand carries the weight: force = −M g in base axes.
  double M = 0;
  for (const Body<double>& b : model.bodies) M += b.inertia.mass;
  const Eigen::Quaterniond base(o.mount.pose[6], o.mount.pose[3], o.mount.pose[4], o.mount.pose[5]);
  const Eigen::Vector3d expected = -M * (base.toRotationMatrix().transpose() * model.gravity);
  EXPECT_LE((r.wrench.row(0).tail(3).transpose() - expected).norm(), 1e-9 * expected.norm());
}

}  // namespace
}  // namespace excitation_named_test
}  // namespace neuralsim
