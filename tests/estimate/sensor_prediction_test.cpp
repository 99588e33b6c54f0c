// The sensor channels' reported errors (estimate/sensor_prediction.hpp): on
// data our model generated (an IMU on the double pendulum's second link,
// its joints' link-side torques and motor currents), the prediction's
// readings reproduce the data, so the gyro's RMSE is ~0; a known constant
// offset on the accelerometer, the torque sensors and the currents gives
// the closed-form RMSE |b|/√3 per accelerometer axis and |c| per joint.
#include <gtest/gtest.h>

#include <cmath>

#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/estimate/imu.hpp"
#include "neuralsim/estimate/sensor_prediction.hpp"
#include "neuralsim/io/yaml_model.hpp"
#include "neuralsim/spatial/types.hpp"
#include "support/files.hpp"
#include "support/fit_support.hpp"

namespace neuralsim::sensor_prediction_test {

TEST(SensorPrediction, ReportedErrorsAreZeroOnModelDataAndTheOffsetWithABias) {
  const Model<double> model = load_yaml_model(testing::source_path("configs/models/double_pendulum.yaml"));
  StepOptions step;
  step.integrator = Integrator::kRK4;
  step.dt = 0.01;
  testing::SinusoidRun run{Eigen::Vector2d(0.5, -0.3), Eigen::Vector2d(6.0, 2.0), Eigen::Vector2d(0.7, 1.3)};
  Trajectory tr = testing::record_sinusoids(model, step, {run}, 40)[0];
  ObservationSpec observe;
  ImuChannel imu;
  imu.name = "tip";
  imu.mount.body = model.body_index("link2");
  imu.mount.position = Eigen::Vector3d(0.2, 0.1, -1.5);
  imu.mount.rotation = rpy_rotation(0.2, -0.3, 0.5);
  observe.imus.push_back(imu);
  observe.joint_torques = {1.0, {0, 1}};
  observe.motor_currents = {1.0, {1}};
  observe.torque_constant = {1.0, 0.5};
  // The data: the model's readings (q̈ from the forward dynamics under the
  // held control), then the offsets.
  const Eigen::Vector3d accel_bias(0.3, -0.2, 0.1);
  const double torque_offset = 0.07, current_offset = -0.04;
  Stepper<double> stepper(model, step);
  tr.imus["tip"].resize(tr.size(), 6);
  tr.tau_measured.resize(tr.size(), 2);
  tr.current = RowMatrixXd::Constant(tr.size(), 2, std::nan(""));  // joint 1 has no current sensor
  for (Eigen::Index k = 0; k < tr.size(); ++k) {
    const Eigen::VectorXd q = tr.q.row(k).transpose(), qd = tr.qd.row(k).transpose();
    stepper.forward_dynamics(q, qd, tr.tau.row(k).transpose(), tr.time[k]);
    const Eigen::VectorXd qdd = stepper.data().qdd;
    rnea(model, stepper.data(), q, qd, qdd);
    const ImuReading<double> y = imu_reading(stepper.data(), imu.mount);
    tr.imus["tip"].row(k) << y.gyro.transpose(), (y.specific_force + accel_bias).transpose();
    for (int j = 0; j < 2; ++j)  // no armature: the link-side torque is rnea's
      tr.tau_measured(k, j) = stepper.data().tau[j] + torque_offset;
    tr.current(k, 1) = tr.tau(k, 1) / 0.5 + current_offset;
  }
  const ParameterSet params;
  const ResidualContext ctx{&model, &params, step, observe};
  const std::vector<double> x;
  Trajectory pred = windowed_prediction(ctx, x, tr, 1000);
  predict_sensors(ctx, x, tr, pred);
  ASSERT_EQ(pred.imus.at("tip").rows(), tr.size());
  EXPECT_TRUE(std::isnan(pred.current(5, 0)));  // an unobserved column
  const std::map<std::string, double> rmse = sensor_rmse(observe, model, tr, pred);
  ASSERT_EQ(rmse.size(), 4u);
  EXPECT_LT(rmse.at("imus.tip.gyro"), 1e-9);
  EXPECT_NEAR(rmse.at("imus.tip.accel"), accel_bias.norm() / std::sqrt(3.0), 1e-9);
  EXPECT_NEAR(rmse.at("joint_torques"), torque_offset, 1e-9);
  EXPECT_NEAR(rmse.at("motor_currents"), std::abs(current_offset), 1e-9);
}

}  // namespace neuralsim::sensor_prediction_test
