// simid observing joint-torque sensors and motor currents (issue #36):
// data from our own engine on the double pendulum with joint damping and
// armature, the link-side torque Sᵀf (what a sensor between gearbox and
// link reads) and the current u / k_t, each with noise. A shooting fit that
// sees only the torque sensors (q weight 0) recovers the joints' damping; a
// fit of q and currents recovers both torque constants and a link mass
// within their intervals, and the reported current error is the noise's σ. Bad configs and data are refused as the exit
// codes say: ConfigError (2), DataError (3).
#include <gtest/gtest.h>

#include <H5Cpp.h>

#include <cmath>
#include <random>

#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/io/config.hpp"
#include "neuralsim/io/hdf5_trajectory.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/tools/identify.hpp"
#include "support/files.hpp"
#include "support/fit_support.hpp"

namespace neuralsim::simid_joint_torque_test {
namespace {

constexpr double kSjtTorqueNoise = 0.05, kSjtCurrentNoise = 0.01, kSjtPositionNoise = 1e-3;  // N·m, A, rad
const double kSjtTorqueConstant[2] = {2.0, 0.5};
constexpr const char* kSjtModel =
    "model: {generator: double_pendulum, lengths: [3.0, 4.0], masses: [1.0, 1.5], joints: {joint1: {damping: 0.6, "
    "armature: 0.3}, joint2: {damping: 0.25, armature: 0.3}}}\n";

// Two recordings under sinusoidal torques (zero-order hold, as replayed),
// with the link-side torque at each sample (q̈ from the forward dynamics
// under the control held there, then rnea's subtree forces f: Sᵀf, without
// the drive's armature) and the motor current u / k_t, both noisy.
TrajectorySet sjt_record(const Model<double>& model, bool encoder_noise) {
  StepOptions step;
  step.integrator = Integrator::kRK4;
  step.dt = 0.01;
  std::vector<testing::SinusoidRun> runs{{Eigen::Vector2d(0.5, -0.3), Eigen::Vector2d(20.0, 8.0),
                                          Eigen::Vector2d(0.7, 1.3)},
                                         {Eigen::Vector2d(-0.8, 0.6), Eigen::Vector2d(20.0, 8.0),
                                          Eigen::Vector2d(0.9, 0.5)}};
  TrajectorySet set;
  set.meta.model = model.name;
  set.meta.joint_names = model.velocity_names();
  set.trajectories = testing::record_sinusoids(model, step, runs, 60);
  Stepper<double> stepper(model, step);
  std::mt19937 rng(36);
  std::normal_distribution<double> unit;
  for (Trajectory& tr : set.trajectories) {
    tr.tau_measured.resize(tr.size(), 2);
    tr.current.resize(tr.size(), 2);
    for (Eigen::Index k = 0; k < tr.size(); ++k) {
      const Eigen::VectorXd q = tr.q.row(k).transpose(), qd = tr.qd.row(k).transpose();
      stepper.forward_dynamics(q, qd, tr.tau.row(k).transpose(), tr.time[k]);
      const Eigen::VectorXd qdd = stepper.data().qdd;
      rnea(model, stepper.data(), q, qd, qdd);
      for (int j = 0; j < 2; ++j) {
        // A revolute joint's subtree force about its axis (the axis is the
        // joint frame's; the subtree force is in the child's coordinates).
        const Eigen::Vector3d n = stepper.data().f[static_cast<size_t>(j)].head<3>();
        tr.tau_measured(k, j) = model.joints[static_cast<size_t>(j)].axis.dot(n) + kSjtTorqueNoise * unit(rng);
        tr.current(k, j) = tr.tau(k, j) / kSjtTorqueConstant[j] + kSjtCurrentNoise * unit(rng);
      }
    }
    // Encoder noise (inverse dynamics: none, its q̈ is a second derivative
    // of q), except at the 20-sample window starts (a noisy start
    // would bias the fit: errors in variables, not what is measured here).
    for (Eigen::Index k = 0; k < tr.size() && encoder_noise; ++k)
      for (int j = 0; j < 2; ++j) tr.q(k, j) += k % 20 ? kSjtPositionNoise * unit(rng) : 0.0;
  }
  return set;
}

std::string sjt_config(const std::string& model_file, const std::string& parameters, const std::string& observe,
                       const std::string& residual = "{type: single_shooting, window: 20}") {
  return "model: {file: " + model_file + "}\n" +
         "sim: {integrator: rk4, dt: 0.01}\n"
         "data: {train: sensors.h5}\n"
         "estimate:\n"
         "  parameters:\n" + parameters +
         "  observe: " + observe + "\n" +
         "  residual: " + residual + "\n" +
         "  solver: {max_iterations: 40}\n"
         "  basin_hopping: {enabled: false}\n"
         "output: {plot: false}\n";
}

struct SjtSetup {
  std::string dir, model_file;
  Model<double> model;
};
SjtSetup sjt_setup(const std::string& name, bool encoder_noise = true) {
  SjtSetup s;
  s.dir = testing::fresh_dir(name);
  s.model_file = s.dir + "/model.yaml";
  testing::write_file(s.model_file, kSjtModel);
  s.model = load_yaml_model(s.model_file);
  write_trajectories(s.dir + "/sensors.h5", sjt_record(s.model, encoder_noise));
  return s;
}

IdentificationResult sjt_fit(const SjtSetup& s, const std::string& config) {
  testing::write_file(s.dir + "/fit.yaml", config);
  return identify({Config::load(s.dir + "/fit.yaml"), 1, ""});
}

void sjt_expect_recovered(const IdentificationResult& r, const std::vector<double>& truth, double max_std_error,
                          double max_error = 0) {
  ASSERT_EQ(r.status, RunStatus::kOk) << r.message;
  ASSERT_EQ(r.parameters.size(), truth.size());
  for (size_t i = 0; i < truth.size(); ++i) {
    const IdentifiedParameter& p = r.parameters[i];
    EXPECT_TRUE(std::isfinite(p.std_error) && p.std_error > 0) << p.name;
    EXPECT_NEAR(p.value, truth[i], max_error > 0 ? max_error : 4 * p.std_error) << p.name << " ± " << p.std_error;
    EXPECT_LT(p.std_error, max_std_error) << p.name;
    std::printf("[ measured ] %s = %.5f ± %.5f (truth %.5f)\n", p.name.c_str(), p.value, p.std_error, truth[i]);
  }
}

}  // namespace

TEST(SimidJointTorque, TorqueSensorsAloneRecoverTheJointDamping) {
  const SjtSetup s = sjt_setup("simid_joint_torque_damping");
  const std::string parameters =
      "    - {name: joint.joint1.damping, initial: 0.1, bounds: [0, 5]}\n"
      "    - {name: joint.joint2.damping, initial: 1.0, bounds: [0, 5]}\n";
  // weight = 1/σ of the sensor: the residuals are in units of its noise.
  sjt_expect_recovered(sjt_fit(s, sjt_config(s.model_file, parameters, "{q: 0, joint_torques: {weight: 20}}")),
                       {0.6, 0.25}, 0.02);
  sjt_expect_recovered(sjt_fit(s, sjt_config(s.model_file, parameters, "{q: 0, joint_torques: {weight: 20}}",
                                             "{type: multiple_shooting, window: 20}")),
                       {0.6, 0.25}, 0.1);  // the free segment states take degrees of freedom from q̇
}

// Inverse dynamics: the torque sensor of the second joint alone (beside the
// commanded torque rows) and the currents, at the filtered q̈.
TEST(SimidJointTorque, InverseDynamicsTakesTheSensorsAtTheFilteredAcceleration) {
  const SjtSetup s = sjt_setup("simid_joint_torque_inverse", false);
  const std::string parameters =
      "    - {name: link.link2.mass, initial: 1.0, bounds: [0.1, 5]}\n"
      "    - {name: joint.joint1.torque_constant, initial: 1, bounds: [0.05, 20]}\n"
      "    - {name: joint.joint2.torque_constant, initial: 1, bounds: [0.05, 20]}\n";
  sjt_expect_recovered(
      sjt_fit(s, sjt_config(s.model_file, parameters,
                            "{q: 1, joint_torques: {weight: 20, joints: [joint2]}, motor_currents: {weight: 100}}",
                            "{type: inverse_dynamics, derivatives: {method: savitzky_golay, window: 9, order: 4}}")),
      {1.5, kSjtTorqueConstant[0], kSjtTorqueConstant[1]}, 0.05);
}

// The default derivative window counts samples: at this recording's
// 100 Hz its 31 samples span 0.3 s, and the fit says so (not with a window
// given).
TEST(SimidJointTorque, TheDefaultDerivativeWindowIsFlaggedAtALowRate) {
  const SjtSetup s = sjt_setup("simid_joint_torque_window", false);
  const std::string parameters = "    - {name: link.link2.mass, initial: 1.0, bounds: [0.1, 5]}\n";
  auto flagged = [](const IdentificationResult& r) {
    for (const std::string& w : r.warnings)
      if (w.find("default Savitzky–Golay window of 31 samples spans 0.3 s") != std::string::npos &&
          w.find("100 Hz") != std::string::npos && w.find("e.g. 5 samples") != std::string::npos)
        return true;
    return false;
  };
  const IdentificationResult by_default = sjt_fit(s, sjt_config(s.model_file, parameters, "{q: 1}", "{type: inverse_dynamics}"));
  ASSERT_EQ(by_default.status, RunStatus::kOk) << by_default.message;
  EXPECT_TRUE(flagged(by_default)) << ::testing::PrintToString(by_default.warnings);
  const IdentificationResult given = sjt_fit(
      s, sjt_config(s.model_file, parameters, "{q: 1}",
                    "{type: inverse_dynamics, derivatives: {method: savitzky_golay, window: 9, order: 4}}"));
  EXPECT_FALSE(flagged(given));
}

// estimate.observe.commanded_torques: inverse dynamics without the
// commanded-torque rows (weight 0) fits the link mass from the torque
// sensors alone, untouched by a recorded command that is wrong by a factor
// of 2, from which the rows alone are pulled far off. `joints` keeps the
// rows of the joint whose command is right.
TEST(SimidJointTorque, CommandedTorqueRowsCanBeDroppedOrSelected) {
  const SjtSetup s = sjt_setup("simid_joint_torque_commanded", false);
  const std::string parameters = "    - {name: link.link2.mass, initial: 1.0, bounds: [0.1, 5]}\n";
  const std::string id = "{type: inverse_dynamics, derivatives: {method: savitzky_golay, window: 9, order: 4}}";
  auto with_command_scaled = [&](const std::string& file, double joint1, double joint2) {
    TrajectorySet data = read_trajectories(s.dir + "/sensors.h5");
    for (Trajectory& t : data.trajectories) {
      t.tau.col(0) *= joint1;
      t.tau.col(1) *= joint2;
    }
    write_trajectories(s.dir + "/" + file, data);
  };
  with_command_scaled("both_wrong.h5", 2, 2);
  with_command_scaled("first_wrong.h5", 2, 1);
  auto fit = [&](const std::string& file, const std::string& observe) {
    std::string config = sjt_config(s.model_file, parameters, observe, id);
    config.replace(config.find("sensors.h5"), 10, file);
    return sjt_fit(s, config);
  };
  // The sensors alone: the wrong command is not read.
  const IdentificationResult sensors =
      fit("both_wrong.h5", "{q: 1, joint_torques: {weight: 20}, commanded_torques: {weight: 0}}");
  sjt_expect_recovered(sensors, {1.5}, 0.05);
  // The command's rows alone are pulled far off by it.
  const IdentificationResult commanded = fit("both_wrong.h5", "{q: 1}");
  ASSERT_EQ(commanded.status, RunStatus::kOk) << commanded.message;
  std::printf("[ measured ] from the wrong command: %.5f ± %.5f\n", commanded.parameters[0].value,
              commanded.parameters[0].std_error);
  EXPECT_GT(std::abs(commanded.parameters[0].value - 1.5), 0.1);
  // The second joint's command alone (the first one's is wrong).
  sjt_expect_recovered(fit("first_wrong.h5", "{q: 1, commanded_torques: {joints: [joint2]}}"), {1.5}, 0.05, 0.02);
  const IdentificationResult both = fit("first_wrong.h5", "{q: 1}");
  ASSERT_EQ(both.status, RunStatus::kOk) << both.message;
  std::printf("[ measured ] with both joints' command rows: %.5f ± %.5f\n", both.parameters[0].value,
              both.parameters[0].std_error);
  EXPECT_GT(std::abs(both.parameters[0].value - 1.5), 0.1);
  // Weight 0 with nothing else to compare, and outside the torque rows.
  testing::write_file(s.dir + "/fit.yaml", sjt_config(s.model_file, parameters, "{q: 1, commanded_torques: {weight: 0}}", id));
  testing::expect_contains(testing::config_or_data_error([&] { identify({Config::load(s.dir + "/fit.yaml"), 1, ""}); }, true),
                           {"estimate.observe.commanded_torques", "nothing to compare"});
  testing::write_file(s.dir + "/fit.yaml", sjt_config(s.model_file, parameters, "{q: 1, commanded_torques: {weight: 2}}"));
  testing::expect_contains(testing::config_or_data_error([&] { identify({Config::load(s.dir + "/fit.yaml"), 1, ""}); }, true),
                           {"estimate.observe.commanded_torques", "this fit has none"});
}

// Per-row weights of the commanded torques: the cost is each row's squared
// residual times its weight squared, exactly (evaluations at the initial
// values: one row at a time against both weighted).
TEST(SimidJointTorque, CommandedTorqueRowWeightsScaleEachJointsResiduals) {
  const SjtSetup s = sjt_setup("simid_joint_torque_row_weights", false);
  const std::string parameters = "    - {name: link.link2.mass, initial: 1.0, bounds: [0.1, 5]}\n";
  const std::string id = "{type: inverse_dynamics, derivatives: {method: savitzky_golay, window: 9, order: 4}}";
  auto cost = [&](const std::string& observe) {
    std::string config = sjt_config(s.model_file, parameters, observe, id);
    config.replace(config.find("max_iterations: 40"), 18, "max_iterations: 0");
    const IdentificationResult r = sjt_fit(s, config);
    EXPECT_EQ(r.status, RunStatus::kOk) << r.message;
    return r.cost;
  };
  const double first = cost("{q: 1, commanded_torques: {joints: [joint1]}}");
  const double second = cost("{q: 1, commanded_torques: {joints: [joint2]}}");
  const double weighted = cost("{q: 1, commanded_torques: {weight: [2, 0.5]}}");
  ASSERT_GT(first, 0);
  ASSERT_GT(second, 0);
  EXPECT_NEAR(weighted, 4 * first + 0.25 * second, 1e-12 * weighted);
  EXPECT_NEAR(cost("{q: 1, commanded_torques: {weight: [3], joints: [joint2]}}"), 9 * second, 1e-12 * second);
  testing::write_file(s.dir + "/fit.yaml",
                      sjt_config(s.model_file, parameters, "{q: 1, commanded_torques: {weight: [1, 2, 3]}}", id));
  testing::expect_contains(
      testing::config_or_data_error([&] { identify({Config::load(s.dir + "/fit.yaml"), 1, ""}); }, true),
      {"estimate.observe.commanded_torques.weight", "expected 2 weights (one per velocity coordinate), got 3"});
}

TEST(SimidJointTorque, CurrentsAndPositionsRecoverTorqueConstantsAndAMass) {
  const SjtSetup s = sjt_setup("simid_joint_torque_currents");
  const std::string parameters =
      "    - {name: link.link2.mass, initial: 1.0, bounds: [0.1, 5]}\n"
      "    - {name: joint.joint1.torque_constant, initial: 1, bounds: [0.05, 20]}\n"
      "    - {name: joint.joint2.torque_constant, initial: 1, bounds: [0.05, 20]}\n";
  // Weights 1/σ: 1000 for the encoders, 100 for the currents.
  const IdentificationResult r =
      sjt_fit(s, sjt_config(s.model_file, parameters, "{q: 1000, motor_currents: {weight: 100}}"));
  sjt_expect_recovered(r, {1.5, kSjtTorqueConstant[0], kSjtTorqueConstant[1]}, 0.05);
  // The reported current error along the prediction is the noise's σ
  // (120 samples: within 20 %).
  for (const TrajectoryFit& t : r.train.per_trajectory)
    EXPECT_NEAR(t.rmse_sensors.at("motor_currents"), kSjtCurrentNoise, 0.2 * kSjtCurrentNoise) << t.name;
}

TEST(SimidJointTorque, BadConfigsAndDataAreRefusedWithTheirExitCodes) {
  const SjtSetup s = sjt_setup("simid_joint_torque_errors");
  const std::string parameters = "    - {name: joint.joint2.torque_constant, initial: 1, bounds: [0.05, 20]}\n";
  const std::string good = sjt_config(s.model_file, parameters, "{q: 1, motor_currents: {weight: 100, joints: [joint2]}}");
  auto replaced = [](std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  // ConfigError: exit code 2; DataError: 3 (README.md).
  auto refused = [&](const std::string& config, const std::string& expected, bool data_error) {
    testing::write_file(s.dir + "/fit.yaml", config);
    try {
      identify({Config::load(s.dir + "/fit.yaml"), 1, ""});
      ADD_FAILURE() << "no error for: " << expected;
    } catch (const ConfigError& e) {
      EXPECT_FALSE(data_error) << e.what();
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    } catch (const DataError& e) {
      EXPECT_TRUE(data_error) << e.what();
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  refused(replaced(good, "joints: [joint2]", "joints: [joint7]"),
          "estimate.observe.motor_currents.joints.0': unknown joint 'joint7'", false);
  refused(replaced(good, "weight: 100", "weight: -1"), "estimate.observe.motor_currents.weight'", false);
  refused(replaced(good, "motor_currents: {weight: 100,", "joint_torques: {weight: 1, scale: 2,"),
          "estimate.observe.joint_torques", false);
  refused(replaced(good, "bounds: [0.05, 20]", "bounds: [0, 20]"), "torque constant 'joint.joint2.torque_constant' must stay > 0",
          false);
  refused(replaced(good, "joint.joint2.torque_constant", "joint.joint1.torque_constant"),
          "which estimate.observe.motor_currents does not observe", false);
  refused(replaced(good, "data: {train", "params: {joint.joint1.torque_constant: -1}\ndata: {train"),
          "expected a finite torque constant > 0, got -1", false);
  // A current of the wrong shape, then none at all.
  {
    H5::H5File f(s.dir + "/sensors.h5", H5F_ACC_RDWR);
    f.unlink("/trajectories/1/current");
    const RowMatrixXd three = RowMatrixXd::Zero(61, 3);
    const hsize_t dims[2] = {61, 3};
    f.createDataSet("/trajectories/1/current", H5::PredType::IEEE_F64LE, H5::DataSpace(2, dims))
        .write(three.data(), H5::PredType::NATIVE_DOUBLE);
  }
  refused(good, "sensors.h5:/trajectories/1/current: expected shape (T=61, nv=2), got (61, 3)", true);
  {
    H5::H5File f(s.dir + "/sensors.h5", H5F_ACC_RDWR);
    f.unlink("/trajectories/1/current");
  }
  refused(good, "/trajectories/1/current: observation channel 'motor_currents' is not in the data", true);
}

}  // namespace neuralsim::simid_joint_torque_test
