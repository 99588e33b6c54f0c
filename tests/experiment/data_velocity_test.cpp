// data.velocity (experiment/data.hpp): the recorded q̇ replaced by the
// Savitzky–Golay derivative of the positions. Checked against the exact
// derivative of a known signal whose recorded velocity lags and is
// quantized, as on the multi-arm pendulum's logs (docs/real-data-results.md).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/experiment/data.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "support/files.hpp"

namespace neuralsim {
namespace {
namespace data_velocity_test {

constexpr double kOmega = 5.0, kAmp = 0.8, kLag = 0.0015, kVelocityStep = 0.05;

// q = A sin(ωt) at 1 kHz; the recorded q̇ lags by 1.5 ms and is quantized.
void write_lagging_recording(const std::string& path, int samples) {
  TrajectorySet set;
  set.meta.joint_names = {"joint1"};
  set.meta.q_names = {"joint1"};
  Trajectory t;
  t.name = "swing";
  t.time.resize(samples);
  t.q.resize(samples, 1);
  t.qd.resize(samples, 1);
  t.tau = RowMatrixXd::Zero(samples, 1);
  for (int k = 0; k < samples; ++k) {
    const double s = 1e-3 * k;
    t.time[k] = s;
    t.q(k, 0) = kAmp * std::sin(kOmega * s);
    t.qd(k, 0) = kVelocityStep * std::round(kAmp * kOmega * std::cos(kOmega * (s - kLag)) / kVelocityStep);
  }
  set.trajectories.push_back(t);
  write_trajectories(path, set);
}

Model<double> pendulum() { return parse_yaml_model("model: {generator: pendulum}\n", "pendulum.yaml"); }

DataSplit load(const std::string& dir, const std::string& data_yaml) {
  return load_data(Config::parse(data_yaml, dir + "/case.yaml").at("data"), pendulum());
}

}  // namespace data_velocity_test
using namespace data_velocity_test;

TEST(DataVelocity, SavitzkyGolayVelocityMatchesTheExactDerivativeAndDropsTheEnds) {
  const std::string dir = testing::fresh_dir("data_velocity_sg");
  write_lagging_recording(dir + "/swing.h5", 2000);
  const DataSplit recorded = load(dir, "data: {train: swing.h5}\n");
  const DataSplit derived = load(dir, "data: {train: swing.h5, velocity: {method: savitzky_golay, window: 21, order: 3}}\n");
  const Trajectory& r = recorded.train.trajectories.at(0);
  const Trajectory& d = derived.train.trajectories.at(0);
  ASSERT_EQ(d.size(), 2000 - 2 * 10);
  EXPECT_DOUBLE_EQ(d.time[0], r.time[10]);
  double worst_recorded = 0, worst_derived = 0;
  for (Eigen::Index k = 0; k < d.size(); ++k) {
    const double exact = kAmp * kOmega * std::cos(kOmega * d.time[k]);
    worst_derived = std::max(worst_derived, std::abs(d.qd(k, 0) - exact));
    worst_recorded = std::max(worst_recorded, std::abs(r.qd(k + 10, 0) - exact));
    EXPECT_EQ(d.q(k, 0), r.q(k + 10, 0));  // positions are the measured ones
  }
  // A cubic over 21 samples of a 0.8 Hz sine: truncation ~A·ω⁵·h⁴/… ≪ 1e-4;
  // the recorded channel is off by the lag (A ω² · 1.5 ms = 0.03) and the
  // quantization (0.025).
  EXPECT_LT(worst_derived, 1e-4);
  EXPECT_GT(worst_recorded, 0.02);
}

TEST(DataVelocity, BadOptionsNameTheKey) {
  const std::string dir = testing::fresh_dir("data_velocity_bad");
  write_lagging_recording(dir + "/swing.h5", 200);
  auto message = [&](const std::string& yaml) {
    try {
      load(dir, yaml);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message("data: {train: swing.h5, velocity: {window: 20}}\n").find("data.velocity.window"),
            std::string::npos);
  EXPECT_NE(message("data: {train: swing.h5, velocity: {window: 3, order: 3}}\n").find("fewer than the 4"),
            std::string::npos);
  EXPECT_NE(message("data: {train: swing.h5, velocity: {method: kalman}}\n").find("savitzky_golay"),
            std::string::npos);
  EXPECT_NE(message("data: {train: swing.h5, velocity: smoothed}\n").find("recorded"), std::string::npos);
  const std::string short_data = message("data: {train: swing.h5, velocity: {window: 301}}\n");
  EXPECT_NE(short_data.find("200 samples, too few"), std::string::npos) << short_data;
  EXPECT_NE(short_data.find("swing.h5"), std::string::npos) << short_data;
  // `recorded` keeps the file's q̇.
  EXPECT_EQ(load(dir, "data: {train: swing.h5, velocity: recorded}\n").train.trajectories.at(0).size(), 200);
}

}  // namespace
}  // namespace neuralsim
