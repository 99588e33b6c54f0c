// Push perturbations (control/push_perturbation.hpp): the schedule is a
// pure function of (seed, trajectory, window) within its documented ranges,
// its directions are uniform on the horizontal circle, and the hook's force
// gives a free body exactly the impulse F·T at its centre of mass
// (momentum theorem: no rotation, Δv = F T / m).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "neuralsim/control/push_perturbation.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {
namespace push_test_detail {

PushOptions pp_push_options() {
  PushOptions o;
  o.start = 0.5;
  o.every = 1.0;
  o.duration_min = 0.1;
  o.duration_max = 0.2;
  o.force_min = 20;
  o.force_max = 50;
  o.seed = 11;
  return o;
}

}  // namespace push_test_detail

using push_test_detail::pp_push_options;

TEST(PushPerturbation, ScheduleIsSeededPureAndWithinRange) {
  const PushOptions o = pp_push_options();
  // Windows start at 0.5, 1.5, …, 19.5; each push starts before its window
  // ends minus its duration (≤ 20.3 s), so all 20 fall inside 20.5 s.
  const PushSchedule a(o, 3, 20.5), b(o, 3, 20.5), c(o, 4, 20.5);
  ASSERT_EQ(a.pushes().size(), 20u);
  ASSERT_EQ(a.pushes().size(), b.pushes().size());
  bool differs = false;
  for (size_t i = 0; i < a.pushes().size(); ++i) {
    const Push& p = a.pushes()[i];
    EXPECT_EQ(p.t_start, b.pushes()[i].t_start);
    EXPECT_EQ(p.force, b.pushes()[i].force);
    differs = differs || p.force != c.pushes()[i].force;
    const double window = o.start + static_cast<double>(i) * o.every;
    EXPECT_GE(p.t_start, window);
    EXPECT_LE(p.t_start + p.duration, window + o.every + 1e-12);
    EXPECT_GE(p.duration, o.duration_min);
    EXPECT_LE(p.duration, o.duration_max);
    EXPECT_EQ(p.force.z(), 0.0);
    EXPECT_GE(p.force.norm(), o.force_min - 1e-9);
    EXPECT_LE(p.force.norm(), o.force_max + 1e-9);
    // Window i queried alone gives the same push (no hidden stream state).
    Push alone;
    ASSERT_TRUE(PushSchedule::draw(o, 3, static_cast<long long>(i), &alone));
    EXPECT_EQ(alone.force, p.force);
    EXPECT_EQ(a.force_at(p.t_start + 0.5 * p.duration), p.force);
  }
  EXPECT_TRUE(differs) << "trajectories 3 and 4 got the same pushes";
  EXPECT_TRUE(a.force_at(0.2).isZero(0.0));
  // No force range: no pushes.
  PushOptions none = o;
  none.force_min = none.force_max = 0;
  EXPECT_TRUE(PushSchedule(none, 0, 20.0).pushes().empty());
}

TEST(PushPerturbation, DirectionsAreUniformOnTheCircle) {
  PushOptions o = pp_push_options();
  o.force_min = o.force_max = 1.0;
  const int n = 4000;
  int quadrant[4] = {0, 0, 0, 0};
  Eigen::Vector2d mean = Eigen::Vector2d::Zero();
  for (int s = 0; s < n; ++s) {
    Push p;
    ASSERT_TRUE(PushSchedule::draw(o, 0, s, &p));
    EXPECT_NEAR(p.force.norm(), 1.0, 1e-12);
    mean += p.force.head<2>() / n;
    quadrant[(p.force.x() >= 0 ? 0 : 1) + (p.force.y() >= 0 ? 0 : 2)]++;
  }
  // Mean of uniform unit vectors: 0 with standard deviation 1/√(2n) per axis.
  EXPECT_LT(mean.norm(), 4.0 / std::sqrt(2.0 * n));
  for (int q = 0; q < 4; ++q) EXPECT_NEAR(quadrant[q], n / 4.0, 4 * std::sqrt(n * 0.25 * 0.75)) << q;
  // Probability: about half the windows of a p = 0.5 schedule hold a push.
  o.probability = 0.5;
  int pushes = 0;
  for (int s = 0; s < n; ++s) {
    Push p;
    pushes += PushSchedule::draw(o, 0, s, &p);
  }
  EXPECT_NEAR(pushes, n / 2.0, 4 * std::sqrt(n * 0.25));
}

TEST(PushPerturbation, HookGivesAFreeBodyTheImpulseAtItsCentreOfMass) {
  Model<double> m;
  m.name = "free_box";
  Joint<double> j;
  j.type = JointType::kFree;
  const double mass = 2.5;
  Eigen::Matrix3d I = Eigen::Vector3d(0.1, 0.2, 0.3).asDiagonal();
  m.add_body("box", -1, j, Inertia<double>::from_com(mass, Eigen::Vector3d(0.1, -0.05, 0.2), I));
  m.gravity.setZero();
  StepOptions so;
  so.dt = 1e-3;
  Stepper<double> stepper(m, so);
  PushOptions o = pp_push_options();
  auto schedule = std::make_shared<const PushSchedule>(o, 0, 1.4);
  ASSERT_EQ(schedule->pushes().size(), 1u);
  const Push push = schedule->pushes().front();
  stepper.hooks().push_back(push_force_hook(schedule, 0));
  Eigen::VectorXd q = m.neutral_configuration(), qd = Eigen::VectorXd::Zero(6), u = Eigen::VectorXd::Zero(6);
  int active_steps = 0;
  for (int k = 0; k < 1600; ++k) {  // past the push's end (<= 1.5 s)
    const double t = k * so.dt;
    active_steps += push.active(t);
    stepper.step(q, qd, u, t);
  }
  // Impulse = F · (steps with the force) · dt; the force acts through the
  // CoM, so the body does not rotate and every point moves at Δv.
  const Eigen::Vector3d dv = push.force * active_steps * so.dt / mass;
  EXPECT_NEAR(active_steps * so.dt, push.duration, so.dt + 1e-12);
  EXPECT_LT(qd.head<3>().norm(), 1e-12);
  EXPECT_LT((qd.tail<3>() - dv).norm(), 1e-12 * (1 + dv.norm()));
}

}  // namespace neuralsim
