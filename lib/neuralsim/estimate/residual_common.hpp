// Internal helpers shared by the residual translation units. Each
// formulation lives in its own .cpp so the heavy Jet instantiations compile
// in parallel.
#pragma once

#include "neuralsim/estimate/residuals.hpp"
#include "neuralsim/estimate/sensor_delays.hpp"

#include <ceres/dynamic_autodiff_cost_function.h>

#include <cmath>

#include "neuralsim/contact/contact_system.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/dynamics/rnea.hpp"
#include "neuralsim/model/configuration.hpp"
#include "neuralsim/step/passive_forces.hpp"
#include "neuralsim/step/replay.hpp"


namespace neuralsim {
namespace residual_internal {

// Jets carry derivatives for `Stride` parameters per pass and Ceres runs as
// many passes as needed. One stride, the engine's one instantiated Jet
// width (core/scalar.hpp): fewer parameters leave lanes unused.
constexpr int kStride = 8;

// Whether joint j's recorded position at sample k is missing (any of its
// coordinates NaN: docs/data-format.md). A branch on the data, never on a
// scalar that carries derivatives.
inline bool joint_position_missing(const Joint<double>& j, const Trajectory& tr, int k) {
  for (int c = 0; c < j.nq; ++c)
    if (std::isnan(tr.q(k, j.idx_q + c))) return true;
  return false;
}

// The rotation vector log(R_dataᵀ R_model) of a measured orientation
// (quaternion x y z w, link to world; normalized here) against the model's
// world-to-link rotation E = R_modelᵀ: the error in the measured link frame
// (observation.hpp, LinkOrientationChannel). The quaternion logarithm as in
// difference_configuration: the shorter way round, and near the identity
// its first-order form, whose derivatives are exact there.
template <class T>
Vec3<T> orientation_error(const Eigen::Vector4d& measured_xyzw, const Mat3<T>& E_model) {
  const Eigen::Vector4d m = measured_xyzw.normalized();
  const Eigen::Quaternion<T> data{T(m[3]), T(m[0]), T(m[1]), T(m[2])};
  const Eigen::Quaternion<T> model{Mat3<T>(E_model.transpose())};
  Eigen::Quaternion<T> d = data.conjugate() * model;
  if (d.w() < T(0)) d.coeffs() = -d.coeffs();  // q and −q are one rotation: the shorter way round
  using std::atan2;
  const T sn = d.vec().norm();
  if (sn < T(1e-12)) return T(2) * d.vec();
  return d.vec() * (T(2) * atan2(sn, d.w()) / sn);
}

// Writes the residuals of one sample; returns the number written. Without
// `delayed` the channels compare (q, qd), the state at t_k. A missing entry
// of the data (NaN) writes a residual 0 (observation.hpp), as does a masked
// delayed channel. Joint channels compare only the joints they observe
// (ObservationSpec::q_joints, qd_joints).
template <class T>
int sample_residuals(const ResidualContext& ctx, const Model<T>& model, Data<T>& data, const Trajectory& tr, int k,
                     const VecX<T>& q, const VecX<T>& qd, VecX<T>& dq, T* r,
                     const DelayedJointChannels<T>* delayed = nullptr) {
  int n = 0;
  const ObservationSpec& obs = ctx.observe;
  const Model<double>& shape = *ctx.model;
  const int joints = static_cast<int>(shape.joints.size());
  const VecX<T>* q_seen = delayed ? delayed->q : &q;
  const VecX<T>* qd_seen = delayed ? delayed->qd : &qd;
  if (obs.q_weight > 0) {
    if (q_seen) {
      // Missing coordinates take the model's value, so the difference is
      // defined (and its entries are not written).
      VecX<T> qk = tr.q.row(k).transpose().cast<T>();
      for (int i = 0; i < model.nq; ++i)
        if (std::isnan(tr.q(k, i))) qk[i] = (*q_seen)[i];
      difference_configuration(model, qk, *q_seen, dq);
      for (int j = 0; j < joints; ++j) {
        if (!obs.observes(0, j)) continue;
        const Joint<double>& joint = shape.joints[j];
        const bool missing = joint_position_missing(joint, tr, k);
        for (int c = 0; c < joint.nv; ++c) r[n++] = missing ? T(0) : T(obs.q_weight) * dq[joint.idx_v + c];
      }
    } else {
      for (int j = 0; j < joints; ++j)
        if (obs.observes(0, j))
          for (int c = 0; c < shape.joints[j].nv; ++c) r[n++] = T(0);
    }
  }
  if (obs.qd_weight > 0)
    for (int j = 0; j < joints; ++j) {
      if (!obs.observes(1, j)) continue;
      for (int c = 0; c < shape.joints[j].nv; ++c) {
        const int i = shape.joints[j].idx_v + c;
        const double measured = tr.qd(k, i);
        r[n++] = qd_seen && !std::isnan(measured) ? T(obs.qd_weight) * ((*qd_seen)[i] - T(measured)) : T(0);
      }
    }
  if (!obs.link_positions.empty() || !obs.link_orientations.empty()) forward_kinematics(model, data, q);
  for (const auto& ch : obs.link_positions) {
    const auto& pose = tr.link_poses.at(ch.data_name());
    const Vec3<T> p = body_point_world(data, ch.body, Vec3<T>(ch.point.cast<T>()));
    for (int c = 0; c < 3; ++c)
      r[n++] = std::isnan(pose(k, c)) ? T(0) : T(ch.weight) * (p[c] - T(pose(k, c)));
  }
  for (const auto& ch : obs.link_orientations) {
    const auto& pose = tr.link_poses.at(ch.link);
    if (pose.row(k).template segment<4>(3).hasNaN()) {
      for (int c = 0; c < 3; ++c) r[n++] = T(0);
      continue;
    }
    const Vec3<T> e = orientation_error(pose.row(k).template segment<4>(3).transpose(), data.X_world[ch.body].E);
    for (int c = 0; c < 3; ++c) r[n++] = T(ch.weight) * e[c];
  }
  return n;
}

// The simulation of one residual evaluation: the model with θ applied, its
// stepper and, when the experiment has contact, a contact system with θ's
// contact parameters. Not movable: the stepper's hooks point into it.
template <class T>
class Simulation {
 public:
  Simulation(const ResidualContext& ctx, const T* theta)
      : model_(fitted_model(ctx, theta)), stepper_(model_, unchecked(ctx.step)) {
    if (ctx.contact) {
      const std::shared_ptr<ContactSystem<T>> contact = install_contact(*ctx.contact, *ctx.model, stepper_);
      ctx.parameters->apply_contact(theta, contact->parameters());
    }
  }
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  const Model<T>& model() const { return model_; }
  Stepper<T>& stepper() { return stepper_; }

