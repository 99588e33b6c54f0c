// End-to-end: the real `rollout` binary runs the Laikago under
// `controls: {type: mpc}` (configs/rollout_laikago_trot.yaml) and it walks
// without falling; bad MPC configurations exit with their documented codes
// (ConfigError 2, DataError 3) before anything is simulated.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/network_file.hpp"
#include "support/files.hpp"
#include "support/run_command.hpp"
#include "support/test_models.hpp"

namespace neuralsim {
namespace {

using testing::fresh_dir;
using testing::run_command;

class RolloutMpcApp : public ::testing::Test {
 protected:
  void SetUp() override {
    NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago");
  }
  static std::string rollout_mpc_command() {
    return testing::app_path("rollout") + " --config configs/rollout_laikago_trot.yaml -q";
  }
};

TEST_F(RolloutMpcApp, TheLaikagoTrotsForwardWithoutFalling) {
  const std::string out = fresh_dir("rollout_mpc_trot");
  // 2 s: 0.2 s standing, then trotting forward at 0.3 m/s (the schedule turns at 2.5 s).
  const auto r = run_command(rollout_mpc_command() + " --set sim.duration=2 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const TrajectorySet set = read_trajectories(out + "/trajectories.h5");
  ASSERT_EQ(set.trajectories.size(), 1u);
  const Trajectory& tr = set.trajectories[0];
  ASSERT_EQ(tr.size(), 2001);
  ASSERT_EQ(tr.link_poses.count("chassis"), 1u);
  const RowMatrixXd& trunk = tr.link_poses.at("chassis");
  ASSERT_EQ(trunk.rows(), tr.size());
  ASSERT_TRUE(trunk.allFinite());
  // Not fallen: the trunk stays above 0.2 m (its belly touches near 0.1 m)
  // and stays upright (body z within 20° of world z).
  double max_tilt = 0;
  for (Eigen::Index k = 0; k < trunk.rows(); ++k) {
    const Eigen::Quaterniond Q(trunk(k, 6), trunk(k, 3), trunk(k, 4), trunk(k, 5));
    max_tilt = std::max(max_tilt, std::acos(std::clamp(Q.normalized().toRotationMatrix()(2, 2), -1.0, 1.0)));
  }
  const double min_z = trunk.col(2).minCoeff();
  const double dx = trunk(trunk.rows() - 1, 0) - trunk(0, 0);
  const double dy = trunk(trunk.rows() - 1, 1) - trunk(0, 1);
  std::printf("[ rollout mpc ] 2 s: min trunk height %.3f m, max tilt %.1f deg, forward %.3f m, lateral %.3f m\n",
              min_z, max_tilt * 180 / M_PI, dx, dy);
  EXPECT_GT(min_z, 0.2);
  EXPECT_LT(max_tilt, 20 * M_PI / 180);
  // Forward: 1.8 s of trotting at 0.3 m/s is 0.54 m; at least half of it,
  // and not sideways.
  EXPECT_GT(dx, 0.27);
  EXPECT_LT(std::abs(dy), 0.1);
}

// Random commands (data generation) depend on (seed, trajectory index) only:
// the same data with 1 thread as with 2, different commands per trajectory.
TEST_F(RolloutMpcApp, RandomCommandsAreTheSameAtAnyThreadCount) {
  const std::string a = fresh_dir("rollout_mpc_rand_1"), b = fresh_dir("rollout_mpc_rand_2");
  const std::string q0 = "{q: [0, 0, 0.356162, 0, 0, 0, 1, 0, 0.67, -1.25, 0, 0.67, -1.25, 0, 0.67, -1.25, 0, 0.67, -1.25]}";
  const std::string cmd = rollout_mpc_command() + " --set sim.duration=1 --set 'initial_states.list=[" + q0 + ", " +
                          q0 + "]' --set controls.schedule= --set 'controls.random_commands={every: 0.25, "
                          "forward_speed: [-0.2, 0.4], yaw_rate: [-0.5, 0.5], seed: 3}'";
  auto r = run_command(cmd + " --threads 1 --out " + a);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_command(cmd + " --threads 2 --out " + b);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const TrajectorySet A = read_trajectories(a + "/trajectories.h5"), B = read_trajectories(b + "/trajectories.h5");
  ASSERT_EQ(A.trajectories.size(), 2u);
  ASSERT_EQ(B.trajectories.size(), 2u);
  EXPECT_EQ(A.trajectories[0].q, B.trajectories[0].q);
  EXPECT_EQ(A.trajectories[1].q, B.trajectories[1].q);
  // Same initial state, different commands: the trajectories part.
  const double apart = (A.trajectories[0].q.bottomRows(1) - A.trajectories[1].q.bottomRows(1)).norm();
  EXPECT_GT(apart, 1e-3);
  for (const Trajectory& tr : A.trajectories) EXPECT_GT(tr.q.col(2).minCoeff(), 0.2);
}

TEST_F(RolloutMpcApp, BadMpcConfigurationsExitWithTheirCodes) {
  const std::string dir = fresh_dir("rollout_mpc_bad");
  // Infeasible: two stance feet of 50 N cannot carry the robot.
  auto r = run_command(rollout_mpc_command() + " --set controls.mpc.fz_max=50 --out " + dir + "/a");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("controls.mpc.fz_max"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("infeasible"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/a/trajectories.h5"));
  // A feet name the model does not have.
  r = run_command(rollout_mpc_command() + " --set controls.feet=[toeFR,toeFL,toeRR,paw] --out " + dir + "/b");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("controls.feet.3"), std::string::npos) << r.err;
  // A network of the wrong input size.
  NamedNetwork n;
  n.name = "mpc_forces";
  n.network = nn::Mlp(7, {nn::LayerSpec{12, nn::Activation::kIdentity}});
  write_networks(dir + "/w.h5", {n});
  r = run_command(rollout_mpc_command() + " --set controls.type=mpc_network --set controls.weights=" + dir +
                  "/w.h5 --out " + dir + "/c");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("w.h5"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected 65 inputs, got 7"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace neuralsim
