// make_windows and loss_weights_from_data against values written into the
// recordings by construction (sample s of trajectory i holds known numbers),
// so every window's content, alignment and count is checked exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/train/training_data.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace {

// q(s, j) = 1000 i + 10 s + j, qd = −q, tau = q + 0.5: any misalignment by a
// sample, a coordinate or a trajectory shows in the value.
Trajectory coded_trajectory(int i, int samples, int nq, int nv, bool tau, const std::string& name) {
  Trajectory t;
  t.name = name;
  t.time = Eigen::VectorXd::LinSpaced(samples, 0, 0.01 * (samples - 1));
  t.q.resize(samples, nq);
  t.qd.resize(samples, nv);
  if (tau) t.tau.resize(samples, nv);
  for (int s = 0; s < samples; ++s) {
    for (int j = 0; j < nq; ++j) t.q(s, j) = 1000.0 * i + 10.0 * s + j;
    for (int j = 0; j < nv; ++j) t.qd(s, j) = -(1000.0 * i + 10.0 * s + j);
    if (tau)
      for (int j = 0; j < nv; ++j) t.tau(s, j) = 1000.0 * i + 10.0 * s + j + 0.5;
  }
  return t;
}

TrajectorySet coded_set(bool tau = true) {
  TrajectorySet set;
  set.trajectories.push_back(coded_trajectory(0, 12, 3, 2, tau, "a"));
  set.trajectories.push_back(coded_trajectory(1, 7, 3, 2, tau, "b"));
  return set;
}

using testing::thrown_message;

TEST(TrainingWindows, ShapesAndAlignment) {
  const TrajectorySet set = coded_set();
  const int K = 3;
  const auto windows = make_windows(set, {K, 1, 0});
  // T = 12: starts 0..8 (s + K ≤ 11); T = 7: starts 0..3.
  ASSERT_EQ(windows.size(), 9u + 4u);
  for (const TrainingWindow& w : windows) {
    ASSERT_EQ(w.steps(), K);
    ASSERT_EQ(w.q.rows(), 3);
    ASSERT_EQ(w.qd.rows(), 2);
    ASSERT_EQ(w.controls.rows(), 2);
    ASSERT_EQ(w.q_next.cols(), K);
    ASSERT_EQ(w.qd_next.rows(), 2);
    for (int k = 0; k < K; ++k) {
      const double s = w.start + k;
      for (int j = 0; j < 3; ++j) {
        EXPECT_EQ(w.q(j, k), 1000.0 * w.trajectory + 10 * s + j);
        EXPECT_EQ(w.q_next(j, k), 1000.0 * w.trajectory + 10 * (s + 1) + j);
      }
      for (int j = 0; j < 2; ++j) {
        EXPECT_EQ(w.qd(j, k), -(1000.0 * w.trajectory + 10 * s + j));
        EXPECT_EQ(w.qd_next(j, k), -(1000.0 * w.trajectory + 10 * (s + 1) + j));
        EXPECT_EQ(w.controls(j, k), 1000.0 * w.trajectory + 10 * s + j + 0.5);  // tau at the step's start
      }
      // Targets of step k are the states of step k + 1 within the window.
      if (k + 1 < K) {
        EXPECT_EQ(w.q_next.col(k), w.q.col(k + 1));
      }
    }
  }
  EXPECT_EQ(windows.front().trajectory, 0);
  EXPECT_EQ(windows[8].start, 8);
  EXPECT_EQ(windows[9].trajectory, 1);
  EXPECT_EQ(windows[9].start, 0);
  EXPECT_EQ(windows.back().start, 3);
}

TEST(TrainingWindows, StrideAndMaxSamples) {
  const TrajectorySet set = coded_set();
  // Stride 4, K = 2: T = 12 → starts 0, 4, 8 (8 + 2 ≤ 11); T = 7 → 0, 4.
  auto windows = make_windows(set, {2, 4, 0});
  ASSERT_EQ(windows.size(), 5u);
  EXPECT_EQ(windows[1].start, 4);
  EXPECT_EQ(windows[2].start, 8);
  EXPECT_EQ(windows[4].start, 4);
  EXPECT_EQ(windows[4].trajectory, 1);
  EXPECT_EQ(count_windows(12, {2, 4, 0}), 3);
  // max_samples = 6: each trajectory cut to samples 0..5, K = 2 → starts 0..3.
  windows = make_windows(set, {2, 1, 6});
  ASSERT_EQ(windows.size(), 8u);
  for (const TrainingWindow& w : windows) EXPECT_LE(w.start + 2, 5);
  // A trajectory too short for a window gives none; K = T − 1 gives one.
  EXPECT_EQ(count_windows(7, {6, 1, 0}), 1);
  EXPECT_EQ(count_windows(7, {7, 1, 0}), 0);
  EXPECT_EQ(make_windows(set, {10, 1, 0}).size(), 2u);  // T = 12: starts 0, 1; T = 7: none
}

