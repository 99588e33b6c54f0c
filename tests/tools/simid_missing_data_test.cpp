// simid on recordings with gaps (issue #36): NaN in an observed channel is a
// missing entry, counted and reported; where a simulation starts it is
// refused; every other tool still refuses NaN. A tracked marker (issue #41)
// has no orientation: its quaternion columns are NaN and not observed.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <limits>

#include "neuralsim/io/config.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/tools/identify.hpp"
#include "neuralsim/tools/rollout.hpp"
#include "support/files.hpp"

namespace neuralsim::simid_missing_data_test {

std::string model_yaml() {
  return "model: {file: " + testing::source_path("configs/models/double_pendulum.yaml") + "}\n";
}

// Two swings of the double pendulum (0.4 s from rest at seeded angles, RK4
// at 10 ms) with link 2's poses.
TrajectorySet link2_swings(const std::string& dir) {
  testing::write_file(dir + "/truth.yaml", model_yaml() + R"(
sim: {integrator: rk4, dt: 0.01, duration: 0.4}
initial_states: {count: 2, q_low: [-1, -1], q_high: [1, 1], qd_low: [0, 0], qd_high: [0, 0]}
output: {link_poses: [link2]}
)");
  const RolloutResult truth = rollout({Config::load(dir + "/truth.yaml"), 1, ""});
  EXPECT_EQ(truth.status, RunStatus::kOk) << truth.message;
  return truth.trajectories;
}

// simid's fit of both lengths (from 2.8 and 4.2) on `train` through `observe`.
IdentificationResult fit_lengths(const std::string& dir, const std::string& train, const std::string& observe) {
  testing::write_file(dir + "/fit.yaml", model_yaml() + "data: {train: " + train +
                                             "}\nestimate:\n  observe: " + observe +
                                             R"(
  parameters:
    - {name: link.link1.length, initial: 2.8, bounds: [0.1, 10]}
    - {name: link.link2.length, initial: 4.2, bounds: [0.1, 10]}
  residual: {type: single_shooting, window: 20}
  solver: {max_iterations: 30}
  basin_hopping: {enabled: false}
sim: {integrator: rk4, dt: 0.01}
output: {plot: false}
)");
  return identify({Config::load(dir + "/fit.yaml"), 1, ""});
}

TEST(SimidMissingData, GapsAreSkippedCountedAndRefusedAtStarts) {
  const std::string dir = testing::fresh_dir("simid_missing_data");
  const std::string model = model_yaml();
  TrajectorySet gapped = link2_swings(dir);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  long long blanked = 0;
  for (Trajectory& t : gapped.trajectories)
    for (Eigen::Index k = 0; k < t.size(); ++k)
      if (k % 20 != 0 && k % 3 == 1) {  // a third of the samples, never a window start
        t.q(k, 1) = nan;
        t.link_poses.at("link2")(k, 2) = nan;
        ++blanked;
      }
  write_trajectories(dir + "/gapped.h5", gapped, true);
  const IdentificationResult r = fit_lengths(dir, "gapped.h5", "{q: 1.0, link_positions: [{link: link2}]}");
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
  EXPECT_EQ(r.missing.missing, 2 * blanked);  // one joint coordinate, one link coordinate per blanked sample
  EXPECT_EQ(r.missing.per_channel.at("q"), blanked);
  EXPECT_EQ(r.missing.per_channel.at("link_positions.link2"), blanked);
  bool warned = false;
  for (const std::string& w : r.warnings) warned |= w.find("observed entries are missing (NaN)") != std::string::npos;
  EXPECT_TRUE(warned);
  ASSERT_EQ(r.parameters.size(), 2u);
  EXPECT_NEAR(r.parameters[0].value, 3.0, 1e-6);
  EXPECT_NEAR(r.parameters[1].value, 4.0, 1e-6);
  EXPECT_TRUE(std::isfinite(r.train.mean_rmse_q));
  EXPECT_TRUE(std::isfinite(r.train.mean_rmse_link_position));

  // A gap where a window starts (sample 20) cannot be skipped.
  gapped.trajectories[1].qd(20, 0) = nan;
  write_trajectories(dir + "/gapped.h5", gapped, true);
  try {
    identify({Config::load(dir + "/fit.yaml"), 1, ""});
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("/qd: a missing sample (NaN) at row 20, column 0, where a single-shooting "
                                         "window"),
              std::string::npos)
        << e.what();
  }
  // rollout --compare reads no gaps: NaN stays a non-finite value there.
  testing::write_file(dir + "/replay.yaml", model + "sim: {integrator: rk4, dt: 0.01}\n");
  EXPECT_THROW(compare({Config::load(dir + "/replay.yaml"), 0, dir + "/gapped.h5", ""}), DataError);
}

