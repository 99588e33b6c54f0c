// Leg control against kinematics and the definitions: the foot Jacobian is
// the derivative of the foot position (central differences on the
// configuration manifold); the stance torque τ = -Jᵀf does the virtual work
// of the force; the Raibert foothold under v = v_cmd is the symmetric point
// of the stance (the hip passes over it at mid-stance), and its yaw-rate
// term follows a turning hip; the swing reference starts and ends at rest
// at the given points, peaks at the apex, and its velocity is the time
// derivative of its position.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "neuralsim/control/leg_control.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/io/urdf_model.hpp"
#include "support/files.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

const std::array<std::string, 4> kFeet{"toeFR", "toeFL", "toeRR", "toeRL"};

class LegControlLaikago : public ::testing::Test {
 protected:
  void SetUp() override {
    NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago/laikago_toes_zup.urdf");
    const std::string path = testing::shared_path("models/laikago/laikago_toes_zup.urdf");
    UrdfOptions o;
    o.floating_base = true;
    model = load_urdf_model(path, o);
  }
  Model<double> model;
};

Eigen::VectorXd random_pose(const Model<double>& model, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  Eigen::VectorXd q = model.neutral_configuration();
  q.head<3>() << 0.3 * u(rng), 0.2 * u(rng), 0.35 + 0.05 * u(rng);
  q.segment<4>(3) = Eigen::Quaterniond(Eigen::AngleAxisd(0.4 * u(rng) + 0.3, Eigen::Vector3d(u(rng), u(rng), 1).normalized()))
                        .coeffs();
  for (int i = 7; i < model.nq; ++i) q[i] = 0.5 * u(rng) + ((i - 7) % 3 == 1 ? 0.67 : (i - 7) % 3 == 2 ? -1.25 : 0);
  return q;
}

TEST_F(LegControlLaikago, FootJacobianIsTheDerivativeOfTheFootPosition) {
  ASSERT_EQ(model.nv, 18);
  QuadrupedLegs legs(model, kFeet);
  Data<double> data(model);
  std::mt19937 rng(11);
  for (int trial = 0; trial < 3; ++trial) {
    const Eigen::VectorXd q = random_pose(model, rng);
    forward_kinematics(model, data, q);
    legs.update(model, data, Eigen::VectorXd::Zero(model.nv));
    std::array<Eigen::MatrixXd, 4> J;
    for (int i = 0; i < 4; ++i) J[i] = legs.jacobian(i);
    const double eps = 1e-6;
    Eigen::VectorXd dv = Eigen::VectorXd::Zero(model.nv), qp(model.nq), qm(model.nq);
    for (int c = 0; c < model.nv; ++c) {
      dv.setZero();
      dv[c] = eps;
      integrate_configuration(model, q, dv, qp);
      dv[c] = -eps;
      integrate_configuration(model, q, dv, qm);
      std::array<Eigen::Vector3d, 4> pp, pm;
      forward_kinematics(model, data, qp);
      legs.update(model, data, Eigen::VectorXd::Zero(model.nv));
      for (int i = 0; i < 4; ++i) pp[i] = legs.foot_position(i);
      forward_kinematics(model, data, qm);
      legs.update(model, data, Eigen::VectorXd::Zero(model.nv));
      for (int i = 0; i < 4; ++i) pm[i] = legs.foot_position(i);
      for (int i = 0; i < 4; ++i) {
        const Eigen::Vector3d fd = (pp[i] - pm[i]) / (2 * eps);
        EXPECT_LT((fd - J[i].col(c)).norm(), 1e-7) << "leg " << i << " coordinate " << c;
      }
    }
    // Each leg moves only through its own three joints and the base.
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(legs.joint_velocity_indices(i).size(), 3u);
      for (int c = 6; c < 18; ++c) {
        const auto& idx = legs.joint_velocity_indices(i);
        if (std::find(idx.begin(), idx.end(), c) == idx.end()) {
          EXPECT_EQ(J[i].col(c).norm(), 0.0);
        }
      }
    }
  }
}

