#include "neuralsim/estimate/sensor_prediction.hpp"

#include <cmath>
#include <limits>

#include "neuralsim/estimate/joint_torque_residual.hpp"
#include "neuralsim/estimate/residual_common.hpp"

namespace neuralsim {

using namespace residual_internal;

void predict_sensors(const ResidualContext& ctx, const std::vector<double>& x, const Trajectory& recorded,
                     Trajectory& predicted) {
  const ObservationSpec& obs = ctx.observe;
  if (obs.imus.empty() && obs.joint_force_residuals() == 0) return;
  // The fit's simulation (model, contact) with the fitted control delay in
  // the step options, as the residuals see the sample (sample_acceleration).
  ResidualContext at_x = ctx;
  at_x.step = step_options_at(ctx, x);
  Simulation<double> sim(at_x, x.data());
  const Model<double>& model = sim.model();
  Stepper<double>& stepper = sim.stepper();
  const std::vector<ImuCalibration<double>> calibration = imu_calibrations(ctx, x.data());
  const std::vector<double> k_t = torque_constants(ctx, x.data());
  const Eigen::Index T = std::min(predicted.size(), recorded.size());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const ImuChannel& ch : obs.imus) predicted.imus[ch.name] = RowMatrixXd::Constant(T, 6, nan);
  if (obs.joint_torques.observed()) predicted.tau_measured = RowMatrixXd::Constant(T, model.nv, nan);
  if (obs.motor_currents.observed()) predicted.current = RowMatrixXd::Constant(T, model.nv, nan);
  // The channels' residuals against a zero reading with weight 1 are the
  // model's readings: one code path with the fit.
  ResidualContext unit = ctx;
  for (ImuChannel& ch : unit.observe.imus) ch.gyro_weight = ch.accel_weight = 1;
  if (unit.observe.joint_torques.observed()) unit.observe.joint_torques.weight = 1;
  if (unit.observe.motor_currents.observed()) unit.observe.motor_currents.weight = 1;
  Trajectory zero;
  for (const ImuChannel& ch : obs.imus) zero.imus[ch.name] = RowMatrixXd::Zero(1, 6);
  zero.tau_measured = RowMatrixXd::Zero(1, model.nv);
  zero.current = RowMatrixXd::Zero(1, model.nv);
  std::vector<double> r(6 * obs.imus.size() + static_cast<size_t>(obs.joint_force_residuals()));
  Eigen::VectorXd u, qdd;
  for (Eigen::Index k = 0; k < T; ++k) {
    const Eigen::VectorXd q = predicted.q.row(k).transpose(), qd = predicted.qd.row(k).transpose();
    if (!q.allFinite() || !qd.allFinite()) continue;
    sample_acceleration(stepper, recorded, static_cast<int>(k), q, qd, u, qdd);
    const int n = imu_residuals(unit, calibration, model, stepper.data(), zero, 0, q, qd, qdd, r.data());
    joint_force_residuals(unit, k_t, model, stepper.data(), zero, 0, q, qd, qdd, r.data() + n);
    size_t i = 0;
    for (const ImuChannel& ch : obs.imus)
      for (int c = 0; c < 6; ++c) predicted.imus[ch.name](k, c) = r[i++];
    for (const auto& [channel, m] : {std::pair<const JointForceChannel*, RowMatrixXd*>{&obs.joint_torques,
                                                                                       &predicted.tau_measured},
                                     {&obs.motor_currents, &predicted.current}})
      if (channel->observed())
        for (const int j : channel->joints) (*m)(k, model.joints[static_cast<size_t>(j)].idx_v) = r[i++];
  }
}

std::map<std::string, double> sensor_rmse(const ObservationSpec& observe, const Model<double>& model,
                                          const Trajectory& recorded, const Trajectory& predicted) {
  std::map<std::string, double> out;
  // Σ squared error and count over recorded entries (rows from 1: the
  // prediction starts from the data at row 0).
  auto add = [&](const std::string& channel, const RowMatrixXd& data, const RowMatrixXd& model_reading,
                 const std::vector<int>& columns) {
    double sum = 0;
    long long n = 0;
    const Eigen::Index T = std::min(data.rows(), model_reading.rows());
    for (Eigen::Index k = 1; k < T; ++k)
      for (const int c : columns) {
        const double d = data(k, c), m = model_reading(k, c);
        if (std::isnan(d) || std::isnan(m)) continue;
        sum += (m - d) * (m - d);
        ++n;
      }
    if (n > 0) out[channel] = std::sqrt(sum / static_cast<double>(n));
  };
  for (const ImuChannel& ch : observe.imus) {
    const auto d = recorded.imus.find(ch.name);
    const auto m = predicted.imus.find(ch.name);
    if (d == recorded.imus.end() || m == predicted.imus.end()) continue;
    add("imus." + ch.name + ".gyro", d->second, m->second, {0, 1, 2});
    add("imus." + ch.name + ".accel", d->second, m->second, {3, 4, 5});
  }
  auto columns = [&](const JointForceChannel& ch) {
    std::vector<int> c;
    for (const int j : ch.joints) c.push_back(model.joints[static_cast<size_t>(j)].idx_v);
    return c;
  };
  if (observe.joint_torques.observed() && recorded.tau_measured.size() > 0 && predicted.tau_measured.size() > 0)
    add("joint_torques", recorded.tau_measured, predicted.tau_measured, columns(observe.joint_torques));
  if (observe.motor_currents.observed() && recorded.current.size() > 0 && predicted.current.size() > 0)
    add("motor_currents", recorded.current, predicted.current, columns(observe.motor_currents));
  return out;
}

}  // namespace neuralsim