// A marker glued off link 2's axis (issue #41), given as a point on the
// link (`{link: link2, point, data: tip_marker}`) with no frame in the
// model, and positions only (quaternion columns NaN). Its positions are
// written from the engine's link-2 poses rotated by their quaternions
// (Eigen's quaternion product, not the residual's r + Eᵀp): the fit
// recovers both lengths from the marker alone, and the reported marker
// error and the prediction under the marker's name follow.
TEST(SimidMissingData, AMarkerPointOnALinkAloneRecoversTheLengthsAndIsReportedUnderItsName) {
  const std::string dir = testing::fresh_dir("simid_marker");
  const TrajectorySet truth = link2_swings(dir);
  const Eigen::Vector3d point(0.3, 0.2, -0.5);
  TrajectorySet tracked = truth;
  for (Trajectory& t : tracked.trajectories) {
    const RowMatrixXd link = t.link_poses.at("link2");
    RowMatrixXd marker = RowMatrixXd::Constant(link.rows(), 7, std::numeric_limits<double>::quiet_NaN());
    for (Eigen::Index k = 0; k < link.rows(); ++k) {
      const Eigen::Quaterniond link_to_world(link(k, 6), link(k, 3), link(k, 4), link(k, 5));
      marker.row(k).head<3>() = (link.row(k).head<3>().transpose() + link_to_world * point).transpose();
    }
    t.link_poses.clear();
    t.link_poses["tip_marker"] = marker;
  }
  write_trajectories(dir + "/tracked.h5", tracked, true);
  const IdentificationResult r = fit_lengths(
      dir, "tracked.h5", "{q: 0, link_positions: [{link: link2, point: [0.3, 0.2, -0.5], data: tip_marker}]}");
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
  ASSERT_EQ(r.parameters.size(), 2u);
  EXPECT_NEAR(r.parameters[0].value, 3.0, 1e-6);
  EXPECT_NEAR(r.parameters[1].value, 4.0, 1e-6);
  EXPECT_EQ(r.missing.missing, 0);  // the NaN quaternion columns are not observed entries
  EXPECT_LT(r.train.mean_rmse_link_position, 1e-6);
  ASSERT_EQ(r.train.per_trajectory.size(), 2u);
  EXPECT_LT(r.train.per_trajectory[1].rmse_link_position, 1e-6);
  // The prediction holds the marker's point under its data name, with link
  // 2's orientation.
  ASSERT_EQ(r.train.predictions.trajectories.size(), 2u);
  const Trajectory& p = r.train.predictions.trajectories[1];
  ASSERT_EQ(p.link_poses.count("tip_marker"), 1u);
  const RowMatrixXd& predicted = p.link_poses.at("tip_marker");
  const RowMatrixXd& recorded = tracked.trajectories[1].link_poses.at("tip_marker");
  EXPECT_LT((predicted.leftCols<3>() - recorded.leftCols<3>()).cwiseAbs().maxCoeff(), 1e-6);
  EXPECT_LT(
      (predicted.rightCols<4>() - truth.trajectories[1].link_poses.at("link2").rightCols<4>()).cwiseAbs().maxCoeff(),
      1e-6);
}

}  // namespace neuralsim::simid_missing_data_test
