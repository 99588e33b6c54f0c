// Task-space metrics of rollout --compare (issue #41): errors of the link or
// marker positions the recordings observe, per trajectory, per horizon and
// pooled. The oracle is a constant offset: markers written 1 cm, 2 cm and
// 3 cm off the link that the model replays exactly, so every position error
// is that offset, whose RMSE per coordinate is |d|/√3; a marker glued off
// link 2's axis (compare.markers: {link, point, data}), written at the
// point rotated by the recorded quaternion plus the same offset, scores the
// same. The no-motion row is scored too; a marker the model does not know
// is a warning.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>

#include "neuralsim/io/config.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/tools/rollout.hpp"
#include "support/files.hpp"

namespace neuralsim::task_space_metrics_test {

TEST(TaskSpaceMetrics, MarkerErrorsPerTrajectoryHorizonAndPooled) {
  const std::string dir = testing::fresh_dir("task_space_metrics");
  const std::string model = "model: {file: " + testing::source_path("configs/models/double_pendulum.yaml") + "}\n";
  testing::write_file(dir + "/truth.yaml", model + R"(
sim: {integrator: rk4, dt: 0.01, duration: 0.5}
initial_states: {count: 2, q_low: [-1, -1], q_high: [1, 1], qd_low: [0, 0], qd_high: [0, 0]}
output: {link_poses: [link2]}
)");
  RolloutResult truth = rollout({Config::load(dir + "/truth.yaml"), 1, ""});
  ASSERT_EQ(truth.status, RunStatus::kOk) << truth.message;
  const Eigen::Vector3d offset(0.01, -0.02, 0.03), point(0.3, 0.2, -0.5);
  TrajectorySet recorded = truth.trajectories;
  for (Trajectory& t : recorded.trajectories) {
    RowMatrixXd& marker = t.link_poses.at("link2");
    RowMatrixXd tip = marker;
    for (Eigen::Index k = 0; k < marker.rows(); ++k) {
      const Eigen::Quaterniond link_to_world(marker(k, 6), marker(k, 3), marker(k, 4), marker(k, 5));
      tip.row(k).head<3>() += (link_to_world * point + offset).transpose();
      marker.row(k).head<3>() += offset.transpose();
    }
    t.link_poses["tip_marker"] = tip;
    t.link_poses["unknown_marker"] = marker;
  }
  write_trajectories(dir + "/markers.h5", recorded);

  testing::write_file(dir + "/replay.yaml",
                      model +
                          "sim: {integrator: rk4, dt: 0.01}\ncompare: {horizons: [10, 40], markers: "
                          "[{link: link2, point: [0.3, 0.2, -0.5], data: tip_marker}]}\n");
  const CompareResult r = compare({Config::load(dir + "/replay.yaml"), 0, dir + "/markers.h5", ""});
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
  const double expected = offset.norm() / std::sqrt(3.0);
  const long long T = recorded.trajectories[0].size();
  ASSERT_EQ(r.per_trajectory.size(), 2u);
  for (const PredictionError& e : r.per_trajectory) {
    ASSERT_EQ(e.position_links, (std::vector<std::string>{"link2", "tip_marker"}));
    EXPECT_NEAR(e.rmse_position, expected, 1e-9);
    ASSERT_EQ(e.rmse_position_by_horizon.size(), 2u);
    EXPECT_NEAR(e.rmse_position_by_horizon[0].second, expected, 1e-9);
    EXPECT_NEAR(e.rmse_position_by_horizon[1].second, expected, 1e-9);
  }
  EXPECT_EQ(r.per_trajectory[0].position_samples, 2 * T);
  EXPECT_NEAR(r.pooled.rmse_position, expected, 1e-9);
  ASSERT_EQ(r.pooled.rmse_position_by_horizon.size(), 2u);
  EXPECT_NEAR(r.pooled.rmse_position_by_horizon[1].second, expected, 1e-9);

  // The no-motion row holds the markers at their first position: its error
  // is the distance the marker travelled, plus the offset.
  const Trajectory& t0 = recorded.trajectories[0];
  double sum = 0;
  for (const char* name : {"link2", "tip_marker"})
    for (Eigen::Index k = 0; k < t0.size(); ++k) {
      const Eigen::Vector3d still = t0.link_poses.at(name).row(0).head<3>().transpose() - offset;
      sum += (t0.link_poses.at(name).row(k).head<3>().transpose() - still).squaredNorm();
    }
  EXPECT_NEAR(r.no_motion[0].rmse_position, std::sqrt(sum / (6.0 * t0.size())), 1e-9);

  bool warned = false;
  for (const std::string& w : r.warnings) warned |= w.find("link_poses/unknown_marker") != std::string::npos;
  EXPECT_TRUE(warned) << "a marker the model does not know is a warning";
}

}  // namespace neuralsim::task_space_metrics_test
