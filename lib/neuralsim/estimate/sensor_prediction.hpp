// The model's readings of the sensor channels of an observation (IMUs
// through their calibration, joint-torque sensors, motor currents) along a
// predicted trajectory, and their errors against the recording: what the
// residuals compare, for simid's prediction errors, fit.h5 and the report
// (issue #36). The same functions as the residuals (imu_residual.hpp,
// joint_torque_residual.hpp) in doubles: q̈ at each sample from the forward
// dynamics under the recorded control held there.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "neuralsim/estimate/residuals.hpp"

namespace neuralsim {

// Fills predicted.imus[<name>] (T, 6: calibrated gyro, accelerometer),
// predicted.tau_measured and predicted.current (T, nv; NaN in the columns
// of joints the channel does not observe) for the sensor channels of
// ctx.observe, at the parameters x, along predicted's (q, q̇) with
// recorded's controls (predicted and recorded: the same samples). Nothing
// when ctx.observe has no sensor channel.
void predict_sensors(const ResidualContext& ctx, const std::vector<double>& x, const Trajectory& recorded,
                     Trajectory& predicted);

// RMSE per sensor channel between the recording and predict_sensors'
// readings, over the entries the recording holds (NaN = missing, skipped)
// at every sample but the first (where a prediction starts from the data):
// "imus.<name>.gyro" (rad/s) and "imus.<name>.accel" (m/s²), the RMSE per
// axis; "joint_torques" (N·m) and "motor_currents" (A), per observed joint.
// A channel with no entry is left out.
std::map<std::string, double> sensor_rmse(const ObservationSpec& observe, const Model<double>& model,
                                          const Trajectory& recorded, const Trajectory& predicted);

}  // namespace neuralsim
