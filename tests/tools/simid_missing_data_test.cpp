// simid on recordings with gaps (issue #36): NaN in an observed channel is a
// missing entry, counted and reported; where a simulation starts it is
// refused; every other tool still refuses NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "neuralsim/io/config.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/tools/identify.hpp"
#include "neuralsim/tools/rollout.hpp"
#include "support/files.hpp"

namespace neuralsim::simid_missing_data_test {

TEST(SimidMissingData, GapsAreSkippedCountedAndRefusedAtStarts) {
  const std::string dir = testing::fresh_dir("simid_missing_data");
  const std::string model = "model: {file: " + testing::source_path("configs/models/double_pendulum.yaml") + "}\n";
  testing::write_file(dir + "/truth.yaml", model + R"(
sim: {integrator: rk4, dt: 0.01, duration: 0.4}
initial_states: {count: 2, q_low: [-1, -1], q_high: [1, 1], qd_low: [0, 0], qd_high: [0, 0]}
output: {link_poses: [link2]}
)");
  const RolloutResult truth = rollout({Config::load(dir + "/truth.yaml"), 1, ""});
  ASSERT_EQ(truth.status, RunStatus::kOk) << truth.message;
  TrajectorySet gapped = truth.trajectories;
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

  const std::string config = model + R"(
sim: {integrator: rk4, dt: 0.01}
data: {train: gapped.h5}
estimate:
  parameters:
    - {name: link.link1.length, initial: 2.8, bounds: [0.1, 10]}
    - {name: link.link2.length, initial: 4.2, bounds: [0.1, 10]}
  observe: {q: 1.0, link_positions: [{link: link2}]}
  residual: {type: single_shooting, window: 20}
  solver: {max_iterations: 30}
  basin_hopping: {enabled: false}
output: {plot: false}
)";
  testing::write_file(dir + "/fit.yaml", config);
  const IdentificationResult r = identify({Config::load(dir + "/fit.yaml"), 1, ""});
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

}  // namespace neuralsim::simid_missing_data_test
