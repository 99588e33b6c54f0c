// Honest splits (issue #38, experiment/data.hpp): data.test / test_fraction
// beside train and validation. The fractions take the training files'
// trajectories in order [train | validation | test]; a test set that
// overlaps training or validation, fractions that leave nothing to train
// on, and fractions outside [0, 1) are refused with a ConfigError (exit 2)
// naming the key.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/data.hpp"
#include "neuralsim/experiment/evaluation.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace {
namespace data_splits_test {

// `count` pendulum recordings named "<prefix>0", "<prefix>1", ... whose q
// is the index (so a trajectory can be recognized after a split).
void write_split_recordings(const std::string& path, const std::string& prefix, int count) {
  TrajectorySet set;
  set.meta.joint_names = {"joint1"};
  set.meta.q_names = {"joint1"};
  for (int i = 0; i < count; ++i) {
    Trajectory t;
    t.name = prefix + std::to_string(i);
    t.time = Eigen::VectorXd::LinSpaced(4, 0.0, 0.03);
    t.q = RowMatrixXd::Constant(4, 1, static_cast<double>(i));
    t.qd = RowMatrixXd::Zero(4, 1);
    t.tau = RowMatrixXd::Zero(4, 1);
    set.trajectories.push_back(t);
  }
  write_trajectories(path, set);
}

Model<double> split_pendulum() { return parse_yaml_model("model: {generator: pendulum}\n", "pendulum.yaml"); }

DataSplit load_split(const std::string& dir, const std::string& data_yaml) {
  return load_data(Config::parse(data_yaml, dir + "/case.yaml").at("data"), split_pendulum());
}

std::vector<std::string> split_names(const TrajectorySet& set) {
  std::vector<std::string> out;
  for (const Trajectory& t : set.trajectories) out.push_back(t.name);
  return out;
}

// The ConfigError's message, or "(no error)" / "(another error)".
std::string split_config_error(const std::string& dir, const std::string& yaml) {
  try {
    load_split(dir, yaml);
  } catch (const ConfigError& e) {
    return e.what();
  } catch (const Error& e) {
    return std::string("(another error) ") + e.what();
  }
  return "(no error)";
}

}  // namespace data_splits_test
using namespace data_splits_test;

TEST(DataSplits, FractionsTakeTrainValidationTestInFileOrder) {
  const std::string dir = testing::fresh_dir("data_splits_fractions");
  write_split_recordings(dir + "/all.h5", "r", 10);
  // 10 trajectories: floor(0.2·10) = 2 validation, floor(0.3·10) = 3 test.
  const DataSplit s = load_split(dir, "data: {train: all.h5, validation_fraction: 0.2, test_fraction: 0.3}\n");
  EXPECT_EQ(split_names(s.train), (std::vector<std::string>{"r0", "r1", "r2", "r3", "r4"}));
  EXPECT_EQ(split_names(s.validation), (std::vector<std::string>{"r5", "r6"}));
  EXPECT_EQ(split_names(s.test), (std::vector<std::string>{"r7", "r8", "r9"}));
  // Without a test fraction, validation keeps the last trajectories, as before.
  const DataSplit v = load_split(dir, "data: {train: all.h5, validation_fraction: 0.2}\n");
  EXPECT_EQ(split_names(v.validation), (std::vector<std::string>{"r8", "r9"}));
  EXPECT_TRUE(v.test.trajectories.empty());
  // A test file beside a validation fraction.
  write_split_recordings(dir + "/held_out.h5", "h", 2);
  const DataSplit f = load_split(dir, "data: {train: all.h5, validation_fraction: 0.2, test: held_out.h5}\n");
  EXPECT_EQ(split_names(f.test), (std::vector<std::string>{"h0", "h1"}));
  EXPECT_EQ(f.train.trajectories.size(), 8u);
  EXPECT_NE(f.test_source.find("held_out.h5"), std::string::npos);
}

TEST(DataSplits, ATestSetOverlappingTrainingOrValidationIsRefusedNamingTheKey) {
  const std::string dir = testing::fresh_dir("data_splits_overlap");
  write_split_recordings(dir + "/a.h5", "a", 3);
  write_split_recordings(dir + "/b.h5", "b", 3);
  write_split_recordings(dir + "/c.h5", "c", 3);
  // The training file itself, under another spelling of its path.
  std::string m = split_config_error(dir, "data: {train: a.h5, test: ./a.h5}\n");
  testing::expect_contains(m, {"data.test", "overlaps data.train", "a.h5"});
  // In a list of test files, against a list of training files.
  m = split_config_error(dir, "data: {train: [a.h5, b.h5], test: [c.h5, b.h5]}\n");
  testing::expect_contains(m, {"data.test", "overlaps data.train", "b.h5"});
  // The validation file.
  m = split_config_error(dir, "data: {train: a.h5, validation: b.h5, test: b.h5}\n");
  testing::expect_contains(m, {"data.test", "overlaps data.validation", "b.h5"});
  // Disjoint files are accepted.
  EXPECT_EQ(split_names(load_split(dir, "data: {train: a.h5, validation: b.h5, test: c.h5}\n").test),
            (std::vector<std::string>{"c0", "c1", "c2"}));
}

TEST(DataSplits, BadFractionsAreRefusedNamingTheKey) {
  const std::string dir = testing::fresh_dir("data_splits_bad");
  write_split_recordings(dir + "/all.h5", "r", 5);
  write_split_recordings(dir + "/other.h5", "o", 2);
  // 0.6·5 = 3 validation + 0.4·5 = 2 test: nothing left to train on.
  testing::expect_contains(split_config_error(dir, "data: {train: all.h5, validation_fraction: 0.6, test_fraction: 0.4}\n"),
                           {"data.test_fraction", "leaving no training trajectory"});
  testing::expect_contains(split_config_error(dir, "data: {train: all.h5, test_fraction: 1.5}\n"),
                           {"data.test_fraction", "[0, 1)"});
  testing::expect_contains(split_config_error(dir, "data: {train: all.h5, test_fraction: -0.1}\n"),
                           {"data.test_fraction", "[0, 1)"});
  testing::expect_contains(split_config_error(dir, "data: {train: all.h5, test_fraction: .nan}\n"),
                           {"data.test_fraction", "finite"});
  testing::expect_contains(split_config_error(dir, "data: {train: all.h5, validation_fraction: .inf}\n"),
                           {"data.validation_fraction", "finite"});
  testing::expect_contains(split_config_error(dir, "data: {train: all.h5, test: other.h5, test_fraction: 0.2}\n"),
                           {"data.test_fraction", "either test or test_fraction"});
}

TEST(DataSplits, NoMotionPredictionHoldsTheFirstPosition) {
  Trajectory t;
  t.name = "swing";
  t.time = Eigen::VectorXd::LinSpaced(5, 0.0, 0.4);
  t.q.resize(5, 2);
  t.qd.resize(5, 2);
  for (int k = 0; k < 5; ++k) {
    t.q.row(k) << std::sin(k), 1.0 + k;
    t.qd.row(k) << std::cos(k), 1.0;
  }
  const Trajectory p = no_motion_prediction(t);
  EXPECT_EQ(p.name, "swing");
  ASSERT_EQ(p.size(), 5);
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(p.time[k], t.time[k]);
    EXPECT_EQ(p.q(k, 0), 0.0);  // sin 0
    EXPECT_EQ(p.q(k, 1), 1.0);
    EXPECT_EQ(p.qd(k, 0), 0.0);
    EXPECT_EQ(p.qd(k, 1), 0.0);
  }
}

}  // namespace
}  // namespace neuralsim
