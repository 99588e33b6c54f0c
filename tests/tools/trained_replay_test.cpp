// Issue #38: every model train-augment trains replays through rollout.
//  - The MLP and LSTM baselines, written by train-augment's own writer and
//    read back by `rollout --compare --weights` (the library call compare),
//    predict what train-augment's evaluation predicted, to 1e-12.
//  - The replay.yaml train-augment writes replays the trained hybrid as is;
//    an override of a trained network is refused naming the key.
//  - A hybrid whose output layers start at zero is the analytical model,
//    bit for bit, before training; its input normalization is the training
//    data's mean and standard deviation.
//  - train.validation_stride sets the validation windows.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/augment_config.hpp"
#include "neuralsim/experiment/evaluation.hpp"
#include "neuralsim/experiment/experiment.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/lstm_file.hpp"
#include "neuralsim/io/network_file.hpp"
#include "neuralsim/tools/rollout.hpp"
#include "neuralsim/tools/train_augment.hpp"
#include "neuralsim/tools/training_setup.hpp"
#include "neuralsim/train/baseline_models.hpp"
#include "neuralsim/train/trainer.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace {

using testing::expect_contains;
using testing::thrown_message;

// A damped pendulum under a sinusoidal torque (the truth), 6 trajectories
// for training and 2 for validation, written once per test binary run by
// the library's rollout.
struct Recordings {
  std::string dir, train, validation;
};

const Recordings& recordings() {
  static const Recordings r = [] {
    Recordings out;
    out.dir = testing::fresh_dir("trained_replay_data");
    const std::string truth = R"(
model: {generator: pendulum, length: 1.0, mass: 1.0}
params: {joint.joint1.damping: 0.3}
sim: {integrator: rk4, dt: 0.01, duration: 0.6}
initial_states: {count: 8, q_low: [-1.5], q_high: [1.5], qd_low: [-2], qd_high: [2]}
controls: {type: sinusoid, amplitude: [0.5], frequency: [0.7]}
)";
    testing::write_file(out.dir + "/truth.yaml", truth);
    RolloutResult r = rollout({Config::load(out.dir + "/truth.yaml"), 1, ""});
    EXPECT_EQ(r.status, RunStatus::kOk);
    TrajectorySet train = r.trajectories, validation = r.trajectories;
    train.trajectories.resize(6);
    validation.trajectories.erase(validation.trajectories.begin(), validation.trajectories.begin() + 6);
    out.train = out.dir + "/train.h5";
    out.validation = out.dir + "/validation.h5";
    write_trajectories(out.train, train);
    write_trajectories(out.validation, validation);
    return out;
  }();
  return r;
}

// A training config in `dir` on the recordings; `model` and `extra` complete it.
std::string training_config(const std::string& dir, const std::string& train_section,
                            const std::string& augment = "") {
  const Recordings& rec = recordings();
  const std::string text = "name: replay_test\n"
                           "model: {generator: pendulum, length: 1.0, mass: 1.0}\n"
                           "sim: {integrator: rk4, dt: 0.01}\n" +
                           augment + "data: {train: " + rec.train + ", validation: " + rec.validation +
                           "}\n"
                           "train: " + train_section + "\n"
                           "evaluate: {horizons: [10, 40]}\n";
  testing::write_file(dir + "/train.yaml", text);
  return dir + "/train.yaml";
}

double max_abs_difference(const TrajectorySet& a, const TrajectorySet& b) {
  EXPECT_EQ(a.trajectories.size(), b.trajectories.size());
  double worst = 0;
  for (size_t k = 0; k < std::min(a.trajectories.size(), b.trajectories.size()); ++k) {
    const Trajectory &x = a.trajectories[k], &y = b.trajectories[k];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.q.rows(), y.q.rows());
    if (x.q.rows() != y.q.rows()) return INFINITY;
    worst = std::max({worst, (x.q - y.q).cwiseAbs().maxCoeff(), (x.qd - y.qd).cwiseAbs().maxCoeff()});
  }
  return worst;
}

