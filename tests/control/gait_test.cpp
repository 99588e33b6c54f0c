// The gait scheduler against the definition of the gaits: a trot has its
// diagonal pairs in phase and the pairs in antiphase, each leg on the
// ground for the duty-factor fraction of every cycle; standing keeps all
// feet down.
#include <gtest/gtest.h>

#include "neuralsim/control/gait.hpp"
#include "neuralsim/core/errors.hpp"

namespace neuralsim {
namespace {

constexpr int FR = 0, FL = 1, RR = 2, RL = 3;

TEST(GaitTest, TrotHasDiagonalPairsInAntiphase) {
  const GaitScheduler gait(GaitParameters::trot(0.4, 0.5));
  int samples = 0;
  for (double t = 0.0013; t < 2.0; t += 0.0071) {
    const auto c = gait.contacts(t);
    EXPECT_EQ(c[FR], c[RL]) << "t = " << t;  // diagonal pairs move together
    EXPECT_EQ(c[FL], c[RR]) << "t = " << t;
    EXPECT_NE(c[FR], c[FL]) << "t = " << t;  // and in antiphase (duty 1/2: exactly one pair down)
    // Phase offset between the pairs is half a period.
    double dphi = gait.phase(FL, t) - gait.phase(FR, t);
    dphi -= std::floor(dphi);
    EXPECT_NEAR(dphi, 0.5, 1e-9);
    ++samples;
  }
  EXPECT_GT(samples, 200);
}

TEST(GaitTest, DutyFactorIsTheStanceFractionOfEveryCycle) {
  const double T = 0.35, d = 0.6;
  const GaitScheduler gait(GaitParameters::trot(T, d));
  const int n = 35000;  // samples over 1 period, 10 periods
  for (int leg = 0; leg < 4; ++leg) {
    int down = 0;
    for (int s = 0; s < n; ++s) down += gait.in_stance(leg, (s + 0.5) * 10 * T / n) ? 1 : 0;
    EXPECT_NEAR(static_cast<double>(down) / n, d, 2.0 / n * 10) << "leg " << leg;
  }
  EXPECT_NEAR(gait.stance_duration(), T * d, 1e-15);
  EXPECT_NEAR(gait.swing_duration(), T * (1 - d), 1e-15);
}

TEST(GaitTest, PhaseFractionsRunFromZeroToOneAcrossEachPhase) {
  const double T = 0.4;
  const GaitScheduler gait(GaitParameters::trot(T, 0.5));
  // FR: stance on [0, 0.2), swing on [0.2, 0.4) (offset 0).
  EXPECT_TRUE(gait.in_stance(FR, 0.05));
  EXPECT_NEAR(gait.stance_fraction(FR, 0.05), 0.25, 1e-6);
  EXPECT_NEAR(gait.time_left_in_phase(FR, 0.05), 0.15, 1e-6);
  EXPECT_FALSE(gait.in_stance(FR, 0.25));
  EXPECT_NEAR(gait.swing_fraction(FR, 0.25), 0.25, 1e-6);
  EXPECT_NEAR(gait.swing_fraction(FR, 0.35), 0.75, 1e-6);
  EXPECT_NEAR(gait.time_left_in_phase(FR, 0.35), 0.05, 1e-6);
  // FL (offset 1/2) is in swing when FR stands.
  EXPECT_FALSE(gait.in_stance(FL, 0.05));
  EXPECT_NEAR(gait.swing_fraction(FL, 0.05), 0.25, 1e-6);
  // Fractions stay in [0, 1) everywhere.
  for (double t = 0; t < 1.0; t += 0.001)
    for (int leg = 0; leg < 4; ++leg) {
      const double f = gait.in_stance(leg, t) ? gait.stance_fraction(leg, t) : gait.swing_fraction(leg, t);
      EXPECT_GE(f, 0.0);
      EXPECT_LT(f, 1.0);
    }
}

TEST(GaitTest, StandKeepsEveryFootDown) {
  const GaitScheduler gait(GaitParameters::stand());
  Eigen::MatrixXd table(4, 12);
  gait.horizon(0.37, 0.03, table);
  EXPECT_EQ(table.minCoeff(), 1.0);
  for (double t = 0; t < 3; t += 0.01)
    for (int leg = 0; leg < 4; ++leg) EXPECT_TRUE(gait.in_stance(leg, t));
}

TEST(GaitTest, HorizonTableSamplesTheScheduleAtEachIntervalStart) {
  const GaitScheduler gait(GaitParameters::trot(0.3, 0.5));
  const double t0 = 0.07, dt = 0.03;
  Eigen::MatrixXd table(4, 10);
  gait.horizon(t0, dt, table);
  for (int k = 0; k < 10; ++k)
    for (int leg = 0; leg < 4; ++leg)
      EXPECT_EQ(table(leg, k), gait.in_stance(leg, t0 + k * dt) ? 1.0 : 0.0);
  // A trot with duty 1/2: two feet down in every interval, 10 x 2 in all.
  EXPECT_EQ(table.sum(), 20.0);
  Eigen::MatrixXd wrong(3, 10);
  EXPECT_THROW(gait.horizon(t0, dt, wrong), InvalidArgument);
}

TEST(GaitTest, RejectsInvalidParameters) {
  GaitParameters g = GaitParameters::trot();
  g.period = 0;
  EXPECT_THROW(GaitScheduler{g}, InvalidArgument);
  g = GaitParameters::trot();
  g.duty_factor = 1.5;
  EXPECT_THROW(GaitScheduler{g}, InvalidArgument);
  g = GaitParameters::trot();
  g.offsets[2] = std::nan("");
  EXPECT_THROW(GaitScheduler{g}, InvalidArgument);
}

}  // namespace
}  // namespace neuralsim
