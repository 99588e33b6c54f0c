// End-to-end tests of the `discover` CLI against what generated the data:
// on the double pendulum with unmodeled joint friction (experiment 1) each
// joint's residual torque is attributed to that joint's velocity and
// nothing else (the other joint's velocity, positions, controls and a noise
// distractor stay out); its augment.yaml trains in train-augment; on data
// from the analytical model itself (experiment 3) nothing is selected;
// results are identical at any thread count, and --resume after Ctrl-C or
// SIGKILL reproduces the uninterrupted discovery.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <utility>

#include "common/html_report.hpp"
#include "support/files.hpp"
#include "support/html_check.hpp"
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
  // One thread: ctest runs suites side by side on the 2 cores. A shorter
  // path at a larger step than experiment 1's (half the time; seeds 1-3
  // select the same two inputs).
  const auto r = run_command(discover_cmd("double_pendulum_friction.yaml",
                                          "--seed 1 --threads 1 --set train.learning_rate=0.03 "
                                          "--set discover.penalty.points=5 --set discover.epochs.dense=15 "
                                          "--set discover.epochs.per_point=6 --set discover.epochs.refit=8 --out " + out));
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
  // report.html: self-contained; every group in the table, the two
  // selected inputs listed, the path's two losses charted.
  const std::string doc = read_text(out + "/report.html");
  EXPECT_EQ(testing::html_report_violation(doc), "");
  for (const auto& g : groups) EXPECT_NE(doc.find(html_escape(g["label"].get<std::string>())), std::string::npos) << g;
  EXPECT_NE(doc.find("<li>joint_joint1_torque &lt;- joint.joint1.qd</li>"), std::string::npos);
  EXPECT_EQ(testing::html_count(testing::html_section(doc, "Regularization path (repetition 0)"), "<polyline"), 2u);

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
  // Shorter than experiment 1's run: with nothing to find, nothing is found sooner.
  const auto r = run_command(discover_cmd("double_pendulum_null.yaml",
                                          "--seed 1 --threads 1 --set discover.penalty.points=4 --set discover.epochs.dense=20 "
                                          "--set discover.epochs.per_point=6 --set discover.epochs.refit=8 "
                                          "--set train.train_samples=150 --out " + out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json(out + "/summary.json")["metrics"];
  EXPECT_FALSE(m["explained_by_candidates"].get<bool>());
  EXPECT_TRUE(m["selected_sites"].empty());
  EXPECT_NE(m["verdict"].get<std::string>().find("no candidate explains the residual"), std::string::npos);
  EXPECT_NE(read_text(out + "/augment.yaml").find("augment: []"), std::string::npos);
}

// Contact sites (force-level contact): a box sliding on the ground with more
// friction (μ = 0.5) than its model has (0.3); the friction-coefficient site
// of the contacts, reading the contact's quantities (and a noise
// distractor), explains it.
TEST(DiscoverApp, ContactSitesExplainAMissingFriction) {
  const std::string dir = fresh_dir("discover_contact");
  const std::string box =
      "model:\n  name: box\n  bodies:\n    - name: box\n      joint: {name: box_free, type: free}\n"
      "      mass: 1.0\n      inertia: [0.004167, 0.004167, 0.006667]\n"
      "      geometry:\n        - {name: box_shape, type: box, size: [0.2, 0.2, 0.1]}\n"
      "";
  const std::string sim = "sim: {integrator: semi_implicit_euler, dt: 0.001, duration: 0.2}\n";
  const std::string contact = "contact:\n  model: hunt_crossley\n  ground: {height: 0}\n"
                              "  parameters: {stiffness: 1.0e6, damping: 3.0e5, exponent: 1.5, friction: FRICTION, "
                              "friction_velocity: 0.01}\n  friction_model: coulomb\n";
  auto with_friction = [&](const char* mu) {
    std::string c = contact;
    c.replace(c.find("FRICTION"), 8, mu);
    return c;
  };
  testing::write_file(dir + "/truth.yaml",
                      box + with_friction("0.5") +
                          "initial_states:\n  list:\n"
                          "    - {q: [0, 0, 0.049818, 0, 0, 0, 1], qd: [0, 0, 0, 2.0, 0, 0]}\n"
                          "    - {q: [0, 0, 0.049818, 0, 0, 0, 1], qd: [0, 0, 0, 1.5, 0.5, 0]}\n"
                          "    - {q: [0, 0, 0.049818, 0, 0, 0, 1], qd: [0, 0, 0, -1.0, 1.5, 0]}\n"
                          "    - {q: [0, 0, 0.049818, 0, 0, 0, 1], qd: [0, 0, 0, 0.5, -2.0, 0]}\n"
                          "controls: {type: zero}\n" + sim);
  ASSERT_EQ(run_command(testing::app_path("rollout") + " -q --config " + dir + "/truth.yaml --out " + dir + "/truth")
                .exit_code,
            0);
  testing::write_file(dir + "/discover.yaml",
                      box + sim + with_friction("0.3") + "data: {train: truth/trajectories.h5, validation_fraction: 0.25}\n"
                      "train: {window_steps: 5, window_stride: 10, batch_size: 8, learning_rate: 0.001, "
                      "controls: none, validation_steps: 50}\n"
                      "discover:\n  sites: [contact.friction_coefficient]\n"
                      "  inputs: [contact.sliding_velocity, contact.depth, noise.0]\n"
                      "  network: {hidden: [4], output_scale: 0.1}\n"
                      "  penalty: {points: 3}\n  epochs: {dense: 40, per_point: 8, refit: 8}\n");
  const auto r = run_command(testing::app_path("discover") + " -q --set output.plot=false --seed 1 --config " + dir +
                             "/discover.yaml --out " + dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json(dir + "/out/summary.json")["metrics"];
  EXPECT_TRUE(m["explained_by_candidates"].get<bool>()) << m["verdict"];
  EXPECT_LT(m["validation_loss"]["chosen"].get<double>(), 0.5 * m["validation_loss"]["analytical"].get<double>());
  EXPECT_EQ(m["selected_sites"], nlohmann::json::array({"contact_friction_coefficient"}));
  for (const auto& in : m["selected_inputs"]) EXPECT_EQ(in.get<std::string>().find("noise"), std::string::npos);

  // Held-out test recordings (other initial velocities), scored once with the
  // retrained pruned model and the reference rows; the analytical model
  // predicts them better than "no motion" (the box slides). (How much the
  // retrain improves on the analytical model is not asserted: on this
  // example it does not, docs/discover.md.)
  testing::write_file(dir + "/truth_test.yaml",
                      box + with_friction("0.5") +
                          "initial_states:\n  list:\n"
                          "    - {q: [0, 0, 0.049818, 0, 0, 0, 1], qd: [0, 0, 0, 1.0, 1.0, 0]}\n"
                          "    - {q: [0, 0, 0.049818, 0, 0, 0, 1], qd: [0, 0, 0, -1.8, -0.4, 0]}\n"
                          "controls: {type: zero}\n" + sim);
  ASSERT_EQ(run_command(testing::app_path("rollout") + " -q --config " + dir + "/truth_test.yaml --out " + dir +
                        "/truth_test")
                .exit_code,
            0);
  const std::string with_test = testing::app_path("discover") + " -q --set output.plot=false --seed 1 --config " + dir +
                                "/discover.yaml --set data.test=" + dir + "/truth_test/trajectories.h5";
  const auto t = run_command(with_test + " --set discover.retrain.epochs=20 --out " + dir + "/out_test");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const auto mt = read_json(dir + "/out_test/summary.json")["metrics"];
  EXPECT_EQ(mt["num_test_trajectories"].get<int>(), 2);
  ASSERT_TRUE(mt.contains("test")) << mt.dump();
  const double model = mt["test"]["mean_rmse_q"].get<double>();
  const double analytical = mt["test"]["reference"]["analytical_model"]["mean_rmse_q"].get<double>();
  const double no_motion = mt["test"]["reference"]["no_motion"]["mean_rmse_q"].get<double>();
  EXPECT_TRUE(std::isfinite(model));
  EXPECT_LT(analytical, 0.5 * no_motion);
  EXPECT_EQ(mt["num_train_trajectories"].get<int>() + mt["num_validation_trajectories"].get<int>(), 4);
  EXPECT_EQ(mt["test"]["per_trajectory"].size(), 2u);
  // Without a retrain nothing would score the selected model on them: refused.
  const auto refused = run_command(with_test + " --out " + dir + "/out_refused");
  EXPECT_EQ(refused.exit_code, 2);
  testing::expect_contains(refused.err, {"data.test", "discover.retrain.epochs > 0"});
}

// Two repetitions of a path of 3 points: the same discovery at 1 and 2
// threads, and after an interruption and --resume.
TEST(DiscoverApp, ThreadsAndResumeGiveTheSameDiscovery) {
  const std::string cmd = discover_cmd("double_pendulum_friction.yaml",
                                       "--seed 3 --set discover.stability.seeds=2 --set discover.penalty.points=3 "
                                       "--set discover.epochs.dense=8 --set discover.epochs.per_point=4 "
                                       "--set discover.epochs.refit=4 --set train.train_samples=100");
  const std::string reference = fresh_dir("discover_reference");
  ASSERT_EQ(run_command(cmd + " --threads 1 --out " + reference).exit_code, 0);
  const std::string expected = read_text(reference + "/discovery.json");
  // The interrupted and resumed runs use 2 threads: the same bits as the
  // reference's 1 thread checks both properties at once.
  const double seconds = read_json(reference + "/summary.json")["timings"]["path_s"].get<double>();
  int resumed = 0;
  for (const auto& [fraction, signal] : {std::pair<double, const char*>{0.35, "INT"}, {0.75, "KILL"}}) {
    const std::string out = fresh_dir(std::string("discover_resume_") + signal);
    const std::string delay = std::to_string(0.2 + fraction * seconds);
    const auto stopped = run_command("timeout --preserve-status -s " + std::string(signal) + " " + delay + " " + cmd +
                                     " --threads 2 --out " + out);
    SCOPED_TRACE(std::string(signal) + " after " + delay + " s (exit " + std::to_string(stopped.exit_code) + ")");
    if (stopped.exit_code == 0) continue;
    if (std::string(signal) == "INT") {
      ASSERT_EQ(stopped.exit_code, 130) << stopped.err;
      EXPECT_EQ(read_json(out + "/summary.json")["status"], "interrupted");
    }
    const bool has_checkpoint = std::filesystem::exists(out + "/checkpoint.json");
    const auto again = run_command(cmd + " --threads 2" + (has_checkpoint ? " --resume" : " --force") + " --out " + out);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(read_text(out + "/discovery.json"), expected);
    resumed += has_checkpoint;
  }
  EXPECT_GT(resumed, 0) << "no run was stopped after its first checkpoint";
}

}  // namespace
}  // namespace neuralsim
