// Planar pushing (configs/rollout_planar_pushing.yaml). Pushed through its
// centre line, the box moves straight without turning, stays against the
// tip (the tip decelerates slower than friction stops the box), and the
// pusher force equals ground friction plus inertia:
//   F_x = μ m g · v/sqrt(v² + ε²) + m a   (smooth Coulomb on every grid point).
// Pushed off-centre it turns.
#include <gtest/gtest.h>

#include "support/scenario.hpp"

namespace neuralsim {
namespace {

using testing::Scenario;

constexpr double kPushMu = 0.3, kPushMass = 0.5, kPushG = 9.81, kPushEps = 0.005;

double yaw(const Eigen::VectorXd& q) {  // box quaternion at q[5..8]
  const Eigen::Quaterniond r(q[8], q[5], q[6], q[7]);
  return std::atan2(2 * (r.w() * r.z() + r.x() * r.y()), 1 - 2 * (r.y() * r.y() + r.z() * r.z()));
}

TEST(PlanarPushing, CentredPushMovesStraightWithFrictionForce) {
  Scenario s("rollout_planar_pushing", {"initial_states.list.0.q=[-0.065, 0, 0, 0, 0.024966, 0, 0, 0, 1]"});
  ASSERT_EQ(s.contact->geometry().max_contacts(), 25 + 1 + 6);  // grid, tip–box, tip–ground rims
  const Eigen::VectorXd q0 = s.q;
  double worst_force_error = 0, sum_force = 0, sum_expected = 0;
  int checked = 0;
  Eigen::Vector3d v_prev = Eigen::Vector3d::Zero();
  while (s.t < 2.0 - 1e-9) {
    const Eigen::Vector3d v_box_before = s.qd.segment<3>(5);
    s.step();
    // Box world velocity and acceleration (identity orientation: body = world axes).
    const Eigen::Vector3d v = s.qd.segment<3>(5), a = (v - v_box_before) / s.options.dt;
    double fx = 0;
    for (int c = 0; c < s.contact->num_contacts(); ++c) {
      const Contact<double>& ct = s.contact->contacts()[c];
      if (ct.body_b == 2 && ct.body_a == 1) fx -= ct.force.x();  // force on the box (b)
      if (ct.body_a == 2 && ct.body_b == 1) fx += ct.force.x();
    }
    if (v.x() > 0.03 && s.t > 0.2 && s.t < 1.8) {
      const double expected = kPushMu * kPushMass * kPushG * v.x() / std::sqrt(v.x() * v.x() + kPushEps * kPushEps) + kPushMass * a.x();
      worst_force_error = std::max(worst_force_error, std::abs(fx - expected) / expected);
      sum_force += fx;
      sum_expected += expected;
      ++checked;
    }
    v_prev = v;
  }
  const double pusher_travel = s.q[0] - q0[0], box_travel = s.q[2] - q0[2];
  std::printf("[ pushing ] pusher %.4f m, box %.4f m (gap 5 mm), y %.2g m, yaw %.2g rad, force error %.2f %%\n",
              pusher_travel, box_travel, s.q[3], yaw(s.q), 100 * worst_force_error);
  EXPECT_GT(checked, 500);
  // On average within 1 %; step by step within 10 % (the contact springs ring
  // slightly, and a is a finite difference of velocities).
  std::printf("[ pushing ] mean pusher force %.4f N, expected %.4f N\n", sum_force / checked, sum_expected / checked);
  EXPECT_NEAR(sum_force / sum_expected, 1.0, 0.01);
  EXPECT_LT(worst_force_error, 0.10);
  EXPECT_NEAR(box_travel, pusher_travel - 0.005, 1e-3);
  EXPECT_LT(std::abs(s.q[3]), 1e-6);   // straight
  EXPECT_LT(std::abs(yaw(s.q)), 1e-5);  // no turning
}

TEST(PlanarPushing, OffCentrePushTurnsTheBox) {
  Scenario s("rollout_planar_pushing");
  while (s.t < 2.0 - 1e-9) s.step();
  std::printf("[ pushing off-centre ] box x %.4f y %.4f yaw %.3f rad\n", s.q[2], s.q[3], yaw(s.q));
  EXPECT_GT(s.q[2], 0.05);
  // Pushed at y = +2 cm towards +x, the box turns clockwise (negative yaw).
  EXPECT_LT(yaw(s.q), -0.05);
}

}  // namespace
}  // namespace neuralsim
