// Centroidal quantities against first principles: the COM is the mass-weighted
// mean of the body COMs, the linear momentum is m·ċ, and on a free-floating
// tree the momentum changes only through gravity and external forces
// (Newton's second law for the whole system; joint forces are internal).
#include <gtest/gtest.h>

#include "neuralsim/dynamics/aba.hpp"
#include "neuralsim/dynamics/centroidal.hpp"
#include "neuralsim/step/external_force.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

struct CentroidalTest : ::testing::Test {
  Model<double> model = testing::mixed_joint_model();
  Data<double> data{model};
  std::mt19937 rng{5};
  Eigen::VectorXd q, qd;
  void SetUp() override { testing::random_state(model, rng, q, qd); }

  Eigen::VectorXd moved(const Eigen::VectorXd& q0, const Eigen::VectorXd& v, double s) {
    Eigen::VectorXd out = q0;
    integrate_configuration(model, q0, Eigen::VectorXd(s * v), out);
    return out;
  }
  Centroidal<double> centroidal_at(const Eigen::VectorXd& qq, const Eigen::VectorXd& vv) {
    forward_kinematics(model, data, qq, vv);
    return centroidal(model, data);
  }
};

TEST_F(CentroidalTest, ComIsMassWeightedMeanOfBodyComs) {
  const Centroidal<double> c = centroidal_at(q, qd);
  double m = 0;
  Eigen::Vector3d mc = Eigen::Vector3d::Zero();
  for (int i = 0; i < model.num_bodies(); ++i) {
    const Inertia<double>& I = model.bodies[i].inertia;
    m += I.mass;
    mc += I.mass * body_point_world(data, i, I.com());
  }
  EXPECT_NEAR(c.mass, m, 1e-12);
  EXPECT_LT((c.com - mc / m).norm(), 1e-12);
}

TEST_F(CentroidalTest, MomentaMatchBodyComVelocities) {
  // l = Σ mᵢ ċᵢ and k_G = Σ (Rᵢ Ī_cᵢ ωᵢ + mᵢ (cᵢ - c) × ċᵢ), body by body.
  const Centroidal<double> c = centroidal_at(q, qd);
  Eigen::Vector3d l = Eigen::Vector3d::Zero(), k = Eigen::Vector3d::Zero();
  for (int i = 0; i < model.num_bodies(); ++i) {
    const Inertia<double>& I = model.bodies[i].inertia;
    const Eigen::Matrix3d R = body_rotation(data, i);
    const Eigen::Vector3d ci = body_point_world(data, i, I.com());
    const Eigen::Vector3d vi = body_point_velocity_world(data, i, I.com());
    l += I.mass * vi;
    k += R * I.inertia_about_com() * ang(data.v[i]) + I.mass * (ci - c.com).cross(vi);
  }
  EXPECT_LT((c.linear_momentum - l).norm(), 1e-12 * (1 + l.norm()));
  EXPECT_LT((c.angular_momentum - k).norm(), 1e-12 * (1 + k.norm()));
}

TEST_F(CentroidalTest, LinearMomentumIsMassTimesFiniteDifferenceComVelocity) {
  const double eps = 1e-6;
  const Eigen::Vector3d c_plus = centroidal_at(moved(q, qd, eps), qd).com;
  const Eigen::Vector3d c_minus = centroidal_at(moved(q, qd, -eps), qd).com;
  const Centroidal<double> c = centroidal_at(q, qd);
  const Eigen::Vector3d l_fd = c.mass * (c_plus - c_minus) / (2 * eps);
  EXPECT_LT((c.linear_momentum - l_fd).norm(), 1e-7 * (1 + l_fd.norm()));
}

TEST_F(CentroidalTest, MomentumRateIsGravityPlusExternalForce) {
  // Under ABA with a world force F at a world point P on one body, and zero
  // joint torques: l̇ = m g + F and k̇_G = (P - c) × F (gravity has no moment
  // about the COM). Armature on two joints must not change this.
  const int body = model.body_index("slider");
  const Eigen::Vector3d F(3.0, -1.5, 7.0);
  forward_kinematics(model, data, q, qd);
  const Eigen::Vector3d P = body_point_world(data, body, Eigen::Vector3d(0.2, 0.1, -0.1));
  const Centroidal<double> c0 = centroidal(model, data);

  data.clear_external_forces();
  add_world_force_at_point(data, body, P, F);
  aba(model, data, q, qd, Eigen::VectorXd::Zero(model.nv).eval());
  const Eigen::VectorXd qdd = data.qdd;

  // Central difference along the state path (q ⊕ s q̇, q̇ + s q̈).
  const double eps = 1e-6;
  const Centroidal<double> cp = centroidal_at(moved(q, qd, eps), qd + eps * qdd);
  const Centroidal<double> cm = centroidal_at(moved(q, qd, -eps), qd - eps * qdd);
  const Eigen::Vector3d l_dot = (cp.linear_momentum - cm.linear_momentum) / (2 * eps);
  const Eigen::Vector3d k_dot = (cp.angular_momentum - cm.angular_momentum) / (2 * eps);

  const Eigen::Vector3d l_dot_expected = c0.mass * model.gravity + F;
  const Eigen::Vector3d k_dot_expected = (P - c0.com).cross(F);
  EXPECT_LT((l_dot - l_dot_expected).norm(), 1e-6 * l_dot_expected.norm())
      << "l_dot = " << l_dot.transpose() << ", expected " << l_dot_expected.transpose();
  EXPECT_LT((k_dot - k_dot_expected).norm(), 1e-6 * (1 + k_dot_expected.norm()))
      << "k_dot = " << k_dot.transpose() << ", expected " << k_dot_expected.transpose();
}

}  // namespace
}  // namespace neuralsim
