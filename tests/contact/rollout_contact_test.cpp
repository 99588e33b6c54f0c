// The `rollout` CLI with a `contact:` section: link poses are recorded
// (output.link_poses), --compare replays with the same contact model, and
// contact config errors exit with code 2 naming the key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "neuralsim/io/hdf5_trajectory.hpp"
#include "support/run_command.hpp"

namespace neuralsim {
namespace {

using testing::fresh_dir;
using testing::run_command;

TEST(RolloutContact, WritesBoxPoseTrajectoryAndReplaysExactly) {
  const std::string out = fresh_dir("contact_push"), cmp = fresh_dir("contact_push_cmp");
  const std::string base = testing::app_path("rollout") + " --config configs/rollout_planar_pushing.yaml -q";
  const auto r = run_command(base + " --set sim.duration=0.5 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const TrajectorySet set = read_trajectories(out + "/trajectories.h5");
  ASSERT_EQ(set.trajectories.size(), 1u);
  const Trajectory& tr = set.trajectories[0];
  ASSERT_EQ(tr.link_poses.count("box"), 1u);
  const RowMatrixXd& pose = tr.link_poses.at("box");
  ASSERT_EQ(pose.rows(), tr.size());
  ASSERT_EQ(pose.cols(), 7);
  // The box is a free body: its pose is its own q (x y z, qx qy qz qw).
  for (Eigen::Index k = 0; k < tr.size(); k += 50) {
    EXPECT_NEAR(pose(k, 0), tr.q(k, 2), 1e-12);
    EXPECT_NEAR(pose(k, 1), tr.q(k, 3), 1e-12);
    EXPECT_NEAR(std::abs(pose.row(k).tail<4>().dot(tr.q.row(k).tail<4>())), 1.0, 1e-12);
  }
  EXPECT_GT(pose(tr.size() - 1, 0), pose(0, 0));  // pushed along +x
  // Replay with the same config: the contact model is installed there too.
  const auto c = run_command(base + " --set sim.duration=0.5 --compare " + out + "/trajectories.h5 --out " + cmp);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const auto s = nlohmann::json::parse(testing::read_text(cmp + "/summary.json"));
  EXPECT_LT(s["metrics"]["mean_rmse_q"].get<double>(), 1e-9);
  // output.link_poses holds for --compare too: the predicted poses, which
  // the exact replay makes the recorded ones (#41: it was ignored).
  const TrajectorySet predicted = read_trajectories(cmp + "/compare.h5");
  ASSERT_EQ(predicted.trajectories.at(0).link_poses.count("box"), 1u);
  const RowMatrixXd& replayed = predicted.trajectories[0].link_poses.at("box");
  ASSERT_EQ(replayed.rows(), 501);
  EXPECT_LT((replayed - pose.topRows(501)).cwiseAbs().maxCoeff(), 1e-9);
}

TEST(RolloutContact, BadContactConfigIsAConfigError) {
  const std::string out = fresh_dir("contact_bad");
  const std::string base = testing::app_path("rollout") + " --config configs/rollout_ball_bounce.yaml -q --out " + out;
  auto r = run_command(base + " --set contact.model=rubber");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("rubber"), std::string::npos) << r.err;
  r = run_command(base + " --set contact.parameters.stickiness=1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("contact.parameters.stickiness"), std::string::npos) << r.err;
  r = run_command(base + " --set output.link_poses=[wheel]");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("wheel"), std::string::npos) << r.err;
  r = run_command(base + " --set sim.integrator=rk4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("semi_implicit_euler"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace neuralsim