// Trains `train_section` for a few epochs, writes the files as train-augment
// does, replays them through compare (by the replay config and by the
// --weights path) and checks the predictions against train-augment's own.
std::string expect_replay_reproduces_training(const std::string& name, const std::string& train_section,
                                              const std::string& expected_kind, const std::string& augment = "") {
  SCOPED_TRACE(name);
  const std::string dir = testing::fresh_dir("trained_replay_" + name);
  const Config cfg = Config::load(training_config(dir, train_section, augment));
  const TrainAugmentResult r = train_augment({cfg, 3});
  EXPECT_EQ(r.status, RunStatus::kOk) << r.message;
  if (!r.validation || r.validation->diverged) {
    ADD_FAILURE() << "no evaluation";
    return dir;
  }
  const std::string file = write_trained_weights(r.trained, dir + "/weights.h5", dir + "/lstm.json");
  EXPECT_EQ(trained_model_kind(file), expected_kind) << "the kind comes from the file's content";
  testing::write_file(dir + "/replay.yaml", replay_config_yaml(cfg, r, dir, file));

  // The replay config as written.
  const CompareResult by_config = compare({Config::load(dir + "/replay.yaml"), 0, recordings().validation, ""});
  EXPECT_EQ(by_config.status, RunStatus::kOk) << by_config.message;
  EXPECT_EQ(by_config.model.trained_model, expected_kind);
  const double d = max_abs_difference(by_config.predictions, r.validation->predictions);
  EXPECT_LE(d, 1e-12) << "replay differs from train-augment's predictions by " << d;
  EXPECT_EQ(by_config.per_trajectory.size(), r.validation->per_trajectory.size());
  for (size_t k = 0; k < std::min(by_config.per_trajectory.size(), r.validation->per_trajectory.size()); ++k) {
    EXPECT_NEAR(by_config.per_trajectory[k].rmse_q, r.validation->per_trajectory[k].rmse_q, 1e-12);
    EXPECT_NEAR(by_config.per_trajectory[k].rmse_qd, r.validation->per_trajectory[k].rmse_qd, 1e-12);
  }

  // compare.windows scores the trained model too (its free rollout restarted
  // from the measured state at each window's start): the window from
  // sample 0 over 0.3 s is the whole-recording prediction's first 30 steps.
  const CompareResult windowed = compare(
      {Config::load(dir + "/replay.yaml", {"compare.windows.every=0.3", "compare.windows.horizon=0.3"}), 0,
       recordings().validation, ""});
  EXPECT_EQ(windowed.status, RunStatus::kOk) << windowed.message;
  if (windowed.windows) {
    const TrajectorySet validation = read_trajectories(recordings().validation);
    const Trajectory& recorded = validation.trajectories[0];
    const Trajectory& predicted = by_config.predictions.trajectories[0];
    const WindowError& first = windowed.windows->per_window[0];
    EXPECT_EQ(first.trajectory, recorded.name);
    EXPECT_EQ(first.samples.start, 0);
    EXPECT_EQ(first.samples.end, 30);
    const double expected = std::sqrt((recorded.q.middleRows(1, 30) - predicted.q.middleRows(1, 30)).squaredNorm() / 30);
    EXPECT_NEAR(first.rmse_q, expected, 1e-12 * std::max(1.0, expected));
    EXPECT_EQ(windowed.windows->overall.count, 2 * static_cast<long long>(windowed.per_trajectory.size()));
  } else {
    ADD_FAILURE() << "no windowed evaluation";
  }

  // The same file through --weights, moved elsewhere and renamed: the kind is
  // read from the content, not the name.
  const std::string moved = dir + "/renamed_" + name + ".bin";
  std::filesystem::copy_file(file, moved);
  testing::write_file(dir + "/plain.yaml", "model: {generator: pendulum, length: 1.0, mass: 1.0}\n"
                                           "sim: {integrator: rk4, dt: 0.01}\n" + augment);
  const CompareResult by_flag = compare({Config::load(dir + "/plain.yaml"), 0, recordings().validation, moved});
  EXPECT_EQ(by_flag.status, RunStatus::kOk) << by_flag.message;
  EXPECT_LE(max_abs_difference(by_flag.predictions, r.validation->predictions), 1e-12);
  return dir;
}

TEST(TrainedReplay, MlpBaselineReplaysThroughRolloutAsTrainAugmentPredicted) {
  expect_replay_reproduces_training(
      "mlp", "{model: mlp, baseline: {hidden: [8, 8]}, epochs: 3, window_steps: 5, window_stride: 5, batch_size: 8, "
             "learning_rate: 0.01}",
      "mlp-delta");
  expect_replay_reproduces_training(
      "mlp_direct", "{model: mlp, baseline: {hidden: [6], predict_delta: false}, epochs: 2, window_steps: 4, "
                    "window_stride: 5, learning_rate: 0.01}",
      "mlp-direct");
}

