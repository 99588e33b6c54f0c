// KinematicsNode (grad/kinematics_node.hpp): forward kinematics with
// velocities as one external tape node. Its hand-written VJP must agree
// with central differences of forward_kinematics<double> and with the same
// kinematics taped operation by operation, for every joint type (free,
// spherical, revolute about a general axis and about ±e_k, prismatic,
// fixed), raw unnormalized quaternions and joint origins as variables.
#include <gtest/gtest.h>

#include <random>

#include "neuralsim/grad/kinematics_node.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

// mixed_joint_model plus revolute joints about -e_z and +e_x (the
// coordinate-axis path of set_parent_transform).
Model<double> kinematics_test_model() {
  Model<double> m = testing::mixed_joint_model();
  std::mt19937 rng(3);
  Joint<double> j;
  j.type = JointType::kRevolute;
  j.axis = Eigen::Vector3d(0, 0, -1);
  j.origin = Transform<double>(rpy_rotation<double>(0.2, -0.1, 0.4).transpose(), Eigen::Vector3d(0.1, -0.2, 0.05));
  m.add_body("neg_z", 5, j, testing::random_inertia(rng));
  j.axis = Eigen::Vector3d(1, 0, 0);
  j.origin = Transform<double>(Eigen::Matrix3d::Identity(), Eigen::Vector3d(0, 0.3, 0));
  m.add_body("pos_x", 2, j, testing::random_inertia(rng));
  return m;
}

// The node's outputs (X_up, X_world, v per body) of double kinematics.
Eigen::VectorXd outputs(const Model<double>& m, const Eigen::VectorXd& q, const Eigen::VectorXd& qd) {
  Data<double> d(m);
  forward_kinematics(m, d, q, qd);
  Eigen::VectorXd y(KinematicsNode::kOutputsPerBody * m.num_bodies());
  int k = 0;
  for (int b = 0; b < m.num_bodies(); ++b) {
    for (const Transform<double>* X : {&d.X_up[b], &d.X_world[b]}) {
      for (int c = 0; c < 9; ++c) y[k++] = X->E(c % 3, c / 3);
      for (int c = 0; c < 3; ++c) y[k++] = X->r[c];
    }
    for (int c = 0; c < 6; ++c) y[k++] = d.v[b][c];
  }
  return y;
}

// Same order as outputs(), from a Data<Rev>.
std::vector<Rev> rev_outputs(const Data<Rev>& d) {
  std::vector<Rev> y;
  for (std::size_t b = 0; b < d.X_up.size(); ++b) {
    for (const Transform<Rev>* X : {&d.X_up[b], &d.X_world[b]}) {
      for (int c = 0; c < 9; ++c) y.push_back(X->E(c % 3, c / 3));
      for (int c = 0; c < 3; ++c) y.push_back(X->r[c]);
    }
    for (int c = 0; c < 6; ++c) y.push_back(d.v[b][c]);
  }
  return y;
}

struct KinematicsGradient {
  Eigen::VectorXd q, qd, origin;  // ∂L/∂q (raw), ∂L/∂q̇, ∂L/∂origin.r (3 per joint)
  std::size_t nodes = 0;
  bool node_used = false;
};

// L = wᵀ y(q, q̇, origins) on a tape, through the node or taped kinematics.
KinematicsGradient tape_gradient(const Model<double>& md, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
                                 const Eigen::VectorXd& w, bool use_node, bool origins_variable) {
  Tape tape;
  Model<Rev> m = md.cast<Rev>();
  std::vector<Rev> origin_vars;
  if (origins_variable)
    for (auto& j : m.joints)
      for (int c = 0; c < 3; ++c) origin_vars.push_back(j.origin.r[c] = tape.variable(j.origin.r[c].value()));
  VecX<Rev> q(m.nq), qd(m.nv);
  for (int k = 0; k < m.nq; ++k) q[k] = tape.variable(q0[k]);
  for (int k = 0; k < m.nv; ++k) qd[k] = tape.variable(qd0[k]);
  const std::size_t before = tape.size();
  Data<Rev> data(m);
  KinematicsNode node(m);
  KinematicsGradient g;
  if (use_node)
    g.node_used = node.record(tape, m, data, q, qd);
  else
    forward_kinematics(m, data, q, qd);
  g.nodes = tape.size() - before;
  const std::vector<Rev> y = rev_outputs(data);
  Rev L = 0.0;
  for (std::size_t k = 0; k < y.size(); ++k) L += w[static_cast<long>(k)] * y[k];
  tape.reverse(L);
  g.q.resize(m.nq);
  g.qd.resize(m.nv);
  for (int k = 0; k < m.nq; ++k) g.q[k] = tape.adjoint(q[k]);
  for (int k = 0; k < m.nv; ++k) g.qd[k] = tape.adjoint(qd[k]);
  g.origin = Eigen::VectorXd::Zero(3 * m.num_bodies());
  for (std::size_t k = 0; k < origin_vars.size(); ++k) g.origin[static_cast<long>(k)] = tape.adjoint(origin_vars[k]);
  return g;
}

