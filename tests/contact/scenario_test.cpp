// Contact scenarios with analytic answers, run from the shipped configs:
// bounce height e²h, a resting ball, a sliding box's stopping distance
// v²/(2μg), and a box pushed below μmg that does not slide.
#include <gtest/gtest.h>

#include "support/scenario.hpp"

namespace neuralsim {
namespace {

using testing::Scenario;

// Height of the lowest point of the ball (centre z minus radius).
double bottom(const Scenario& s) { return s.q[2] - 0.1; }

TEST(Bounce, ReachesRestitutionSquaredTimesDropHeight) {
  Scenario s("rollout_ball_bounce");
  const double h = bottom(s), e = 0.8;
  // Fall, bounce, then record the apex of the first rebound.
  bool bounced = false;
  double apex = 0;
  while (s.t < 2.0) {
    s.step();
    if (!bounced && s.qd[5] > 0) bounced = true;
    if (bounced) {
      apex = std::max(apex, bottom(s));
      if (s.qd[5] < 0) break;  // past the apex
    }
  }
  ASSERT_TRUE(bounced);
  const double expected = e * e * h;
  std::printf("[ bounce ] apex %.5f m, e²h = %.5f m, error %.3f %%\n", apex, expected,
              100 * (apex - expected) / expected);
  EXPECT_NEAR(apex, expected, 0.01 * expected);
  EXPECT_GE(s.contact->impulse_stats().solves, 1);
}

TEST(Bounce, HuntCrossleyLosesEnergyAndNeverPulls) {
  Scenario s("rollout_ball_bounce", {"contact.model=hunt_crossley", "contact.parameters.stiffness=1e6",
                                     "contact.parameters.damping=2e5"});
  double max_pull = 0, apex = 0;
  bool bounced = false;
  while (s.t < 2.0) {
    s.step();
    for (int c = 0; c < s.contact->num_contacts(); ++c)
      max_pull = std::min(max_pull, s.contact->contacts()[c].normal_force);
    if (s.qd[5] > 0) bounced = true;
    if (bounced) {
      apex = std::max(apex, bottom(s));
      if (s.qd[5] < 0) break;
    }
  }
  EXPECT_TRUE(bounced);
  EXPECT_EQ(max_pull, 0.0);
  // Hunt–Crossley: e ≈ 1 - (2/3)(d/k) v (Hunt & Crossley 1975, eq. 15)
  // with v = sqrt(2 g h) = 4.43 m/s and d/k = 0.2 s/m → e ≈ 0.41 to first
  // order; the rebound must lie clearly between no bounce and elastic.
  EXPECT_GT(apex, 0.05);
  EXPECT_LT(apex, 0.5);
}

class RestingBall : public ::testing::TestWithParam<std::string> {};

TEST_P(RestingBall, NoDriftNoJitterOverTenSeconds) {
  Scenario s("rollout_ball_resting", {"contact.model=" + GetParam()});
  if (GetParam() != "impulse") {
    // Start at the static depth δ = (mg/k)^(1/n) so there is nothing to settle.
    const double depth = std::pow(9.81 / 1e5, 1 / 1.5);
    s.q[2] = 0.1 - depth;
  }
  const Eigen::VectorXd q0 = s.q;
  double z_min = 1e9, z_max = -1e9, max_speed = 0;
  const long long n = s.steps(10.0);
  for (long long k = 0; k < n; ++k) {
    s.step();
    z_min = std::min(z_min, s.q[2]);
    z_max = std::max(z_max, s.q[2]);
    max_speed = std::max(max_speed, s.qd.norm());
  }
  std::printf("[ resting %s ] z range %.3g m, horizontal drift %.3g m, max |qd| %.3g\n", GetParam().c_str(),
              z_max - z_min, (s.q.head<2>() - q0.head<2>()).norm(), max_speed);
  EXPECT_LT(z_max - z_min, 1e-6);                    // no jitter
  EXPECT_LT((s.q.head<2>() - q0.head<2>()).norm(), 1e-9);  // no drift
  EXPECT_LT(std::abs(s.q[2] - q0[2]), 1e-6);
  EXPECT_LT(max_speed, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Models, RestingBall, ::testing::Values("impulse", "hunt_crossley"));

class SlidingBox : public ::testing::TestWithParam<std::string> {};

TEST_P(SlidingBox, StopsAfterVSquaredOverTwoMuG) {
  Scenario s("rollout_box_sliding", {"contact.model=" + GetParam()});
  if (GetParam() == "impulse") s.q[2] = 0.05;  // rigid: resting exactly on the ground
  const double v = s.qd[3], mu = 0.5, g = 9.81;
  const double x0 = s.q[0];
  while (s.t < 1.0) s.step();
  const double distance = s.q[0] - x0, expected = v * v / (2 * mu * g);
  std::printf("[ sliding %s ] stopped after %.5f m, v²/(2μg) = %.5f m, error %.3f %%\n", GetParam().c_str(),
              distance, expected, 100 * (distance - expected) / expected);
  EXPECT_NEAR(distance, expected, 0.01 * expected);
  EXPECT_LT(std::abs(s.qd[3]), 1e-3);  // at rest
  EXPECT_LT(std::abs(s.q[1]), 1e-6);   // straight line
}

// Pushed horizontally at its COM with F = 0.6 μ m g: the rigid (impulse)
// model sticks exactly; smooth Coulomb friction creeps at the velocity where
// μ f_n v/sqrt(v² + ε²) = F, i.e. v = ε F / sqrt((μ m g)² - F²) = 0.75 ε.
TEST_P(SlidingBox, PushedBelowFrictionLimitDoesNotSlide) {
  Scenario s("rollout_box_sliding", {"contact.model=" + GetParam()});
  if (GetParam() == "impulse") s.q[2] = 0.05;
  s.qd.setZero();
  const double mu = 0.5, g = 9.81, F = 0.6 * mu * g;
  s.stepper.hooks().push_back([&](const Model<double>&, Data<double>& d, const Eigen::VectorXd&,
                                  const Eigen::VectorXd&, double) {
    add_world_force_at_point<double>(d, 0, d.X_world[0].r, Eigen::Vector3d(F, 0, 0));
  });
  const double x0 = s.q[0];
  while (s.t < 1.0) s.step();
  const double eps = 0.01, creep = eps * F / std::sqrt(mu * g * mu * g - F * F);
  std::printf("[ sticking %s ] moved %.3g m in 1 s (creep bound %.3g m)\n", GetParam().c_str(), s.q[0] - x0,
              creep * 1.0);
  if (GetParam() == "impulse")
    EXPECT_LT(std::abs(s.q[0] - x0), 1e-9);
  else
    EXPECT_LT(std::abs(s.q[0] - x0), 1.2 * creep * 1.0);
}

INSTANTIATE_TEST_SUITE_P(Models, SlidingBox, ::testing::Values("hunt_crossley", "impulse"));

}  // namespace
}  // namespace neuralsim