TEST(TrainedReplay, LstmBaselineReplaysThroughRolloutAsTrainAugmentPredicted) {
  // Normalization and the output offset are not 0/1 here (fitted to the
  // data): a file without them could not reproduce the predictions.
  expect_replay_reproduces_training(
      "lstm", "{model: lstm, baseline: {hidden: [5]}, epochs: 3, window_steps: 5, window_stride: 5, batch_size: 8, "
              "learning_rate: 0.01}",
      "lstm-delta");
  const std::string dir = expect_replay_reproduces_training(
      "lstm_passive", "{model: lstm, baseline: {hidden: [3]}, controls: none, epochs: 2, window_steps: 4, "
                      "window_stride: 5, learning_rate: 0.01}",
      "lstm-delta");
  const NamedLstm back = read_lstm_file(dir + "/lstm.json");
  ASSERT_TRUE(back.use_controls);
  EXPECT_FALSE(*back.use_controls);
  EXPECT_EQ(back.network.input_dim(), 2);
}

constexpr const char* kDampingNetwork =
    "augment:\n"
    "  - {name: damping, site: joint.joint1.torque, inputs: [joint.joint1.qd, joint.joint1.q], hidden: [8], "
    "output_scale: 0.1}\n";

TEST(TrainedReplay, AHybridReplaysFromItsReplayConfigAsIs) {
  expect_replay_reproduces_training(
      "hybrid", "{epochs: 3, window_steps: 5, window_stride: 5, batch_size: 8, learning_rate: 0.01}", "hybrid",
      kDampingNetwork);
}

TEST(TrainedReplay, OverridesThatWouldChangeATrainedModelAreRefusedNamingTheKey) {
  const std::string dir = testing::fresh_dir("trained_replay_overrides");
  const Config cfg = Config::load(
      training_config(dir, "{epochs: 1, window_steps: 5, window_stride: 5, learning_rate: 0.01}", kDampingNetwork));
  const TrainAugmentResult r = train_augment({cfg, 3});
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
  const std::string file = write_trained_weights(r.trained, dir + "/weights.h5", dir + "/lstm.json");
  testing::write_file(dir + "/replay.yaml", replay_config_yaml(cfg, r, dir, file));
  auto replay = [&](const std::vector<std::string>& set) {
    return compare({Config::load(dir + "/replay.yaml", set), 0, recordings().validation, ""});
  };
  EXPECT_EQ(replay({"augment.0.output_scale=0.1"}).status, RunStatus::kOk) << "the trained value is no change";
  std::string msg;
  try {
    replay({"augment.0.output_scale=0.5"});
  } catch (const ConfigError& e) {
    msg = e.what();
  }
  expect_contains(msg, {"augment.0.output_scale", "weights.h5", "0.5", "replayed as trained"});
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  // Layer sizes, activation and inputs: refused too (the file's shape).
  for (const std::string key : {"hidden", "activation", "inputs"}) {
    const std::string value = key == "hidden" ? "[4]" : key == "activation" ? "relu" : "[joint.joint1.qd]";
    const std::string m = thrown_message([&] { replay({"augment.0." + key + "=" + value}); });
    expect_contains(m, {"weights.h5:/networks/damping", "key 'augment.0." + key + "'", "replayed as trained"});
    EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
  }
  // A baseline is not a simulator: rollout without recordings refuses it.
  testing::write_file(dir + "/sim.yaml", "model: {generator: pendulum}\nsim: {dt: 0.01, duration: 0.1}\n");
  const TrainAugmentResult b = train_augment(
      {Config::load(training_config(dir, "{model: mlp, baseline: {hidden: [4]}, epochs: 1, window_steps: 5}")), 3});
  write_trained_weights(b.trained, dir + "/mlp.h5", dir + "/unused.json");
  EXPECT_NE(thrown_message([&] { rollout({Config::load(dir + "/sim.yaml"), 0, dir + "/mlp.h5"}); }).find("--compare"),
            std::string::npos);
}

