// simid on a marker glued off a link's axis (issue #41), given as a point on
// the link (`{link: link2, point, data: tip_marker}`) with no frame in the
// model, and the recording's positions only (quaternion columns NaN). The
// marker's positions are written from the engine's link-2 poses rotated by
// their quaternions (Eigen's quaternion product, not the residual's
// r + Eᵀp): the fit recovers both lengths from the marker alone, and the
// reported marker error and the prediction under the marker's name follow.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <limits>

#include "neuralsim/io/config.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/tools/identify.hpp"
#include "neuralsim/tools/rollout.hpp"
#include "support/files.hpp"

namespace neuralsim::simid_marker_test {

TEST(SimidMarker, APointOnALinkAloneRecoversTheLengthsAndIsReportedUnderItsName) {
  const std::string dir = testing::fresh_dir("simid_marker");
  const std::string model = "model: {file: " + testing::source_path("configs/models/double_pendulum.yaml") + "}\n";
  testing::write_file(dir + "/truth.yaml", model + R"(
sim: {integrator: rk4, dt: 0.01, duration: 0.4}
initial_states: {count: 2, q_low: [-1, -1], q_high: [1, 1], qd_low: [0, 0], qd_high: [0, 0]}
output: {link_poses: [link2]}
)");
  const RolloutResult truth = rollout({Config::load(dir + "/truth.yaml"), 1, ""});
  ASSERT_EQ(truth.status, RunStatus::kOk) << truth.message;
  const Eigen::Vector3d point(0.3, 0.2, -0.5);
  TrajectorySet tracked = truth.trajectories;
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
  testing::write_file(dir + "/fit.yaml", model + R"(
sim: {integrator: rk4, dt: 0.01}
data: {train: tracked.h5}
estimate:
  parameters:
    - {name: link.link1.length, initial: 2.8, bounds: [0.1, 10]}
    - {name: link.link2.length, initial: 4.2, bounds: [0.1, 10]}
  observe: {q: 0, link_positions: [{link: link2, point: [0.3, 0.2, -0.5], data: tip_marker}]}
  residual: {type: single_shooting, window: 20}
  solver: {max_iterations: 30}
  basin_hopping: {enabled: false}
output: {plot: false}
)");
  const IdentificationResult r = identify({Config::load(dir + "/fit.yaml"), 1, ""});
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
  EXPECT_LT((predicted.rightCols<4>() - truth.trajectories.trajectories[1].link_poses.at("link2").rightCols<4>())
                .cwiseAbs()
                .maxCoeff(),
            1e-6);
}

}  // namespace neuralsim::simid_marker_test