TEST_F(LegControlLaikago, FootVelocityAndToeRadius) {
  QuadrupedLegs legs(model, kFeet);
  Data<double> data(model);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  const Eigen::VectorXd q = random_pose(model, rng);
  Eigen::VectorXd qd(model.nv);
  for (int i = 0; i < model.nv; ++i) qd[i] = u(rng);
  const double eps = 1e-6;
  Eigen::VectorXd qp(model.nq), qm(model.nq);
  integrate_configuration(model, q, Eigen::VectorXd(eps * qd), qp);
  integrate_configuration(model, q, Eigen::VectorXd(-eps * qd), qm);
  std::array<Eigen::Vector3d, 4> pp, pm;
  forward_kinematics(model, data, qp);
  legs.update(model, data, qd);
  for (int i = 0; i < 4; ++i) pp[i] = legs.foot_position(i);
  forward_kinematics(model, data, qm);
  legs.update(model, data, qd);
  for (int i = 0; i < 4; ++i) pm[i] = legs.foot_position(i);
  forward_kinematics(model, data, q, qd);
  legs.update(model, data, qd);
  for (int i = 0; i < 4; ++i) {
    EXPECT_LT(((pp[i] - pm[i]) / (2 * eps) - legs.foot_velocity(i)).norm(), 1e-6) << "leg " << i;
    EXPECT_DOUBLE_EQ(legs.foot_radius(i), 0.03);  // the URDF's toe spheres
  }
}

TEST_F(LegControlLaikago, StanceTorqueDoesTheVirtualWorkOfTheForce) {
  // Virtual work: joint power τ·q̇ equals the power of the force -f the leg
  // exerts on the ground, -f·v_foot, for any leg-joint velocity.
  QuadrupedLegs legs(model, kFeet);
  Data<double> data(model);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> u(-1, 1);
  const Eigen::VectorXd q = random_pose(model, rng);
  forward_kinematics(model, data, q);
  legs.update(model, data, Eigen::VectorXd::Zero(model.nv));
  for (int i = 0; i < 4; ++i) {
    const Eigen::Vector3d f(30 * u(rng), 30 * u(rng), 60 + 20 * u(rng));
    Eigen::VectorXd tau = Eigen::VectorXd::Zero(model.nv);
    legs.stance_torque(i, f, tau);
    Eigen::VectorXd qd = Eigen::VectorXd::Zero(model.nv);
    for (int idx : legs.joint_velocity_indices(i)) qd[idx] = u(rng);
    const Eigen::Vector3d v_foot = legs.jacobian(i) * qd;
    EXPECT_NEAR(tau.dot(qd), -f.dot(v_foot), 1e-10 * (1 + f.norm()));
    // Only the leg's joints get torque.
    for (int c = 0; c < model.nv; ++c) {
      const auto& idx = legs.joint_velocity_indices(i);
      if (std::find(idx.begin(), idx.end(), c) == idx.end()) {
        EXPECT_EQ(tau[c], 0.0);
      }
    }
  }
}

TEST_F(LegControlLaikago, GravityTorqueIsTheLegsShareOfRnea) {
  // With q̇ = q̈ = 0, RNEA's leg-joint torques are exactly what holds each
  // leg's outboard links against gravity (the base's acceleration is zero).
  QuadrupedLegs legs(model, kFeet);
  Data<double> data(model);
  std::mt19937 rng(21);
  const Eigen::VectorXd q = random_pose(model, rng);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(model.nv);
  rnea(model, data, q, zero, zero);
  const Eigen::VectorXd tau = data.tau;
  forward_kinematics(model, data, q);
  legs.update(model, data, zero);
  for (int i = 0; i < 4; ++i) {
    const auto& idx = legs.joint_velocity_indices(i);
    for (size_t c = 0; c < idx.size(); ++c)
      EXPECT_NEAR(legs.gravity_torque(i)[c], tau[idx[c]], 1e-10) << "leg " << i << " joint " << c;
    EXPECT_GT(legs.gravity_torque(i).norm(), 0.1);
  }
}

TEST(LegControlTest, RejectsModelsWithoutFeetOrFloatingBase) {
  Model<double> fixed = testing::mixed_joint_model();
  EXPECT_THROW(QuadrupedLegs(fixed, kFeet), ModelError);  // floating, but no toe frames
  fixed.joints[0].type = JointType::kFixed;
  EXPECT_THROW(QuadrupedLegs(fixed, kFeet), ModelError);
}

