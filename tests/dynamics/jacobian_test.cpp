// Jacobians against the motion they describe: J(q)·q̇ must equal the time
// derivative of the world pose along q(t) = q ⊕ t·q̇, measured by central
// finite differences on the configuration manifold.
#include <gtest/gtest.h>

#include <Eigen/Geometry>

#include "neuralsim/dynamics/jacobian.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

struct JacobianTest : ::testing::Test {
  Model<double> model = testing::mixed_joint_model();
  Data<double> data{model};
  std::mt19937 rng{11};
  static constexpr double kEps = 1e-6;

  // Configuration q ⊕ s·q̇.
  Eigen::VectorXd moved(const Eigen::VectorXd& q, const Eigen::VectorXd& qd, double s) {
    Eigen::VectorXd out = q;
    integrate_configuration(model, q, Eigen::VectorXd(s * qd), out);
    return out;
  }
  Eigen::Vector3d point_at(const Eigen::VectorXd& q, int body, const Eigen::Vector3d& p) {
    forward_kinematics(model, data, q);
    return body_point_world(data, body, p);
  }
  Eigen::Matrix3d rotation_at(const Eigen::VectorXd& q, int body) {
    forward_kinematics(model, data, q);
    return body_rotation(data, body);
  }
};

TEST_F(JacobianTest, PointJacobianTimesVelocityIsFiniteDifferenceVelocity) {
  Eigen::VectorXd q, qd;
  Eigen::MatrixXd J(6, model.nv);
  for (int trial = 0; trial < 5; ++trial) {
    testing::random_state(model, rng, q, qd);
    for (int body = 0; body < model.num_bodies(); ++body) {
      const Eigen::Vector3d p(0.1 * (body + 1), -0.2, 0.15);
      const Eigen::VectorXd qp = moved(q, qd, kEps), qm = moved(q, qd, -kEps);

      const Eigen::Vector3d v_fd = (point_at(qp, body, p) - point_at(qm, body, p)) / (2 * kEps);
      // World angular velocity: R(+ε) R(-ε)ᵀ = exp(2ε ω×).
      const Eigen::AngleAxisd dR(rotation_at(qp, body) * rotation_at(qm, body).transpose());
      const Eigen::Vector3d w_fd = dR.axis() * dR.angle() / (2 * kEps);

      forward_kinematics(model, data, q, qd);
      point_jacobian(model, data, body, p, J);
      const Vec6<double> Jv = J * qd;
      EXPECT_LT((lin(Jv) - v_fd).norm(), 1e-7 * (1 + v_fd.norm())) << "body " << body;
      EXPECT_LT((ang(Jv) - w_fd).norm(), 1e-7 * (1 + w_fd.norm())) << "body " << body;
      // The same velocity from the velocity pass of forward kinematics.
      EXPECT_LT((body_point_velocity_world(data, body, p) - v_fd).norm(), 1e-7 * (1 + v_fd.norm()));
    }
  }
}

TEST_F(JacobianTest, PointJacobianColumnsVanishForNonSupportingJoints) {
  Eigen::VectorXd q, qd;
  testing::random_state(model, rng, q, qd);
  forward_kinematics(model, data, q);
  Eigen::MatrixXd J(6, model.nv);
  const int leg = model.body_index("leg");
  point_jacobian(model, data, leg, Eigen::Vector3d(0.1, 0, 0), J);
  // The leg hangs off the base: the arm joints (shoulder, elbow, slider) cannot move it.
  for (const char* name : {"shoulder_joint", "elbow_joint", "slider_joint"}) {
    const Joint<double>& j = model.joints[model.joint_index(name)];
    EXPECT_EQ(J.middleCols(j.idx_v, j.nv).norm(), 0.0) << name;
  }
}

TEST_F(JacobianTest, BodyJacobianTimesVelocityIsBodyVelocity) {
  Eigen::VectorXd q, qd;
  Eigen::MatrixXd J(6, model.nv);
  for (int trial = 0; trial < 5; ++trial) {
    testing::random_state(model, rng, q, qd);
    forward_kinematics(model, data, q, qd);
    for (int body = 0; body < model.num_bodies(); ++body) {
      body_jacobian(model, data, body, J);
      EXPECT_LT((J * qd - data.v[body]).norm(), 1e-12 * (1 + data.v[body].norm())) << "body " << body;
      // Independent check: the body-frame velocity rotated to world axes is the
      // point Jacobian at the body origin.
      Eigen::MatrixXd Jp(6, model.nv);
      point_jacobian(model, data, body, Eigen::Vector3d(Eigen::Vector3d::Zero()), Jp);
      const Eigen::Matrix3d R = body_rotation(data, body);
      const Vec6<double> vb = J * qd, vw = Jp * qd;
      EXPECT_LT((R * ang(vb) - ang(vw)).norm(), 1e-12 * (1 + vw.norm()));
      EXPECT_LT((R * lin(vb) - lin(vw)).norm(), 1e-12 * (1 + vw.norm()));
    }
  }
}

}  // namespace
}  // namespace neuralsim