TEST(TrainedReplay, AnOldMlpFileWithoutItsKindIsRefusedNotGuessed) {
  const std::string dir = testing::fresh_dir("trained_replay_old");
  nn::Mlp net(3, {4}, 2, nn::Activation::kTanh, nn::Activation::kIdentity);
  write_networks(dir + "/old.h5", {{"mlp", net, {}, {}, {}}});  // no root attribute model
  testing::write_file(dir + "/plain.yaml", "model: {generator: pendulum}\nsim: {dt: 0.01}\n");
  const std::string msg =
      thrown_message([&] { compare({Config::load(dir + "/plain.yaml"), 0, recordings().validation, dir + "/old.h5"}); });
  expect_contains(msg, {"old.h5", "'model'", "retrain"});
}

// ------------------------------------------------------------ start at the analytical model

TEST(TrainedReplay, ZeroInitializedOutputsReproduceTheAnalyticalModelExactly) {
  const std::string dir = testing::fresh_dir("trained_replay_zero");
  const std::string base = "model: {generator: pendulum, length: 1.0, mass: 1.0}\nsim: {integrator: rk4, dt: 0.01}\n";
  const TrajectorySet data = read_trajectories(recordings().validation);
  auto predictions = [&](const std::string& augment) {
    testing::write_file(dir + "/c.yaml", base + augment);
    const Experiment exp = load_experiment(Config::load(dir + "/c.yaml"));
    return replay_recording(exp.model, exp.step, exp.contact, data.trajectories[0], exp.augment);
  };
  const Trajectory analytical = predictions("");
  // Residual torque, a scale site, and a tanh output: zero at the start.
  for (const char* augment :
       {"augment:\n  - {name: a, site: joint.joint1.torque, inputs: [joint.joint1.qd, joint.joint1.q], seed: 4}\n",
        "augment:\n  - {name: a, site: joint.joint1.torque, mode: scale, inputs: [joint.joint1.q], hidden: [5, 3]}\n",
        "augment:\n  - {name: a, site: joint.joint1.torque, inputs: [time], output_activation: tanh}\n"}) {
    const Trajectory hybrid = predictions(augment);
    EXPECT_EQ((hybrid.q - analytical.q).cwiseAbs().maxCoeff(), 0.0) << augment;
    EXPECT_EQ((hybrid.qd - analytical.qd).cwiseAbs().maxCoeff(), 0.0) << augment;
  }
  // Opting out gives the seeded network: the hybrid then differs.
  const Trajectory seeded = predictions(
      "augment:\n  - {name: a, site: joint.joint1.torque, inputs: [joint.joint1.qd], zero_init_outputs: false}\n");
  EXPECT_GT((seeded.q - analytical.q).cwiseAbs().maxCoeff(), 1e-6);
  // Only the output layer is zero; the flag is recorded in the weights file.
  testing::write_file(dir + "/z.yaml", base + "augment:\n  - {name: a, site: joint.joint1.torque, inputs: [joint.joint1.qd]}\n");
  const Experiment exp = load_experiment(Config::load(dir + "/z.yaml"));
  const nn::Mlp& net = exp.augment[0].network;
  EXPECT_GT(net.weight(0).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_EQ(net.weight(net.num_layers() - 1).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_EQ(net.bias(net.num_layers() - 1).cwiseAbs().maxCoeff(), 0.0);
  write_augment_weights(dir + "/z.h5", exp.augment);
  const NamedNetwork back = read_network(dir + "/z.h5", "a");
  ASSERT_TRUE(back.zero_init_outputs);
  EXPECT_TRUE(*back.zero_init_outputs);
  EXPECT_EQ(read_weights_file_model(dir + "/z.h5").model, "hybrid");
  // A replace site is not the analytical model at zero: no default there.
  testing::write_file(dir + "/r.yaml", base + "augment:\n  - {name: a, site: joint.joint1.torque, mode: replace, inputs: [joint.joint1.qd]}\n");
  EXPECT_FALSE(load_experiment(Config::load(dir + "/r.yaml")).augment[0].zero_init_outputs);
}

TEST(TrainedReplay, InputNormalizationIsTheTrainingDatasMeanAndStd) {
  const std::string dir = testing::fresh_dir("trained_replay_normalization");
  const Config cfg = Config::load(
      training_config(dir, "{epochs: 1, window_steps: 5, window_stride: 5, learning_rate: 0.01}", kDampingNetwork));
  const TrainAugmentResult r = train_augment({cfg, 3});
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
  ASSERT_EQ(r.trained.networks.size(), 1u);
  // The inputs [q̇, q] over every sample of the training recordings, by hand.
  const TrajectorySet train = read_trajectories(recordings().train);
  double n = 0, sum_qd = 0, sum_q = 0;
  for (const Trajectory& t : train.trajectories)
    for (Eigen::Index k = 0; k < t.size(); ++k, n += 1) {
      sum_qd += t.qd(k, 0);
      sum_q += t.q(k, 0);
    }
  const double mean_qd = sum_qd / n, mean_q = sum_q / n;
  double var_qd = 0, var_q = 0;
  for (const Trajectory& t : train.trajectories)
    for (Eigen::Index k = 0; k < t.size(); ++k) {
      var_qd += (t.qd(k, 0) - mean_qd) * (t.qd(k, 0) - mean_qd) / n;
      var_q += (t.q(k, 0) - mean_q) * (t.q(k, 0) - mean_q) / n;
    }
  const nn::Mlp& net = r.trained.networks[0].network;
  EXPECT_NEAR(net.input_mean()[0], mean_qd, 1e-12);
  EXPECT_NEAR(net.input_mean()[1], mean_q, 1e-12);
  EXPECT_NEAR(net.input_std()[0], std::sqrt(var_qd), 1e-10);
  EXPECT_NEAR(net.input_std()[1], std::sqrt(var_q), 1e-10);
  EXPECT_GT(std::abs(net.input_mean()[1]), 1e-3) << "a test that cannot tell 0/1 from the data's statistics";
  // Stored with the weights and applied by rollout.
  const std::string file = write_trained_weights(r.trained, dir + "/weights.h5", dir + "/lstm.json");
  testing::write_file(dir + "/replay.yaml", replay_config_yaml(cfg, r, dir, file));
  const Config replay = Config::load(dir + "/replay.yaml");
  std::vector<AugmentBlueprint> bps = read_augment_section(replay, load_experiment(replay).model, nullptr);
  load_augment_weights(bps, file, &replay);
  EXPECT_EQ(bps[0].network.input_mean(), net.input_mean());
  EXPECT_EQ(bps[0].network.input_std(), net.input_std());
  // Before training, the hybrid was the analytical model: its validation
  // loss is the physics-only model's (the same config without augment:).
  const TrainAugmentResult physics = train_augment(
      {Config::load(training_config(dir, "{physical: [{name: joint.joint1.damping, initial: 0.0, bounds: [0, 5]}], epochs: 1, window_steps: 5, "
                                         "window_stride: 5, learning_rate: 1.0e-9}")),
       3});
  EXPECT_NEAR(r.initial_validation_loss, physics.initial_validation_loss, 1e-12 * physics.initial_validation_loss);
}

// ------------------------------------------------------------ train.validation_stride

TEST(TrainedReplay, ValidationStrideIsAConfigKey) {
  const std::string dir = testing::fresh_dir("trained_replay_stride");
  // 61 samples per validation recording, K_val = 10: ⌊(60 − 10) / 7⌋ + 1 = 8
  // windows per recording with stride 7; ⌊50 / 10⌋ + 1 = 6 (disjoint) without the key.
  auto windows = [&](const std::string& extra) {
    const Config cfg = Config::load(training_config(
        dir, "{model: mlp, baseline: {hidden: [2]}, epochs: 1, window_steps: 5, validation_steps: 10" + extra + "}"));
    TrainingSetup s = read_training_setup(cfg, 1, {"augment"});
    EXPECT_EQ(s.data.validation.trajectories.at(0).size(), 61);
    MlpStateModelOptions o;
    o.nq = o.nv = 1;
    o.hidden_widths = {2};
    MlpStateModel m(o);
    Trainer t(m, s.train_set, s.data.validation, loss_weights_from_data(s.train_set), s.options);
    return t.num_validation_windows();
  };
  EXPECT_EQ(windows(", validation_stride: 7"), 2u * 8u);
  EXPECT_EQ(windows(""), 2u * 6u);
  for (const char* bad : {"0", "-3", "1.5", "x"}) {
    const std::string msg = thrown_message([&] { windows(std::string(", validation_stride: ") + bad); });
    expect_contains(msg, {"train.yaml:", "train.validation_stride"});
  }
}

}  // namespace
}  // namespace neuralsim