TEST(LegControlTest, RaibertFootholdForMatchedVelocityIsTheSymmetricPoint) {
  const Eigen::Vector3d hip(0.4, -0.1, 0.0), r_hip(0.2, -0.13, 0.0), v(0.3, 0.1, 0.0);
  const double T = 0.2;
  const Eigen::Vector3d p = raibert_foothold(hip, r_hip, v, v, 0.0, T, 0.08, 0.03);
  // The hip moves hip + v t over the stance [0, T]: at touchdown and lift-off
  // it is equally far from the foot, and right above it at mid-stance.
  const Eigen::Vector3d h0 = hip, h1 = hip + v * T, hmid = hip + v * (T / 2);
  EXPECT_NEAR((h0 - p).head<2>().norm(), (h1 - p).head<2>().norm(), 1e-12);
  EXPECT_LT((hmid - p).head<2>().norm(), 1e-12);
  EXPECT_EQ(p.z(), 0.03);
  // Going too fast: the foot lands further ahead, by k (v - v_cmd).
  const Eigen::Vector3d v_cmd(0.1, 0.1, 0.0);
  const Eigen::Vector3d q = raibert_foothold(hip, r_hip, v, v_cmd, 0.0, T, 0.08, 0.03);
  EXPECT_NEAR(q.x() - p.x(), 0.08 * 0.2, 1e-12);
  EXPECT_NEAR(q.y() - p.y(), 0.0, 1e-12);
}

TEST(LegControlTest, RaibertYawTermFollowsATurningHip) {
  // Turning in place at ω: the hip moves on a circle about the CoM; the
  // symmetric foothold is the hip at mid-stance, Rz(ωT/2) r, up to the
  // chord's sagitta |r| (ωT)²/8.
  const Eigen::Vector3d r(0.22, -0.14, 0.0);
  const double w = 1.0, T = 0.2;
  const Eigen::Vector3d p = raibert_foothold(r, r, Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero(), w, T, 0.1, 0.0);
  const Eigen::Vector3d mid = Eigen::AngleAxisd(w * T / 2, Eigen::Vector3d::UnitZ()) * r;
  const double sagitta = r.norm() * (w * T) * (w * T) / 8;
  EXPECT_LT((p - mid).norm(), 1.01 * sagitta);
  // Without the term the foot would stay at the hip, a quarter-arc behind.
  EXPECT_GT((r - mid).norm(), 10 * sagitta);
}

TEST(LegControlTest, SwingReferenceEndpointsApexAndVelocity) {
  const Eigen::Vector3d a(0.1, -0.2, 0.03), b(0.25, -0.15, 0.05);
  const double height = 0.08, duration = 0.15;
  Eigen::Vector3d p, v;
  swing_reference(a, b, height, 0.0, duration, &p, &v);
  EXPECT_LT((p - a).norm(), 1e-15);
  EXPECT_LT(v.norm(), 1e-15);
  swing_reference(a, b, height, 1.0, duration, &p, &v);
  EXPECT_LT((p - b).norm(), 1e-15);
  EXPECT_LT(v.norm(), 1e-15);
  swing_reference(a, b, height, 0.5, duration, &p, &v);
  EXPECT_NEAR(p.z(), 0.05 + height, 1e-15);
  EXPECT_NEAR(v.z(), 0.0, 1e-12);
  EXPECT_LT((p.head<2>() - 0.5 * (a + b).head<2>()).norm(), 1e-15);
  // v = dp/dt by central differences in t = s · duration.
  const double dt = 1e-6;
  for (double s = 0.05; s < 1; s += 0.1) {
    Eigen::Vector3d pp, pm, vp, vm;
    swing_reference(a, b, height, s + dt / duration, duration, &pp, &vp);
    swing_reference(a, b, height, s - dt / duration, duration, &pm, &vm);
    swing_reference(a, b, height, s, duration, &p, &v);
    EXPECT_LT(((pp - pm) / (2 * dt) - v).norm(), 1e-6) << "s = " << s;
    EXPECT_GE(p.z(), std::min(a.z(), b.z()) - 1e-15);
  }
}

}  // namespace
}  // namespace neuralsim
