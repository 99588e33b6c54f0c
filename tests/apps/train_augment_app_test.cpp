// End-to-end tests of the `train-augment` CLI: it learns a known residual
// (a pendulum's unmodeled viscous damping) through the dynamics, the trained
// weights replay in `rollout`, results are identical at any thread count,
// --resume after SIGINT or SIGKILL gives the uninterrupted weights, the
// baselines train, and bad input gets its documented exit code with the
// best weights kept.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/network_file.hpp"
#include "support/files.hpp"
#include "support/html_check.hpp"
#include "support/run_command.hpp"

namespace neuralsim {
namespace {

using testing::fresh_dir;
using testing::read_json;
using testing::run_command;

constexpr double kDamping = 0.3;  // configs/train/pendulum_damping_truth.yaml

// The recordings, generated once per test binary run by our own engine.
const std::string& truth_file() {
  static const std::string file = [] {
    const std::string out = fresh_dir("train_truth");
    const auto r = run_command(testing::app_path("rollout") +
                               " --config configs/train/pendulum_damping_truth.yaml -q --seed 1 --out " + out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return out + "/trajectories.h5";
  }();
  return file;
}

std::string train_cmd(const std::string& extra = "") {
  return testing::app_path("train-augment") + " --config configs/train/pendulum_damping.yaml -q --set data.train=" +
         truth_file() + " --set output.plot=false " + extra;
}

// The shipped MJCF example (issue #35): the pendulum read from
// configs/models/pendulum.xml (sim.dt and the integrator from its <option>)
// trains on the same recordings.
TEST(TrainAugmentApp, MjcfExampleConfigTrains) {
  const std::string out = fresh_dir("train_mjcf");
  const auto r = run_command(testing::app_path("train-augment") +
                             " --config configs/train/pendulum_damping_mjcf.yaml -q --set data.train=" + truth_file() +
                             " --set output.plot=false --set train.epochs=3 --seed 1 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(testing::read_json(out + "/summary.json")["status"], "ok");
}

// Network parameters of a weights file, in order.
std::vector<double> weights_of(const std::string& file, const std::string& name = "damping") {
  const NamedNetwork net = read_network(file, name);
  return std::vector<double>(net.network.parameters(), net.network.parameters() + net.network.num_parameters());
}

std::vector<double> train_losses(const std::string& out) {
  std::ifstream in(out + "/loss.csv");
  std::string line;
  std::getline(in, line);
  std::vector<double> v;
  while (std::getline(in, line)) v.push_back(std::stod(line.substr(line.find(',', line.find(',') + 1) + 1)));
  return v;
}

TEST(TrainAugmentApp, LearnsUnmodeledDampingAndTheWeightsReplayInRollout) {
  const std::string out = fresh_dir("train_damping");
  // The shipped config's 100 epochs: the network starts at zero and reads q̇
  // normalized by the data (#38); from there 60 epochs leave the learned
  // torque 6.6 % off -b·q̇ (validation loss 6.1e-7), 100 reach 9.7e-8.
  const auto r = run_command(train_cmd("--seed 2 --out " + out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = read_json(out + "/summary.json");
  EXPECT_EQ(s["status"], "ok");
  const auto& m = s["metrics"];
  EXPECT_EQ(m["model"], "hybrid");
  EXPECT_EQ(m["num_parameters"].get<int>(), 49);  // 1 → 16 → 1
  EXPECT_LT(m["best_validation_loss"].get<double>(), 1e-2 * m["initial_validation_loss"].get<double>());
  for (const char* f : {"weights.h5", "loss.csv", "checkpoint.json", "predictions.h5"})
    EXPECT_TRUE(std::filesystem::exists(out + "/" + f)) << f;
  // report.html: self-contained; the loss chart (training and validation)
  // and the free-rollout errors with the reference rows.
  const std::string doc = testing::read_text(out + "/report.html");
  EXPECT_EQ(testing::html_report_violation(doc), "");
  EXPECT_EQ(testing::html_count(testing::html_section(doc, "Loss"), "<polyline"), 2u);
  const std::string rollouts = testing::html_section(doc, "Free-rollout errors");
  for (const char* row : {"<td>trained model</td>", "<td>analytical model</td>", "<td>no motion</td>"})
    EXPECT_NE(rollouts.find(row), std::string::npos) << row;

  // The known residual: the network's torque is −b·q̇ across the data's q̇
  // range (|q̇| ≤ 2 rad/s at the start, a little more under the torque), to 5 %.
  const NamedNetwork net = read_network(out + "/weights.h5", "damping");
  nn::Workspace<double> ws(net.network);
  double worst = 0;
  for (double qd = -2.0; qd <= 2.0001; qd += 0.2) {
    if (std::abs(qd) < 0.5) continue;  // relative error of a torque near zero says little
    double tau = 0;
    net.network.forward(&qd, &tau, ws);
    worst = std::max(worst, std::abs(tau + kDamping * qd) / (kDamping * std::abs(qd)));
  }
  EXPECT_LT(worst, 0.05) << "learned torque differs from -b·q̇ by " << worst * 100 << " %";

  // rollout replays the trained hybrid model: its error is a small part of
  // the analytical model's.
  const std::string cmp = fresh_dir("train_damping_compare"), ana = fresh_dir("train_damping_analytical");
  // rollout knows no train:/data:/evaluate: sections: the replay uses a config without them.
  const std::string cfg = cmp + "/replay.yaml";
  testing::write_file(cfg,
                      "model: {generator: pendulum, length: 1.0, mass: 1.0}\n"
                      "sim: {integrator: rk4, dt: 0.01}\n"
                      "augment:\n"
                      "  - {name: damping, site: joint.joint1.torque, inputs: [joint.joint1.qd], hidden: [16]}\n");
  const auto hybrid = run_command(testing::app_path("rollout") + " --config " + cfg + " -q --compare " + truth_file() +
                                  " --weights " + out + "/weights.h5 --force --out " + cmp + "/hybrid");
  ASSERT_EQ(hybrid.exit_code, 0) << hybrid.err;
  testing::write_file(ana + "/analytical.yaml",
                      "model: {generator: pendulum, length: 1.0, mass: 1.0}\nsim: {integrator: rk4, dt: 0.01}\n");
  const auto analytical = run_command(testing::app_path("rollout") + " --config " + ana + "/analytical.yaml -q --compare " +
                                      truth_file() + " --out " + ana + "/run");
  ASSERT_EQ(analytical.exit_code, 0) << analytical.err;
  const double e_hybrid = read_json(cmp + "/hybrid/summary.json")["metrics"]["mean_rmse_q"].get<double>();
  const double e_analytical = read_json(ana + "/run/summary.json")["metrics"]["mean_rmse_q"].get<double>();
  EXPECT_LT(e_hybrid, 0.1 * e_analytical) << "hybrid " << e_hybrid << ", analytical " << e_analytical;
  // The replay config train-augment wrote replays the same model with no other input (#38).
  const auto as_is = run_command(testing::app_path("rollout") + " --config " + out + "/replay.yaml -q --compare " +
                                 truth_file() + " --out " + cmp + "/as_is");
  ASSERT_EQ(as_is.exit_code, 0) << as_is.err;
  const auto as_is_metrics = read_json(cmp + "/as_is/summary.json")["metrics"];
  EXPECT_EQ(as_is_metrics["mean_rmse_q"].get<double>(), e_hybrid);
  EXPECT_EQ(as_is_metrics["trained_model"], "hybrid");
  // Changing the trained network's output scale is refused, naming the key (exit 2).
  const auto rescaled = run_command(testing::app_path("rollout") + " --config " + out + "/replay.yaml -q --compare " +
                                    truth_file() + " --set augment.0.output_scale=0.5 --out " + cmp + "/rescaled");
  EXPECT_EQ(rescaled.exit_code, 2) << rescaled.err;
  testing::expect_contains(rescaled.err, {"augment.0.output_scale", "replayed as trained"});
  // A weights file whose network has another shape is bad data (exit 3).
  testing::write_file(cmp + "/wide.yaml",
                      "model: {generator: pendulum, length: 1.0, mass: 1.0}\nsim: {integrator: rk4, dt: 0.01}\n"
                      "augment:\n"
                      "  - {name: damping, site: joint.joint1.torque, inputs: [joint.joint1.qd], hidden: [8]}\n");
  const auto wrong = run_command(testing::app_path("rollout") + " --config " + cmp + "/wide.yaml -q --compare " +
                                 truth_file() + " --weights " + out + "/weights.h5 --out " + cmp + "/wrong");
  EXPECT_EQ(wrong.exit_code, 3) << wrong.err;
  testing::expect_contains(wrong.err, {"weights.h5", "/networks/damping", "expected", "got"});
}

// Physical parameters train through the same gradients (params.json, in
// simid's format): the damping that generated the data is recovered, and a
// bound that excludes it is respected (projected Adam).
TEST(TrainAugmentApp, TrainsPhysicalParametersWithinTheirBounds) {
  const std::string sets = " --set augment=[] --set train.epochs=60 --set train.schedule.type=cosine --set train.schedule.final_fraction=0.01";
  const std::string free_fit = fresh_dir("train_physical");
  auto r = run_command(train_cmd(sets + " --set 'train.physical=[{name: joint.joint1.damping, initial: 0.05, "
                                        "bounds: [0, 5]}]' --out " + free_fit));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto p = read_json(free_fit + "/params.json");
  EXPECT_NEAR(p["parameters"]["joint.joint1.damping"]["value"].get<double>(), kDamping, 1e-6);
  EXPECT_EQ(read_json(free_fit + "/summary.json")["metrics"]["num_physical_parameters"], 1);

  const std::string bounded = fresh_dir("train_physical_bounded");
  r = run_command(train_cmd(sets + " --set 'train.physical=[{name: joint.joint1.damping, initial: 0.05, "
                                   "bounds: [0, 0.2]}]' --out " + bounded));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_json(bounded + "/params.json")["parameters"]["joint.joint1.damping"]["value"].get<double>(), 0.2);

  // L-BFGS cannot honour bounds: refused as a config error naming the key.
  const std::string lbfgs = fresh_dir("train_physical_lbfgs");
  r = run_command(train_cmd(" --set augment=[] --set train.optimizer=lbfgs --set train.batch_size= --set 'train.physical=[{name: "
                            "joint.joint1.damping, initial: 0.05, bounds: [0, 5]}]' --out " + lbfgs + "/run"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  testing::expect_contains(r.err, {"train.optimizer", "bounds"});
}

TEST(TrainAugmentApp, SameWeightsAtAnyThreadCount) {
  const std::string a = fresh_dir("train_t1"), b = fresh_dir("train_t2");
  const std::string cmd = train_cmd("--seed 4 --set train.epochs=8");
  ASSERT_EQ(run_command(cmd + " --threads 1 --out " + a).exit_code, 0);
  ASSERT_EQ(run_command(cmd + " --threads 2 --out " + b).exit_code, 0);
  EXPECT_EQ(weights_of(a + "/weights.h5"), weights_of(b + "/weights.h5"));
  EXPECT_EQ(train_losses(a), train_losses(b));
}

TEST(TrainAugmentApp, ResumeAfterInterruptOrKillGivesTheUninterruptedWeights) {
  const std::string cmd = train_cmd("--seed 6 --threads 1 --set train.epochs=40");
  const std::string reference = fresh_dir("train_resume_reference");
  ASSERT_EQ(run_command(cmd + " --out " + reference).exit_code, 0);
  const std::vector<double> expected = weights_of(reference + "/weights.h5");
  const std::vector<double> expected_losses = train_losses(reference);
  const double seconds = read_json(reference + "/summary.json")["timings"]["train_s"].get<double>();
  int resumed = 0;
  // Ctrl-C early, SIGKILL late (each pair costs two runs).
  for (const auto& [fraction, signal] : {std::pair<double, const char*>{0.3, "INT"}, {0.7, "KILL"}}) {
    const std::string out = fresh_dir(std::string("train_resume_") + signal + std::to_string(fraction));
    const std::string delay = std::to_string(0.15 + fraction * seconds);
    const auto stopped =
        run_command("timeout --preserve-status -s " + std::string(signal) + " " + delay + " " + cmd + " --out " + out);
    SCOPED_TRACE(std::string(signal) + " after " + delay + " s (exit " + std::to_string(stopped.exit_code) + ")");
    if (stopped.exit_code == 0) continue;
    if (std::string(signal) == "INT") {
      ASSERT_EQ(stopped.exit_code, 130) << stopped.err;
      // Ctrl-C keeps the best weights so far.
      EXPECT_TRUE(std::filesystem::exists(out + "/weights.h5"));
      EXPECT_EQ(read_json(out + "/summary.json")["status"], "interrupted");
    }
    const bool has_checkpoint = std::filesystem::exists(out + "/checkpoint.json");
    const auto again = run_command(cmd + (has_checkpoint ? " --resume" : " --force") + " --out " + out);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(weights_of(out + "/weights.h5"), expected);
    EXPECT_EQ(train_losses(out), expected_losses);
    resumed += has_checkpoint;
  }
  EXPECT_GT(resumed, 0) << "no run was stopped after its first checkpoint";
}

TEST(TrainAugmentApp, BaselinesTrainOnTheSameData) {
  for (const char* model : {"mlp", "lstm"}) {
    const std::string out = fresh_dir(std::string("train_baseline_") + model);
    const auto r = run_command(train_cmd(std::string("--set train.model=") + model +
                                         " --set train.baseline.parameters=60 --set train.epochs=30 --out " + out));
    ASSERT_EQ(r.exit_code, 0) << model << ": " << r.err;
    const auto m = read_json(out + "/summary.json")["metrics"];
    EXPECT_EQ(m["model"], model);
    EXPECT_NEAR(m["num_parameters"].get<double>(), 60, 30) << model;
    EXPECT_LT(m["best_validation_loss"].get<double>(), m["initial_validation_loss"].get<double>()) << model;
    EXPECT_TRUE(std::filesystem::exists(out + (std::string(model) == "mlp" ? "/weights.h5" : "/lstm.json")));
    // Scored on recordings by the same command as a hybrid (#38).
    const auto replay = run_command(testing::app_path("rollout") + " --config " + out + "/replay.yaml -q --compare " +
                                    truth_file() + " --out " + out + "/replay");
    ASSERT_EQ(replay.exit_code, 0) << model << ": " << replay.err;
    const auto rm = read_json(out + "/replay/summary.json")["metrics"];
    EXPECT_EQ(rm["trained_model"], std::string(model) + "-delta");
    EXPECT_TRUE(std::isfinite(rm["mean_rmse_q"].get<double>()));
  }
}

TEST(TrainAugmentApp, BadInputGetsItsExitCodeAndKeepsTheBestWeights) {
  struct Case {
    std::string label, sets;
    int exit_code;
    std::vector<std::string> message;
  };
  const std::vector<Case> cases = {
      {"unknown site", "--set augment.0.site=joint.elbow.torque", 2, {"augment.0.site", "elbow"}},
      {"unknown input", "--set augment.0.inputs=[joint.joint1.qdd]", 2, {"augment.0.inputs", "qdd"}},
      {"unknown mode", "--set train.mode=teacher", 2, {"train.mode", "one_step"}},
      {"infinite learning rate", "--set train.learning_rate=.inf", 2, {"train.learning_rate"}},
      {"window longer than the samples", "--set train.train_samples=10 --set train.window_steps=20", 2,
       {"train.train_samples"}},
      {"baseline options on a hybrid", "--set train.baseline.hidden=[4]", 2, {"train.baseline"}},
      {"weights of the wrong shape", "--set augment.0.hidden=[8] --set augment.0.weights=WEIGHTS", 3,
       {"/networks/damping", "expected", "got"}},
      // A held-out set that is the training file (issue #38).
      {"test split overlapping training", "--set data.test=TRUTH", 2, {"data.test", "overlaps data.train"}},
      {"fractions leaving no training data", "--set data.test_fraction=0.75", 2,
       {"data.test_fraction", "no training trajectory"}},
      // Interpolated controls: the integration step must divide the data interval.
      {"step not dividing the data interval", "--set sim.controls.interpolation=cubic --set sim.dt=0.003", 2,
       {"sim.dt", "must divide the data's sample interval", "0.01 s"}},
  };
  // A trained weights file for the wrong-shape case.
  const std::string trained = fresh_dir("train_bad_weights");
  ASSERT_EQ(run_command(train_cmd("--set train.epochs=2 --out " + trained)).exit_code, 0);
  for (Case c : cases) {
    const std::string out = fresh_dir("train_bad");
    std::string sets = c.sets;
    if (const auto p = sets.find("WEIGHTS"); p != std::string::npos) sets.replace(p, 7, trained + "/weights.h5");
    if (const auto p = sets.find("TRUTH"); p != std::string::npos) sets.replace(p, 5, truth_file());
    const auto r = run_command(train_cmd(sets + " --out " + out + "/run"));
    EXPECT_EQ(r.exit_code, c.exit_code) << c.label << ": " << r.err;
    testing::expect_contains(r.err, c.message);
    EXPECT_FALSE(std::filesystem::exists(out + "/run")) << c.label << ": a bad input must leave --out untouched";
  }

  // Data without controls where the model replays them: exit 3 naming the
  // dataset, unless the config says the system is passive.
  const std::string dir = fresh_dir("train_no_tau");
  TrajectorySet set = read_trajectories(truth_file());
  for (Trajectory& t : set.trajectories) t.tau.resize(0, 0);
  write_trajectories(dir + "/no_tau.h5", set);
  const auto no_tau = run_command(train_cmd("--set data.train=" + dir + "/no_tau.h5 --out " + dir + "/a"));
  EXPECT_EQ(no_tau.exit_code, 3) << no_tau.err;
  testing::expect_contains(no_tau.err, {"no_tau.h5", "/tau", "train.controls: none"});
  EXPECT_EQ(run_command(train_cmd("--set data.train=" + dir + "/no_tau.h5 --set train.controls=none "
                                  "--set train.epochs=2 --out " + dir + "/b"))
                .exit_code,
            0);

  // A loss that overflows: exit 4, and the best weights so far are written.
  const std::string nan = fresh_dir("train_nan");
  const auto diverged = run_command(train_cmd("--set augment.0.output_scale=1e300 --out " + nan));
  EXPECT_EQ(diverged.exit_code, 4) << diverged.err;
  EXPECT_TRUE(std::filesystem::exists(nan + "/weights.h5"));
  EXPECT_EQ(read_json(nan + "/summary.json")["status"], "diverged");

  // A checkpoint is input too: corrupt → 3; written by another config → 2.
  const std::string ck = fresh_dir("train_checkpoint");
  ASSERT_EQ(run_command(train_cmd("--set train.epochs=3 --out " + ck)).exit_code, 0);
  const auto other = run_command(train_cmd("--set train.epochs=3 --set train.learning_rate=0.02 --resume --out " + ck));
  EXPECT_EQ(other.exit_code, 2) << other.err;
  testing::expect_contains(other.err, {"checkpoint.json", "train"});
  std::string text = testing::read_text(ck + "/checkpoint.json");
  text.replace(text.find("\"x\""), 3, "\"y\"");
  testing::write_file(ck + "/checkpoint.json", text);
  const auto corrupt = run_command(train_cmd("--set train.epochs=3 --resume --out " + ck));
  EXPECT_EQ(corrupt.exit_code, 3) << corrupt.err;
  testing::expect_contains(corrupt.err, {"checkpoint.json", "x"});
}

// Honest splits (issue #38): data.test is evaluated once with the selected
// weights and reported as metrics.test, beside two reference rows per
// held-out split; it changes nothing in the training.
TEST(TrainAugmentApp, TestSplitIsHeldOutAndReportedWithReferenceRows) {
  // Held-out recordings of the same system from other initial states.
  const std::string held = fresh_dir("train_test_split_data");
  ASSERT_EQ(run_command(testing::app_path("rollout") + " --config configs/train/pendulum_damping_truth.yaml -q "
                        "--seed 7 --set initial_states.count=3 --out " + held)
                .exit_code,
            0);
  const std::string test_file = held + "/trajectories.h5";
  const std::string without = fresh_dir("train_without_test"), with = fresh_dir("train_with_test");
  const std::string cmd = train_cmd("--seed 4 --set train.epochs=8");
  ASSERT_EQ(run_command(cmd + " --out " + without).exit_code, 0);
  const auto r = run_command(cmd + " --set data.test=" + test_file + " --out " + with);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Not used for training, early stopping or selection: the same weights and losses.
  EXPECT_EQ(weights_of(without + "/weights.h5"), weights_of(with + "/weights.h5"));
  EXPECT_EQ(train_losses(without), train_losses(with));
  const auto m = read_json(with + "/summary.json")["metrics"];
  EXPECT_FALSE(read_json(without + "/summary.json")["metrics"].contains("test"));
  EXPECT_EQ(m["num_test_trajectories"].get<int>(), 3);
  ASSERT_TRUE(m.contains("test")) << m.dump();
  const auto& test = m["test"];
  EXPECT_EQ(test["per_trajectory"].size(), 3u);
  for (const char* key : {"mean_rmse_q", "mean_rmse_qd", "mean_rmse_q_by_horizon", "per_trajectory"})
    EXPECT_TRUE(test.contains(key)) << key;

  // metrics.test is the trained model's error on the test file, as rollout
  // --compare computes it independently with the written weights.
  const std::string cmp = fresh_dir("train_test_split_compare");
  const auto replay = run_command(testing::app_path("rollout") + " --config " + with + "/replay.yaml -q --compare " +
                                  test_file + " --out " + cmp + "/trained");
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  const auto trained = read_json(cmp + "/trained/summary.json")["metrics"];
  const double e_test = test["mean_rmse_q"].get<double>();
  EXPECT_NEAR(trained["mean_rmse_q"].get<double>(), e_test, 1e-9 * e_test);

  // The analytical-model reference is a compare run of the config's model
  // without networks (the same replay).
  testing::write_file(cmp + "/analytical.yaml",
                      "model: {generator: pendulum, length: 1.0, mass: 1.0}\nsim: {integrator: rk4, dt: 0.01}\n");
  const auto analytical = run_command(testing::app_path("rollout") + " --config " + cmp + "/analytical.yaml -q --compare " +
                                      test_file + " --out " + cmp + "/analytical");
  ASSERT_EQ(analytical.exit_code, 0) << analytical.err;
  const auto a = read_json(cmp + "/analytical/summary.json")["metrics"];
  const auto& ref = test["reference"];
  EXPECT_DOUBLE_EQ(ref["analytical_model"]["mean_rmse_q"].get<double>(), a["mean_rmse_q"].get<double>());
  EXPECT_DOUBLE_EQ(ref["analytical_model"]["mean_rmse_qd"].get<double>(), a["mean_rmse_qd"].get<double>());

  // The no-motion reference in closed form: q held at q_0, so the RMSE is
  // the RMS of q_k − q_0 (over all samples, and over the first N for a
  // horizon N), and of q̇_k for q̇ (the pendulum: nq = nv = 1).
  const TrajectorySet data = read_trajectories(test_file);
  double mean_q = 0, mean_qd = 0, mean_q10 = 0;
  for (const Trajectory& t : data.trajectories) {
    double sq = 0, sqd = 0, sq10 = 0;
    for (Eigen::Index k = 0; k < t.size(); ++k) {
      const double d = t.q(k, 0) - t.q(0, 0);
      sq += d * d;
      sqd += t.qd(k, 0) * t.qd(k, 0);
      if (k < 10) sq10 += d * d;
    }
    const double n = static_cast<double>(data.trajectories.size());
    mean_q += std::sqrt(sq / static_cast<double>(t.size())) / n;
    mean_qd += std::sqrt(sqd / static_cast<double>(t.size())) / n;
    mean_q10 += std::sqrt(sq10 / 10.0) / n;
  }
  ASSERT_GT(mean_q, 0.1);  // the recordings move: the row is not trivially zero
  const auto& still = ref["no_motion"];
  EXPECT_NEAR(still["mean_rmse_q"].get<double>(), mean_q, 1e-12 * mean_q);
  EXPECT_NEAR(still["mean_rmse_qd"].get<double>(), mean_qd, 1e-12 * mean_qd);
  EXPECT_NEAR(still["mean_rmse_q_by_horizon"]["10"].get<double>(), mean_q10, 1e-12 * mean_q10);
  // rollout --compare reports the same row (the one no-motion predictor).
  EXPECT_NEAR(a["reference"]["no_motion"]["mean_rmse_q"].get<double>(), mean_q, 1e-12 * mean_q);
  EXPECT_NEAR(trained["reference"]["no_motion"]["mean_rmse_q"].get<double>(), mean_q, 1e-12 * mean_q);
  // Validation carries its reference rows too.
  EXPECT_TRUE(m["validation"]["reference"].contains("analytical_model"));
  EXPECT_TRUE(m["validation"]["reference"].contains("no_motion"));
}

// --check-gradients: the reverse-mode gradient against central differences,
// no training, no weights written.
TEST(TrainAugmentApp, CheckGradientsWritesTheTableAndTrainsNothing) {
  const std::string out = fresh_dir("train_check_gradients");
  const auto r = run_command(train_cmd("--check-gradients --set train.epochs=1 --out " + out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = read_json(out + "/summary.json");
  EXPECT_TRUE(s["metrics"]["gradient_check"]["passed"].get<bool>()) << s.dump();
  EXPECT_EQ(s["metrics"]["gradient_check"]["mode"], "unrolled");
  const auto j = read_json(out + "/gradient_check.json");
  EXPECT_EQ(j["rows"].size(), 40u);
  EXPECT_FALSE(std::filesystem::exists(out + "/weights.h5"));
}

}  // namespace
}  // namespace neuralsim
