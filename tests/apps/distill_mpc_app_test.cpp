// End-to-end tests of the `distill-mpc` CLI on the double integrator
// (configs/distill_double_integrator.yaml): the distilled network keeps
// the closed loop stable where a zero network does not, and imitates the
// MPC (its training RMSE is a small fraction of the control's spread); the
// dataset it writes holds the MPC's law (a sample's target is the QP's first
// control for that state, re-solved here); the same weights at any thread
// count and after --resume following SIGINT or SIGKILL; bad input gets its
// one-line error and documented exit code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>

#include "neuralsim/control/linear_mpc.hpp"
#include "neuralsim/io/distill_dataset.hpp"
#include "neuralsim/io/network_file.hpp"
#include "support/files.hpp"
#include "support/run_command.hpp"

namespace neuralsim {
namespace distill_app_test_detail {

std::string distill_app_cmd(const std::string& extra = "") {
  return testing::app_path("distill-mpc") + " --config configs/distill_double_integrator.yaml -q " + extra;
}

std::vector<double> distill_weights_of(const std::string& file) {
  const NamedNetwork net = read_network(file, "mpc_control");
  return std::vector<double>(net.network.parameters(), net.network.parameters() + net.network.num_parameters());
}

}  // namespace distill_app_test_detail

using distill_app_test_detail::distill_app_cmd;
using distill_app_test_detail::distill_weights_of;

TEST(DistillMpcApp, DistilledNetworkStabilizesTheDoubleIntegratorAndAZeroNetworkDoesNot) {
  const std::string out = testing::fresh_dir("distill_di");
  const auto r = testing::run_command(distill_app_cmd("--seed 1 --out " + out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = testing::read_json(out + "/summary.json");
  EXPECT_EQ(s["status"], "ok");
  const auto& m = s["metrics"];
  EXPECT_EQ(m["system"], "linear");
  EXPECT_GE(m["dataset"]["samples"].get<int>(), 40 * 120);
  for (const char* f : {"weights.h5", "dataset.h5", "loss.csv", "checkpoint.json", "closed_loop.csv"})
    EXPECT_TRUE(std::filesystem::exists(out + "/" + f)) << f;
  // Every output listed in the summary.
  std::vector<std::string> listed;
  for (const auto& f : s["outputs"]) listed.push_back(std::filesystem::path(f.get<std::string>()).filename());
  for (const char* f : {"weights.h5", "dataset.h5", "loss.csv", "closed_loop.csv"})
    EXPECT_NE(std::find(listed.begin(), listed.end(), f), listed.end()) << f;
  // Imitation: validation RMSE of the control well below its spread.
  const DistillDataset d = read_distill_dataset(out + "/dataset.h5");
  const double mean = d.targets.mean();
  const double spread = std::sqrt((d.targets.array() - mean).square().mean());
  EXPECT_LT(m["training"]["validation_rmse_mean"].get<double>(), 0.1 * spread);
  EXPECT_LT(m["training"]["best_validation_loss"].get<double>(), 0.05 * m["training"]["initial_validation_loss"].get<double>());
  // Closed loop: the MPC and the network bring every episode back to the origin.
  const auto& ev = m["evaluation"];
  EXPECT_EQ(ev["mpc"]["stable"].get<int>(), 10);
  EXPECT_EQ(ev["network"]["stable"].get<int>(), 10);
  EXPECT_LT(ev["network"]["mean_final_state_norm"].get<double>(), 0.02);

  // The dataset holds the MPC's law: re-solve the QP for some samples.
  LinearMpcParameters p;
  double_integrator(0.05, 1.0, &p.A, &p.B);
  p.Q = Eigen::Vector2d(10.0, 1.0).asDiagonal();
  p.R = Eigen::MatrixXd::Constant(1, 1, 0.1);
  p.horizon = 20;
  p.u_min = Eigen::VectorXd::Constant(1, -5.0);
  p.u_max = Eigen::VectorXd::Constant(1, 5.0);
  LinearMpc mpc(p);
  for (Eigen::Index k = 0; k < d.size(); k += 97) {
    ASSERT_EQ(mpc.solve(d.features.row(k).transpose(), false), QpStatus::kOptimal);
    EXPECT_NEAR(mpc.first_control()[0], d.targets(k, 0), 1e-9) << "sample " << k;
  }

  // A zero network (u ≡ 0) in the MPC's place: the mass keeps drifting.
  // Every path lives under the test's fresh temporary directory.
  const std::filesystem::path zero_dir = testing::fresh_dir("distill_di_zero");
  const std::string weights = (zero_dir / "zero.h5").string(), run_dir = (zero_dir / "run").string();
  NamedNetwork zero{"mpc_control", nn::Mlp(2, std::vector<nn::Index>{8}, 1, nn::Activation::kTanh), {}, {}, {}};
  write_networks(weights, {zero});
  const auto z = testing::run_command(distill_app_cmd("--seed 1 --out " + run_dir + " --set distill.evaluate.weights=" +
                                                      weights));
  ASSERT_EQ(z.exit_code, 0) << z.err;
  const auto zs = testing::read_json((std::filesystem::path(run_dir) / "summary.json").string())["metrics"]["evaluation"];
  EXPECT_EQ(zs["mpc"]["stable"].get<int>(), 10);
  EXPECT_LE(zs["network"]["stable"].get<int>(), 1);  // only an episode that starts (and stays) near rest could pass
}

TEST(DistillMpcApp, SameWeightsAtAnyThreadCount) {
  const std::string a = testing::fresh_dir("distill_threads_1"), b = testing::fresh_dir("distill_threads_2");
  const std::string args = "--seed 3 --set distill.train.epochs=15 --set distill.evaluate.episodes=2 ";
  ASSERT_EQ(testing::run_command(distill_app_cmd(args + "--threads 1 --out " + a)).exit_code, 0);
  ASSERT_EQ(testing::run_command(distill_app_cmd(args + "--threads 2 --out " + b)).exit_code, 0);
  EXPECT_EQ(distill_weights_of(a + "/weights.h5"), distill_weights_of(b + "/weights.h5"));
  EXPECT_EQ(testing::read_text(a + "/closed_loop.csv"), testing::read_text(b + "/closed_loop.csv"));
}

TEST(DistillMpcApp, ResumeAfterInterruptOrKillGivesTheUninterruptedWeights) {
  const std::string cmd = distill_app_cmd("--seed 6 --threads 1 --set distill.data.episodes=10 --set distill.train.epochs=200 "
                                           "--set distill.evaluate.episodes=1");
  const std::string reference = testing::fresh_dir("distill_resume_reference");
  ASSERT_EQ(testing::run_command(cmd + " --out " + reference).exit_code, 0);
  const std::vector<double> expected = distill_weights_of(reference + "/weights.h5");
  const auto ref = testing::read_json(reference + "/summary.json");
  const double setup = ref["timings"]["setup_s"].get<double>() + ref["timings"].value("data_s", 0.0);
  const double seconds = ref["timings"]["train_s"].get<double>();
  int resumed = 0;
  // Ctrl-C early, SIGKILL late (each pair costs two runs).
  for (const auto& [fraction, signal] : {std::pair<double, const char*>{0.3, "INT"}, {0.7, "KILL"}}) {
    const std::string out = testing::fresh_dir(std::string("distill_resume_") + signal + std::to_string(fraction));
    const std::string delay = std::to_string(0.1 + setup + fraction * seconds);
    const auto stopped =
        testing::run_command("timeout --preserve-status -s " + std::string(signal) + " " + delay + " " + cmd + " --out " + out);
    SCOPED_TRACE(std::string(signal) + " after " + delay + " s (exit " + std::to_string(stopped.exit_code) + ")");
    if (stopped.exit_code == 0) continue;
    if (std::string(signal) == "INT") {
      ASSERT_EQ(stopped.exit_code, 130) << stopped.err;
      if (std::filesystem::exists(out + "/summary.json")) {
        EXPECT_EQ(testing::read_json(out + "/summary.json")["status"], "interrupted");
      }
    }
    const bool has_checkpoint = std::filesystem::exists(out + "/checkpoint.json");
    const auto again = testing::run_command(cmd + (has_checkpoint ? " --resume" : " --force") + " --out " + out);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(distill_weights_of(out + "/weights.h5"), expected);
    resumed += has_checkpoint;
  }
  EXPECT_GT(resumed, 0) << "no run was stopped after its first checkpoint";
  // A checkpoint of another seed is refused (exit 2, naming what changed).
  const auto other = testing::run_command(distill_app_cmd("--seed 7 --threads 1 --set distill.data.episodes=10 --set distill.train.epochs=200 "
                                             "--set distill.evaluate.episodes=1 --resume --out " + reference));
  EXPECT_EQ(other.exit_code, 2) << other.err;
  testing::expect_contains(other.err, {"checkpoint.json", "changed", "seed"});
}

// --resume needs a checkpoint (as simid's and train-augment's): without one
// it is refused before any work, whatever the mode, and a dataset an
// interrupted run left in --out is not generated again over.
TEST(DistillMpcApp, ResumeWithoutACheckpointIsRefusedAndTouchesNothing) {
  const std::string dir = testing::fresh_dir("distill_resume_without_checkpoint");
  NamedNetwork zero{"mpc_control", nn::Mlp(2, std::vector<nn::Index>{8}, 1, nn::Activation::kTanh), {}, {}, {}};
  write_networks(dir + "/zero.h5", {zero});
  for (const std::string& mode : {std::string(), " --set distill.evaluate.weights=" + dir + "/zero.h5"}) {
    SCOPED_TRACE(mode.empty() ? "training" : "evaluation only");
    // Killed before its first checkpoint: the marker and the dataset.
    const std::string out = testing::fresh_dir("distill_resume_without_checkpoint_out");
    testing::write_file(out + "/.neuralsim-run.json", "{\"app\": \"distill-mpc\"}\n");
    testing::write_file(out + "/dataset.h5", "the interrupted run's dataset");
    const auto r = testing::run_command(distill_app_cmd("--resume --out " + out + mode));
    EXPECT_EQ(r.exit_code, 3) << r.err;
    testing::expect_contains(r.err, {out + "/checkpoint.json", "no checkpoint to resume from"});
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(testing::read_text(out + "/dataset.h5"), "the interrupted run's dataset");
    EXPECT_FALSE(std::filesystem::exists(out + "/summary.json"));
    // Nothing there at all: nothing created.
    const std::string empty = dir + "/never";
    EXPECT_EQ(testing::run_command(distill_app_cmd("--resume --out " + empty + mode)).exit_code, 3);
    EXPECT_FALSE(std::filesystem::exists(empty));
  }
}

TEST(DistillMpcApp, BadInputGetsOneLineAndItsExitCode) {
  const std::string dir = testing::fresh_dir("distill_bad");
  struct Case {
    std::string args;
    int code;
    std::vector<std::string> parts;
  };
  // A weights file whose network does not match the controller's input size.
  NamedNetwork wrong{"mpc_control", nn::Mlp(3, std::vector<nn::Index>{4}, 1, nn::Activation::kTanh), {}, {}, {}};
  write_networks(dir + "/wrong.h5", {wrong});
  // A dataset of the wrong width.
  DistillDataset d;
  d.features = DistillDataset::RowMatrixXd::Ones(5, 3);
  d.targets = DistillDataset::RowMatrixXd::Ones(5, 1);
  d.episode = Eigen::VectorXd::Zero(5);
  d.time = Eigen::VectorXd::Zero(5);
  write_distill_dataset(dir + "/wide.h5", d);
  const std::vector<Case> cases = {
      {"--set linear.control_limits=[5,-5]", 2, {"linear.control_limits", "infeasible"}},
      {"--set linear.control_limits=[1,5]", 2, {"linear.control_limits", "infeasible", "u = 0"}},
      {"--set linear.velocity_limits=0.5", 2, {"linear.velocity_limits", "infeasible"}},
      {"--set linear.dt=nan", 2, {"linear.dt"}},
      {"--set distill.train.learning_rate=-1", 2, {"distill.train.learning_rate"}},
      {"--set distill.network.hidden=[0]", 2, {"distill.network.hidden"}},
      {"--set distill.pushes.duration=[0.1,5]", 2, {"distill.pushes.duration", "window"}},
      {"--set distill.bogus=1", 2, {"distill.bogus"}},
      {"--set distill.data.episodes=100000000", 2, {"distill.data.episodes", "12100000000", "max_samples"}},
      {"--set distill.evaluate.weights=" + dir + "/wrong.h5", 3, {"wrong.h5", "expected 2 inputs, got 3"}},
      {"--set distill.data.file=" + dir + "/wide.h5", 3, {"wide.h5:/features", "expected 2 columns", "got 3"}},
      {"--set distill.data.file=" + dir + "/missing.h5", 3, {"missing.h5", "does not exist"}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string out = dir + "/out" + std::to_string(i);
    const auto r = testing::run_command(distill_app_cmd(c.args + " --out " + out));
    SCOPED_TRACE(c.args);
    EXPECT_EQ(r.exit_code, c.code) << r.err;
    testing::expect_contains(r.err, c.parts);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out + "/summary.json"));
  }
}

// The quadruped (the shared Laikago model): refused before anything is simulated.
TEST(DistillMpcApp, QuadrupedBadInputGetsOneLineAndItsExitCode) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago");
  const std::string dir = testing::fresh_dir("distill_bad_quadruped");
  struct Case {
    std::string args;
    int code;
    std::vector<std::string> parts;
  };
  NamedNetwork small{"mpc_forces", nn::Mlp(7, std::vector<nn::Index>{}, 12, nn::Activation::kTanh), {}, {}, {}};
  write_networks(dir + "/small.h5", {small});
  const std::string laikago = testing::app_path("distill-mpc") + " --config configs/distill_laikago.yaml -q ";
  const std::vector<Case> quadruped = {
      {"--set controls.mpc.fz_max=50", 2, {"controls.mpc.fz_max", "infeasible", "m g"}},
      {"--set controls.mpc.friction=0", 2, {"controls.mpc.friction"}},
      {"--set controls.feet=[a,b,c,d]", 2, {"controls.feet.0", "no frame named 'a'"}},
      {"--set model.floating_base=false", 2, {"controls.type", "floating base"}},
      {"--set distill.evaluate.weights=" + dir + "/small.h5", 3, {"small.h5", "expected 65 inputs, got 7"}},
      {"--set distill.data.episodes=1000000", 2, {"distill.data.episodes", "max_samples"}},
  };
  for (size_t i = 0; i < quadruped.size(); ++i) {
    const Case& c = quadruped[i];
    const std::string out = dir + "/quadruped" + std::to_string(i);
    const auto r = testing::run_command(laikago + c.args + " --out " + out);
    SCOPED_TRACE(c.args);
    EXPECT_EQ(r.exit_code, c.code) << r.err;
    testing::expect_contains(r.err, c.parts);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out + "/summary.json"));
  }
}

// The MJCF example (#35): the Laikago read from MuJoCo's MJCF, its toes
// named by sites, runs the MPC and distills it (a short run: the MPC keeps
// the robot up; the network's quality is not the point here).
TEST(DistillMpcApp, RunsOnTheMjcfLaikago) {
  NEURALSIM_SKIP_WITHOUT_SHARED("models/laikago");
  const std::string out = testing::fresh_dir("distill_mjcf");
  const auto r = testing::run_command(
      testing::app_path("distill-mpc") +
      " --config configs/distill_laikago_mjcf.yaml -q --set distill.data.episodes=2 --set distill.data.duration=1.0"
      " --set distill.train.epochs=2 --set distill.evaluate.episodes=1 --set distill.evaluate.duration=1.0 --out " +
      out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = testing::read_json(out + "/summary.json");
  EXPECT_EQ(s["metrics"]["data_episodes_failed"].get<int>(), 0);
  EXPECT_EQ(s["metrics"]["evaluation"]["mpc"]["survived"].get<int>(), 1);
  EXPECT_LT(s["metrics"]["evaluation"]["mpc"]["mean_height_rmse"].get<double>(), 0.01);
}

}  // namespace neuralsim