TEST(TrainingWindows, NoTauGivesEmptyControls) {
  const auto windows = make_windows(coded_set(false), {4, 2, 0});
  ASSERT_FALSE(windows.empty());
  for (const TrainingWindow& w : windows) {
    EXPECT_EQ(w.controls.rows(), 0);
    EXPECT_EQ(w.controls.cols(), 4);
  }
}

TEST(TrainingWindows, BadArgumentsAreInvalidArgument) {
  const TrajectorySet set = coded_set();
  EXPECT_THROW(make_windows(set, {0, 1, 0}), InvalidArgument);
  EXPECT_THROW(make_windows(set, {1, 0, 0}), InvalidArgument);
  EXPECT_THROW(make_windows(set, {1, 1, -1}), InvalidArgument);
  // Sized before allocating: a request above max_bytes is refused with the count.
  WindowOptions o{2, 1, 0};
  o.max_bytes = 1000;
  const std::string msg = thrown_message([&] { make_windows(set, o); });
  EXPECT_NE(msg.find("15 windows"), std::string::npos) << msg;
  EXPECT_THROW(make_windows(set, o), InvalidArgument);
}

TEST(TrainingWindows, BadDataNamesTrajectoryAndSample) {
  {
    TrajectorySet set = coded_set();
    set.trajectories[1].q.conservativeResize(Eigen::NoChange, 4);
    const std::string msg = thrown_message([&] { make_windows(set, {1, 1, 0}); });
    EXPECT_NE(msg.find("trajectory 1 ('b')"), std::string::npos) << msg;
    EXPECT_THROW(make_windows(set, {1, 1, 0}), DataError);
  }
  {
    TrajectorySet set = coded_set();
    set.trajectories[1].qd(5, 1) = std::numeric_limits<double>::quiet_NaN();
    const std::string msg = thrown_message([&] { make_windows(set, {1, 1, 0}); });
    EXPECT_NE(msg.find("trajectory 1 ('b')"), std::string::npos) << msg;
    EXPECT_NE(msg.find("sample 5"), std::string::npos) << msg;
    EXPECT_THROW(make_windows(set, {1, 1, 0}), DataError);
    // A NaN beyond max_samples is never used and not an error.
    EXPECT_NO_THROW(make_windows(set, {1, 1, 5}));
  }
  {
    TrajectorySet set = coded_set();
    set.trajectories[0].tau.resize(0, 0);  // tau in one trajectory only
    EXPECT_THROW(make_windows(set, {1, 1, 0}), DataError);
  }
  {
    TrajectorySet set = coded_set();
    set.trajectories[0].qd.conservativeResize(11, Eigen::NoChange);  // 11 velocity samples, 12 positions
    const std::string msg = thrown_message([&] { make_windows(set, {1, 1, 0}); });
    EXPECT_NE(msg.find("trajectory 0 ('a')"), std::string::npos) << msg;
  }
}

TEST(TrainingLossWeights, InverseVarianceWithFloor) {
  TrajectorySet set;
  Trajectory a, b;
  // q0 over both: {0, 1, 2, 3} → mean 1.5, variance 1.25; q1 constant; qd0: {1, −1, 1, −1} → 1.
  a.q.resize(2, 2);
  a.q << 0, 7, 1, 7;
  a.qd.resize(2, 1);
  a.qd << 1, -1;
  b.q.resize(2, 2);
  b.q << 2, 7, 3, 7;
  b.qd.resize(2, 1);
  b.qd << 1, -1;
  set.trajectories = {a, b};
  const WindowLossWeights w = loss_weights_from_data(set, 1e-4);
  ASSERT_EQ(w.wq.size(), 2);
  ASSERT_EQ(w.wqd.size(), 1);
  EXPECT_NEAR(w.wq[0], 1 / 1.25, 1e-15);
  EXPECT_EQ(w.wq[1], 1e4);  // floored
  EXPECT_NEAR(w.wqd[0], 1.0, 1e-15);
  // A large offset does not cancel the variance (two-pass computation).
  for (auto& t : set.trajectories) t.q.col(0).array() += 1e9;
  EXPECT_NEAR(loss_weights_from_data(set, 1e-4).wq[0], 1 / 1.25, 1e-9);
  EXPECT_THROW(loss_weights_from_data(TrajectorySet{}), DataError);
  EXPECT_THROW(loss_weights_from_data(set, 0), InvalidArgument);
}

}  // namespace
}  // namespace neuralsim
