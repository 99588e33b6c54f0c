// The IMU channels of the residuals (observe.imus, issue #36): each
// sensor's reading (imu.hpp) at a sample's (q, q̇, q̈), through its gain and
// bias, against the data's imu/<name> row. The shooting formulations take
// q̈ from the stepper's forward dynamics at the sample's state under the
// control the replay applies there (any interpolation, any control delay;
// force-level contact included, impulses not); inverse dynamics takes the
// filtered q̈ of its samples.
#pragma once

#include <cmath>
#include <vector>

#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/estimate/imu.hpp"
#include "neuralsim/estimate/residuals.hpp"
#include "neuralsim/step/control_signal.hpp"

namespace neuralsim {
namespace residual_internal {

// One sensor's calibration at θ: measured = gain · reading + bias, index 0
// the gyro, 1 the accelerometer.
template <class T>
struct ImuCalibration {
  T gain[2];
  Vec3<T> bias[2];
};

// The calibration of every sensor of ctx.observe.imus (in its order): the
// channel's fixed values, replaced by the fitted imu.<name>.* entries of θ.
template <class T>
std::vector<ImuCalibration<T>> imu_calibrations(const ResidualContext& ctx, const T* theta) {
  const std::vector<ImuChannel>& imus = ctx.observe.imus;
  std::vector<ImuCalibration<T>> out(imus.size());
  for (size_t s = 0; s < imus.size(); ++s)
    for (int c = 0; c < 2; ++c) {
      out[s].gain[c] = T(imus[s].gain[c]);
      out[s].bias[c] = imus[s].bias[c].cast<T>();
    }
  const ParameterSet& ps = *ctx.parameters;
  for (int i = 0; i < ps.size(); ++i) {
    if (ps[i].kind() != ParameterKind::kImu) continue;
    const NamedParameter& p = ps[i].target;
    for (size_t s = 0; s < imus.size(); ++s) {
      if (imus[s].name != p.sensor) continue;
      const T value = ps.physical<T>(i, theta[i]);
      if (p.axis < 0) out[s].gain[p.channel] = value;
      else out[s].bias[p.channel][p.axis] = value;
    }
  }
  return out;
}

// Writes the 6 residuals of every IMU at sample k of `tr` (gyro xyz times
// gyro_weight, then specific force xyz times accel_weight); a missing entry
// (NaN) writes 0. Runs rnea on `data`. Returns the number written.
template <class T>
int imu_residuals(const ResidualContext& ctx, const std::vector<ImuCalibration<T>>& calibration,
                  const Model<T>& model, Data<T>& data, const Trajectory& tr, int k, const VecX<T>& q,
                  const VecX<T>& qd, const VecX<T>& qdd, T* r) {
  const std::vector<ImuChannel>& imus = ctx.observe.imus;
  if (imus.empty()) return 0;
  rnea(model, data, q, qd, qdd);
  int n = 0;
  for (size_t s = 0; s < imus.size(); ++s) {
    const ImuReading<T> y = imu_reading(data, imus[s].mount);
    const RowMatrixXd& measured = tr.imus.at(imus[s].name);
    for (int c = 0; c < 2; ++c) {
      const Vec3<T>& value = c == 0 ? y.gyro : y.specific_force;
      const T w(c == 0 ? imus[s].gyro_weight : imus[s].accel_weight);
      for (int a = 0; a < 3; ++a) {
        const double m = measured(k, 3 * c + a);
        r[n++] = std::isnan(m) ? T(0) : w * (calibration[s].gain[c] * value[a] + calibration[s].bias[c][a] - T(m));
      }
    }
  }
  return n;
}

// q̈ at sample k of a shooting window: the stepper's forward dynamics at
// (q, q̇) under the control the replay applies at t_k (step/replay.hpp):
// the recorded u_k for a zero-order hold without delay; otherwise the
// recorded controls interpolated as sim.controls says, at t_k − d under a
// control delay d (`delay`: a fitted one whose derivatives reach u through
// ∂u/∂d = −du/dt; null: the stepper's fixed sim.controls.delay). This is
// the acceleration of the state at t_k, as the step that starts there sees
// it: exact wherever the replay applies forces only (no contact impulses).
template <class T>
void sample_acceleration(Stepper<T>& stepper, const Trajectory& tr, int k, const VecX<T>& q, const VecX<T>& qd,
                         VecX<T>& u, VecX<T>& qdd, const T* delay = nullptr) {
  const int nv = stepper.model().nv;
  const ControlSignal& signal = stepper.options().controls;
  u = VecX<T>::Zero(nv);
  if (tr.has_tau()) {
    const double t = tr.time[k];
    if (delay) {
      const double d = to_double(*delay);
      apply_delayed_control_stencil(delayed_control_stencil(signal, tr.time, t, t, d), tr.tau, T(*delay - T(d)), u);
    } else if (signal.delay != 0.0) {
      apply_control_stencil(delayed_control_stencil(signal, tr.time, t, t, signal.delay), tr.tau, u);
    } else if (!signal.is_zero_order_hold() && tr.size() > 1) {
      // The interval that holds t_k: k's own, or the last one at the last sample.
      const int interval = std::min<int>(k, static_cast<int>(tr.size()) - 2);
      apply_control_stencil(control_stencil(signal, tr.time, interval, t, t), tr.tau, u);
    } else {
      for (int i = 0; i < nv; ++i) u[i] = T(tr.tau(k, i));
    }
  }
  stepper.forward_dynamics(q, qd, u, tr.time[k]);
  qdd = stepper.data().qdd;
}

// A shooting sample's IMU rows: shooting_sensor_residuals
// (joint_torque_residual.hpp), which takes q̈ once for every sensor channel.

}  // namespace residual_internal
}  // namespace neuralsim