 private:
  static Model<T> fitted_model(const ResidualContext& ctx, const T* theta) {
    Model<T> m = ctx.model->template cast<T>();
    ctx.parameters->apply(theta, m);
    return m;
  }
  static StepOptions unchecked(StepOptions o) {
    o.check_finite = false;  // a diverged evaluation is reported to Ceres as a failure instead
    return o;
  }
  Model<T> model_;
  Stepper<T> stepper_;  // its hooks own the contact system
};

// The fitted control delay (controls.delay) of θ, with its derivatives:
// replay_window applies it instead of ctx.step.controls.delay. Null when
// the delay is not estimated (`storage` holds the value).
template <class T>
const T* fitted_control_delay(const ResidualContext& ctx, const T* theta, T& storage) {
  const int i = ctx.parameters->find(ParameterKind::kControlDelay);
  if (i < 0) return nullptr;
  storage = ctx.parameters->physical<T>(i, theta[i]);
  return &storage;
}

template <class T>
void load_state(const Trajectory& tr, int k, VecX<T>& q, VecX<T>& qd) {
  q = tr.q.row(k).transpose().cast<T>();
  qd = tr.qd.row(k).transpose().cast<T>();
}

// A fitted start block of `fit` applied to the recorded state (q, qd) in
// place: q ← q ⊕ δ, q̇ ← q̇0 (residuals.hpp, StartStateFit).
template <class T>
void apply_start_block(const Model<T>& model, const StartStateFit& fit, const T* block, VecX<T>& q, VecX<T>& qd) {
  const int nv = model.nv;
  if (fit.q) {
    const VecX<T> recorded = q;
    const VecX<T> dq = Eigen::Map<const VecX<T>>(block, nv);
    integrate_configuration(model, recorded, dq, q);
  }
  if (fit.qd) qd = Eigen::Map<const VecX<T>>(block + (fit.q ? nv : 0), nv);
}

// Creates the cost function with the engine's stride (Ceres takes
// ownership of the functor), then lets `configure` add parameter blocks and
// residuals.
template <class Functor, class Configure>
ceres::CostFunction* make_dynamic(Functor* f, Configure&& configure) {
  auto* c = new ceres::DynamicAutoDiffCostFunction<Functor, kStride>(f);
  configure(*c);
  return c;
}

}  // namespace residual_internal
}  // namespace neuralsim