struct KinematicsCase {
  Model<double> model = kinematics_test_model();
  Eigen::VectorXd q, qd, w;
  KinematicsCase() {
    std::mt19937 rng(11);
    testing::random_state(model, rng, q, qd);
    // Unnormalized quaternions: the gradient must go through the engine's
    // normalization.
    for (const Joint<double>& j : model.joints) {
      const int o = j.type == JointType::kFree ? 3 : j.type == JointType::kSpherical ? 0 : -1;
      if (o >= 0) q.segment<4>(j.idx_q + o) *= 1.37;
    }
    std::normal_distribution<double> n(0.0, 1.0);
    w.resize(KinematicsNode::kOutputsPerBody * model.num_bodies());
    for (int k = 0; k < w.size(); ++k) w[k] = n(rng);
  }
};

TEST(KinematicsNode, AgreesWithCentralDifferencesForEveryJointType) {
  const KinematicsCase c;
  const KinematicsGradient g = tape_gradient(c.model, c.q, c.qd, c.w, true, true);
  ASSERT_TRUE(g.node_used);
  const double h = 1e-6;
  auto check = [&](const char* what, int k, double analytic, auto&& perturbed) {
    const double fd = (c.w.dot(perturbed(h)) - c.w.dot(perturbed(-h))) / (2 * h);
    EXPECT_NEAR(analytic, fd, 1e-6 * std::max(1.0, std::abs(fd))) << what << " " << k;
  };
  for (int k = 0; k < c.model.nq; ++k)
    check("q", k, g.q[k], [&](double e) {
      Eigen::VectorXd q = c.q;
      q[k] += e;
      return outputs(c.model, q, c.qd);
    });
  for (int k = 0; k < c.model.nv; ++k)
    check("qd", k, g.qd[k], [&](double e) {
      Eigen::VectorXd qd = c.qd;
      qd[k] += e;
      return outputs(c.model, c.q, qd);
    });
  for (int k = 0; k < 3 * c.model.num_bodies(); ++k)
    check("origin.r", k, g.origin[k], [&](double e) {
      Model<double> m = c.model;
      m.joints[k / 3].origin.r[k % 3] += e;
      return outputs(m, c.q, c.qd);
    });
}

TEST(KinematicsNode, EqualsTheKinematicsTapedOperationByOperation) {
  const KinematicsCase c;
  for (bool origins : {true, false}) {
    const KinematicsGradient node = tape_gradient(c.model, c.q, c.qd, c.w, true, origins);
    const KinematicsGradient taped = tape_gradient(c.model, c.q, c.qd, c.w, false, origins);
    ASSERT_TRUE(node.node_used);
    const double scale = 1.0 + taped.q.cwiseAbs().maxCoeff() + taped.qd.cwiseAbs().maxCoeff();
    EXPECT_LT((node.q - taped.q).cwiseAbs().maxCoeff(), 1e-12 * scale) << "origins " << origins;
    EXPECT_LT((node.qd - taped.qd).cwiseAbs().maxCoeff(), 1e-12 * scale) << "origins " << origins;
    EXPECT_LT((node.origin - taped.origin).cwiseAbs().maxCoeff(), 1e-12 * scale) << "origins " << origins;
    // One node: its 30 outputs per body are the only nodes it adds.
    EXPECT_EQ(node.nodes, static_cast<std::size_t>(KinematicsNode::kOutputsPerBody * c.model.num_bodies()));
    EXPECT_LT(node.nodes, taped.nodes);
  }
}

TEST(KinematicsNode, AVariableAxisIsTapedSoItsDerivativeIsKept) {
  const KinematicsCase c;
  Tape tape;
  Model<Rev> m = c.model.cast<Rev>();
  const int elbow = 2;  // revolute about a general axis
  const Rev ax = m.joints[elbow].axis[0] = tape.variable(m.joints[elbow].axis[0].value());
  VecX<Rev> q(m.nq), qd(m.nv);
  for (int k = 0; k < m.nq; ++k) q[k] = c.q[k];
  for (int k = 0; k < m.nv; ++k) qd[k] = c.qd[k];
  Data<Rev> data(m);
  KinematicsNode node(m);
  EXPECT_FALSE(node.record(tape, m, data, q, qd));
  const std::vector<Rev> y = rev_outputs(data);
  Rev L = 0.0;
  for (std::size_t k = 0; k < y.size(); ++k) L += c.w[static_cast<long>(k)] * y[k];
  tape.reverse(L);
  const double h = 1e-6;
  auto at = [&](double e) {
    Model<double> md = c.model;
    md.joints[elbow].axis[0] += e;  // unnormalized, as the taped kinematics sees it
    return c.w.dot(outputs(md, c.q, c.qd));
  };
  const double fd = (at(h) - at(-h)) / (2 * h);
  EXPECT_GT(std::abs(fd), 1e-3);
  EXPECT_NEAR(tape.adjoint(ax), fd, 1e-6 * std::max(1.0, std::abs(fd)));
}

TEST(KinematicsNode, RefusesAChangedAxis) {
  const KinematicsCase c;
  Tape tape;
  Model<Rev> m = c.model.cast<Rev>();
  KinematicsNode node(m);
  m.joints[2].axis[0] = m.joints[2].axis[0].value() + 0.1;
  VecX<Rev> q(m.nq), qd(m.nv);
  for (int k = 0; k < m.nq; ++k) q[k] = c.q[k];
  for (int k = 0; k < m.nv; ++k) qd[k] = c.qd[k];
  Data<Rev> data(m);
  EXPECT_THROW(node.record(tape, m, data, q, qd), InvalidArgument);
}

}  // namespace
}  // namespace neuralsim
