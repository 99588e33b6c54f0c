// End-to-end tests of the `discover` CLI against what generated the data:
// on the double pendulum with unmodeled joint friction (experiment 1) each
// joint's residual torque is attributed to that joint's velocity and
// nothing else (the other joint's velocity, positions, controls and a noise
// distractor stay out); its augment.yaml trains in train-augment; on data
// from the analytical model itself (experiment 3) nothing is selected;
// results are identical at any thread count, and --resume after Ctrl-C or
// SIGKILL reproduces the uninterrupted discovery.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <utility>

#include "support/files.hpp"
#include "support/run_command.hpp"

namespace neuralsim {
namespace {

using testing::fresh_dir;
using testing::read_json;
using testing::read_text;
using testing::run_command;

// A short run of a shipped config: one repetition, a path of 6 points.
std::string discover_cmd(const std::string& config, const std::string& extra = "") {
  return testing::app_path("discover") + " --config " + testing::source_path("configs/discover/" + config) +
         " -q --set output.plot=false --set discover.stability.seeds=1 --set discover.stability.bootstrap=0"
         " --set discover.retrain.epochs=0 --set discover.penalty.points=6 --set discover.epochs.dense=30"
         " --set discover.epochs.per_point=10 --set discover.epochs.refit=15 " +
         extra;
}

std::set<std::string> selected_inputs(const std::string& out) {
  const auto summary = read_json(out + "/summary.json");
  std::set<std::string> s;
  for (const auto& v : summary["metrics"]["selected_inputs"]) s.insert(v.get<std::string>());
  return s;
}

TEST(DiscoverApp, AttributesEachJointsFrictionToItsOwnVelocity) {
  const std::string out = fresh_dir("discover_friction");
  const auto r = run_command(discover_cmd("double_pendulum_friction.yaml", "--seed 1 --out " + out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json(out + "/summary.json")["metrics"];
  EXPECT_TRUE(m["explained_by_candidates"].get<bool>()) << m["verdict"];
  EXPECT_GT(m["explained_fraction"].get<double>(), 0.9);
  EXPECT_EQ(selected_inputs(out), (std::set<std::string>{"joint_joint1_torque <- joint.joint1.qd",
                                                         "joint_joint2_torque <- joint.joint2.qd"}))
      << m["verdict"];
  // Ranked by importance, the two velocities come first: removing either
  // costs more than removing any other group.
  const auto groups = read_json(out + "/discovery.json")["groups"];
  double weakest_true = 1e300, strongest_other = 0;
  for (const auto& g : groups) {
    if (g["group"] != "input") continue;
    const double v = g["validation_loss_increase_when_removed"].get<double>();
    const std::string label = g["label"].get<std::string>();
    const bool own = label == "joint.joint1.torque <- joint.joint1.qd" || label == "joint.joint2.torque <- joint.joint2.qd";
    if (own) weakest_true = std::min(weakest_true, v);
    else strongest_other = std::max(strongest_other, v);
    if (label.find("noise") != std::string::npos) EXPECT_FALSE(g["selected"].get<bool>());
  }
  EXPECT_GT(weakest_true, 10 * strongest_other);

  // augment.yaml is a train-augment config's augment: section.
  const std::string cfg = out + "/train.yaml";
  testing::write_file(cfg, "model: {generator: double_pendulum, lengths: [1.0, 1.0], masses: [1.5, 0.8]}\n"
                           "sim: {integrator: rk4, dt: 0.01, substeps: 5}\n"
                           "data: {train: " + testing::source_path("datasets/discover_double_pendulum_friction.h5") +
                           ", validation_fraction: 0.25}\n"
                           "train: {window_steps: 5, epochs: 1}\n" + read_text(out + "/augment.yaml"));
  const auto t = run_command(testing::app_path("train-augment") + " -q --config " + cfg + " --out " + out + "/train");
  EXPECT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(read_json(out + "/train/summary.json")["metrics"]["num_network_weights"].get<int>(), 2 * (8 * 2 + 9));
}

TEST(DiscoverApp, SelectsNothingWhenTheAnalyticalModelIsRight) {
  const std::string out = fresh_dir("discover_null");
  const auto r = run_command(discover_cmd("double_pendulum_null.yaml", "--seed 1 --out " + out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json(out + "/summary.json")["metrics"];
  EXPECT_FALSE(m["explained_by_candidates"].get<bool>());
  EXPECT_TRUE(m["selected_sites"].empty());
  EXPECT_NE(m["verdict"].get<std::string>().find("no candidate explains the residual"), std::string::npos);
  EXPECT_NE(read_text(out + "/augment.yaml").find("augment: []"), std::string::npos);
}

// Two repetitions of a path of 3 points: the same discovery at 1 and 2
// threads, and after an interruption and --resume.
TEST(DiscoverApp, ThreadsAndResumeGiveTheSameDiscovery) {
  const std::string cmd = discover_cmd("double_pendulum_friction.yaml",
                                       "--seed 3 --set discover.stability.seeds=2 --set discover.penalty.points=3 "
                                       "--set discover.epochs.dense=8 --set discover.epochs.per_point=4 "
                                       "--set discover.epochs.refit=4");
  const std::string reference = fresh_dir("discover_reference");
  ASSERT_EQ(run_command(cmd + " --threads 1 --out " + reference).exit_code, 0);
  const std::string expected = read_text(reference + "/discovery.json");
  const std::string two = fresh_dir("discover_two_threads");
  ASSERT_EQ(run_command(cmd + " --threads 2 --out " + two).exit_code, 0);
  EXPECT_EQ(read_text(two + "/discovery.json"), expected);

  const double seconds = read_json(reference + "/summary.json")["timings"]["path_s"].get<double>();
  int resumed = 0;
  for (const auto& [fraction, signal] : {std::pair<double, const char*>{0.35, "INT"}, {0.75, "KILL"}}) {
    const std::string out = fresh_dir(std::string("discover_resume_") + signal);
    const std::string delay = std::to_string(0.2 + fraction * seconds);
    const auto stopped = run_command("timeout --preserve-status -s " + std::string(signal) + " " + delay + " " + cmd +
                                     " --threads 1 --out " + out);
    SCOPED_TRACE(std::string(signal) + " after " + delay + " s (exit " + std::to_string(stopped.exit_code) + ")");
    if (stopped.exit_code == 0) continue;
    if (std::string(signal) == "INT") {
      ASSERT_EQ(stopped.exit_code, 130) << stopped.err;
      EXPECT_EQ(read_json(out + "/summary.json")["status"], "interrupted");
    }
    const bool has_checkpoint = std::filesystem::exists(out + "/checkpoint.json");
    const auto again = run_command(cmd + " --threads 1" + (has_checkpoint ? " --resume" : " --force") + " --out " + out);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(read_text(out + "/discovery.json"), expected);
    resumed += has_checkpoint;
  }
  EXPECT_GT(resumed, 0) << "no run was stopped after its first checkpoint";
}

}  // namespace
}  // namespace neuralsim
