// simid observing an IMU (issue #36, sensor models): data from our own
// engine with an IMU on the double pendulum's second link, read through a
// known gain and biases and with noise; a fit that sees only the IMU
// recovers the biases, the gain and a link length within their intervals,
// and reports IMU errors equal to the sensor noise.
// Bad IMU configs and data are refused naming the key or the dataset.
#include <gtest/gtest.h>

#include <H5Cpp.h>

#include <cmath>
#include <random>

#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/estimate/imu.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/tools/identify.hpp"
#include "support/files.hpp"
#include "support/fit_support.hpp"

namespace neuralsim::simid_imu_test {
namespace {

struct Truth {
  Eigen::Vector3d gyro_bias{0.02, -0.01, 0.03};
  Eigen::Vector3d accel_bias{0.3, -0.2, 0.1};
  double accel_gain = 1.05;
  double gyro_noise = 0.002, accel_noise = 0.02;  // standard deviations
};

const char* kTipYaml = "{name: tip, link: link2, position: [0.2, 0.1, -1.5], rpy: [0.2, -0.3, 0.5]";

// Two recordings under sinusoidal torques (zero-order hold, as replayed),
// with the IMU's reading at every sample: q̈ from the forward dynamics under
// the control held there, rnea's body accelerations, imu_reading.
TrajectorySet record(const Model<double>& model, const Truth& truth) {
  StepOptions step;
  step.integrator = Integrator::kRK4;
  step.dt = 0.01;
  Eigen::VectorXd amplitude(2), frequency(2);
  amplitude << 6.0, 2.0;
  frequency << 0.7, 1.3;
  std::vector<testing::SinusoidRun> runs{{Eigen::Vector2d(0.5, -0.3), amplitude, frequency},
                                         {Eigen::Vector2d(-0.8, 0.6), amplitude, frequency}};
  TrajectorySet set;
  set.meta.model = model.name;
  set.meta.joint_names = model.velocity_names();
  set.trajectories = testing::record_sinusoids(model, step, runs, 60);
  const ImuMount mount = testing::double_pendulum_tip_mount(model);
  Stepper<double> stepper(model, step);
  std::mt19937 rng(5);
  std::normal_distribution<double> unit;
  for (Trajectory& tr : set.trajectories) {
    RowMatrixXd imu(tr.size(), 6);
    for (Eigen::Index k = 0; k < tr.size(); ++k) {
      const Eigen::VectorXd q = tr.q.row(k).transpose(), qd = tr.qd.row(k).transpose();
      stepper.forward_dynamics(q, qd, tr.tau.row(k).transpose(), tr.time[k]);
      const Eigen::VectorXd qdd = stepper.data().qdd;
      rnea(model, stepper.data(), q, qd, qdd);
      const ImuReading<double> y = imu_reading(stepper.data(), mount);
      for (int a = 0; a < 3; ++a) {
        imu(k, a) = y.gyro[a] + truth.gyro_bias[a] + truth.gyro_noise * unit(rng);
        imu(k, 3 + a) = truth.accel_gain * y.specific_force[a] + truth.accel_bias[a] + truth.accel_noise * unit(rng);
      }
    }
    tr.imus["tip"] = imu;
  }
  return set;
}

std::string fit_config(const std::string& model_file, const std::string& residual, const std::string& extra_imu = "") {
  return "model: {file: " + model_file + "}\n" +
         "sim: {integrator: rk4, dt: 0.01}\n"
         "data: {train: imu.h5}\n"
         "estimate:\n"
         "  parameters:\n"
         "    - {name: link.link2.length, initial: 3.6, bounds: [1, 8]}\n"
         "    - {name: imu.tip.gyro_bias.x, initial: 0, bounds: [-1, 1]}\n"
         "    - {name: imu.tip.gyro_bias.y, initial: 0, bounds: [-1, 1]}\n"
         "    - {name: imu.tip.gyro_bias.z, initial: 0, bounds: [-1, 1]}\n"
         "    - {name: imu.tip.accel_bias.x, initial: 0, bounds: [-5, 5]}\n"
         "    - {name: imu.tip.accel_bias.y, initial: 0, bounds: [-5, 5]}\n"
         "    - {name: imu.tip.accel_bias.z, initial: 0, bounds: [-5, 5]}\n"
         "    - {name: imu.tip.accel_gain, initial: 1, bounds: [0.5, 2]}\n"
         "  observe: {q: 0, imus: [" + kTipYaml + ", gyro_weight: 1, accel_weight: 0.1" + extra_imu + "}]}\n" +
         "  residual: " + residual + "\n" +
         "  solver: {max_iterations: 40}\n"
         "  basin_hopping: {enabled: false}\n"
         "output: {plot: false}\n";
}

// `length_error`: > 0 checks the length against this absolute error instead
// of its interval (inverse dynamics: the filtered q̈ biases the noise-free
// torque rows, whose interval does not cover that bias).
void expect_recovered(const IdentificationResult& r, const Truth& truth, double max_std_error,
                      double length_error = 0) {
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
  ASSERT_EQ(r.parameters.size(), 8u);
  const double expected[8] = {4.0, truth.gyro_bias.x(), truth.gyro_bias.y(), truth.gyro_bias.z(),
                              truth.accel_bias.x(), truth.accel_bias.y(), truth.accel_bias.z(), truth.accel_gain};
  for (int i = 0; i < 8; ++i) {
    const IdentifiedParameter& p = r.parameters[static_cast<size_t>(i)];
    EXPECT_TRUE(std::isfinite(p.std_error) && p.std_error > 0) << p.name;
    // Within 4 standard errors (the noise is Gaussian), and the interval
    // itself tight enough to mean something.
    EXPECT_NEAR(p.value, expected[i], i == 0 && length_error > 0 ? length_error : 4 * p.std_error)
        << p.name << " ± " << p.std_error;
    EXPECT_LT(p.std_error, max_std_error) << p.name;
  }
}

}  // namespace

TEST(SimidImu, ShootingFitOfTheImuAloneRecoversBiasesGainAndALength) {
  const std::string dir = testing::fresh_dir("simid_imu_shooting");
  const std::string model_file = testing::source_path("configs/models/double_pendulum.yaml");
  const Model<double> model = load_yaml_model(model_file);
  const Truth truth;
  write_trajectories(dir + "/imu.h5", record(model, truth));
  testing::write_file(dir + "/fit.yaml", fit_config(model_file, "{type: single_shooting, window: 20}"));
  const IdentificationResult single = identify({Config::load(dir + "/fit.yaml"), 1, ""});
  expect_recovered(single, truth, 0.05);
  // The reported IMU errors along the fitted prediction are the sensor
  // noise's σ (183 entries per channel and trajectory: within 25 %).
  for (const TrajectoryFit& t : single.train.per_trajectory) {
    EXPECT_NEAR(t.rmse_sensors.at("imus.tip.gyro"), truth.gyro_noise, 0.25 * truth.gyro_noise) << t.name;
    EXPECT_NEAR(t.rmse_sensors.at("imus.tip.accel"), truth.accel_noise, 0.25 * truth.accel_noise) << t.name;
  }
  testing::write_file(dir + "/fit.yaml", fit_config(model_file, "{type: multiple_shooting, window: 20}"));
  expect_recovered(identify({Config::load(dir + "/fit.yaml"), 1, ""}), truth, 0.05);
}

TEST(SimidImu, InverseDynamicsTakesTheImuAtTheFilteredAcceleration) {
  const std::string dir = testing::fresh_dir("simid_imu_inverse");
  const std::string model_file = testing::source_path("configs/models/double_pendulum.yaml");
  const Model<double> model = load_yaml_model(model_file);
  const Truth truth;
  write_trajectories(dir + "/imu.h5", record(model, truth));
  testing::write_file(dir + "/fit.yaml",
                      fit_config(model_file,
                                 "{type: inverse_dynamics, derivatives: {method: savitzky_golay, window: 9, order: 4}}"));
  expect_recovered(identify({Config::load(dir + "/fit.yaml"), 1, ""}), truth, 0.1, 0.01);
}

TEST(SimidImu, BadImuConfigsAndDataAreRefusedNamingTheKey) {
  const std::string dir = testing::fresh_dir("simid_imu_errors");
  const std::string model_file = testing::source_path("configs/models/double_pendulum.yaml");
  const Model<double> model = load_yaml_model(model_file);
  write_trajectories(dir + "/imu.h5", record(model, Truth{}));
  const std::string good = fit_config(model_file, "{type: single_shooting, window: 20}");
  auto refused = [&](const std::string& config, const std::string& expected) {
    testing::write_file(dir + "/fit.yaml", config);
    try {
      identify({Config::load(dir + "/fit.yaml"), 1, ""});
      ADD_FAILURE() << "no error for: " << expected;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  auto replaced = [&](std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  refused(replaced(good, "link: link2", "link: link9"), "estimate.observe.imus.0.link': unknown link 'link9'");
  refused(replaced(good, "rpy: [0.2, -0.3, 0.5]", "rpy: [0.2, -0.3]"), "estimate.observe.imus.0.rpy': expected 3 finite numbers");
  refused(replaced(good, "imu.tip.gyro_bias.x", "imu.head.gyro_bias.x"),
          "'imu.head.gyro_bias.x' names IMU 'head', which is not in estimate.observe.imus [tip]");
  refused(replaced(good, "imu.tip.gyro_bias.x", "imu.tip.gyro_bias.w"), "unknown IMU parameter 'imu.tip.gyro_bias.w'");
  refused(replaced(good, "gyro_weight: 1", "gyro_weight: 0"), "whose gyro_weight is 0");
  // Interpolated and delayed controls are accepted (SimidSensorTiming);
  // impulse contact is not.
  // A dataset of the wrong shape, and one that is absent.
  {
    H5::H5File f(dir + "/imu.h5", H5F_ACC_RDWR);
    f.unlink("/trajectories/1/imu/tip");
    const RowMatrixXd five = RowMatrixXd::Zero(61, 5);
    const hsize_t dims[2] = {61, 5};
    f.createDataSet("/trajectories/1/imu/tip", H5::PredType::IEEE_F64LE, H5::DataSpace(2, dims))
        .write(five.data(), H5::PredType::NATIVE_DOUBLE);
  }
  refused(good, "imu.h5:/trajectories/1/imu/tip: expected shape (T=61, 6), got (61, 5)");
  {
    H5::H5File f(dir + "/imu.h5", H5F_ACC_RDWR);
    f.unlink("/trajectories/1/imu/tip");
  }
  refused(good, "/trajectories/1/imu/tip: observation channel 'imus.tip' is not in the data");
}

}  // namespace neuralsim::simid_imu_test
