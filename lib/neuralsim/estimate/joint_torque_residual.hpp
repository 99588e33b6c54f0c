// The joint-force channels of the residuals (observe.joint_torques and
// observe.motor_currents, issue #36): the model's torque at each observed
// joint at a sample's (q, q̇, q̈), against the data's tau_measured or
// current row (observation.hpp, JointForceChannel, says what each sees).
// The shooting formulations take q̈ from the stepper's forward dynamics at
// the sample's state and recorded control, as the IMU channels do
// (imu_residual.hpp); inverse dynamics takes the filtered q̈ of its samples.
//
// In shooting, the actuator input the model needs at its own simulated
// motion is the recorded control (forward then inverse dynamics), so a
// motor-current residual there sees the model only through k_t, and a
// joint-torque residual only through the drive's terms it leaves out
// (u·gear + τ_passive − armature·q̈ − rotor): the mass and geometry are
// seen through the motion (q, links, IMUs) or in inverse dynamics
// (docs/simid.md, Observation channels).
#pragma once

#include <cmath>
#include <vector>

#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/estimate/imu_residual.hpp"
#include "neuralsim/estimate/residuals.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/step/passive_forces.hpp"

namespace neuralsim {
namespace residual_internal {

// The torque constant of every joint at θ: the channel's fixed values,
// replaced by the fitted joint.<name>.torque_constant entries of θ.
template <class T>
std::vector<T> torque_constants(const ResidualContext& ctx, const T* theta) {
  const int joints = static_cast<int>(ctx.model->joints.size());
  std::vector<T> out(static_cast<size_t>(joints));
  if (!ctx.observe.motor_currents.observed()) return out;
  for (int j = 0; j < joints; ++j) out[static_cast<size_t>(j)] = T(ctx.observe.torque_constant_of(j));
  const ParameterSet& ps = *ctx.parameters;
  for (int i = 0; i < ps.size(); ++i)
    if (ps[i].kind() == ParameterKind::kTorqueConstant)
      out[static_cast<size_t>(ps[i].target.joint)] = ps.physical<T>(i, theta[i]);
  return out;
}

// The link-side torque of 1-DoF joint j after rnea: Sᵀf of its subtree,
// without the drive's armature and rotor terms rnea adds to data.tau.
template <class T>
T link_side_torque(const Joint<T>& j, const Data<T>& data, int body) {
  Mat6<T> S;
  motion_subspace(j, S);
  return S.col(0).dot(data.f[static_cast<size_t>(body)]);
}

// Writes the joint-torque rows, then the motor-current rows, of sample k of
// `tr` at (q, q̇, q̈) (a missing entry writes 0). Runs rnea and
// passive_forces on `data` (its f_ext is kept: the stepper's body drag and
// hooks, or the inverse-dynamics residual's drag). Returns the number
// written.
template <class T>
int joint_force_residuals(const ResidualContext& ctx, const std::vector<T>& k_t, const Model<T>& model,
                          Data<T>& data, const Trajectory& tr, int k, const VecX<T>& q, const VecX<T>& qd,
                          const VecX<T>& qdd, T* r) {
  const ObservationSpec& obs = ctx.observe;
  if (obs.joint_force_residuals() == 0) return 0;
  rnea(model, data, q, qd, qdd);
  int n = 0;
  if (obs.joint_torques.observed()) {
    const T w(obs.joint_torques.weight);
    for (const int j : obs.joint_torques.joints) {
      const Joint<T>& joint = model.joints[static_cast<size_t>(j)];
      const double m = tr.tau_measured(k, joint.idx_v);
      r[n++] = std::isnan(m) ? T(0) : w * (link_side_torque(joint, data, j) - T(m));
    }
  }
  if (obs.motor_currents.observed()) {
    passive_forces(model, data, q, qd);
    const T w(obs.motor_currents.weight);
    for (const int j : obs.motor_currents.joints) {
      const Joint<T>& joint = model.joints[static_cast<size_t>(j)];
      const int i = joint.idx_v;
      const double m = tr.current(k, i);
      const T u = (data.tau[i] - data.tau_passive[i]) / joint.dynamics.gear_ratio;
      r[n++] = std::isnan(m) ? T(0) : w * (u / k_t[static_cast<size_t>(j)] - T(m));
    }
  }
  return n;
}

// The IMU and joint-force residuals of a shooting sample (none without
// those channels): q̈ once from the forward dynamics (under the fitted
// control delay `delay` when not null: sample_acceleration), then
// imu_residuals and joint_force_residuals.
template <class T>
int shooting_sensor_residuals(const ResidualContext& ctx, const std::vector<ImuCalibration<T>>& calibration,
                              const std::vector<T>& k_t, Stepper<T>& stepper, const Trajectory& tr, int k,
                              const VecX<T>& q, const VecX<T>& qd, T* r, const T* delay = nullptr) {
  if (ctx.observe.imus.empty() && ctx.observe.joint_force_residuals() == 0) return 0;
  VecX<T> u, qdd;
  sample_acceleration(stepper, tr, k, q, qd, u, qdd, delay);
  int n = imu_residuals(ctx, calibration, stepper.model(), stepper.data(), tr, k, q, qd, qdd, r);
  n += joint_force_residuals(ctx, k_t, stepper.model(), stepper.data(), tr, k, q, qd, qdd, r + n);
  return n;
}

}  // namespace residual_internal
}  // namespace neuralsim
