// One simulation step, read top to bottom as in MuJoCo's mj_step:
//   kinematics → forces (passive, hooks: contact/drag/augmentation, controls)
//   → ABA → integrator (semi-implicit Euler or RK4, on the manifold).
//
// The Stepper owns all workspace; step() allocates nothing.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/aba.hpp"
#include "neuralsim/step/body_drag.hpp"
#include "neuralsim/step/control_signal.hpp"
#include "neuralsim/step/passive_forces.hpp"

namespace neuralsim {

enum class Integrator { kSemiImplicitEuler, kRK4 };
const char* integrator_name(Integrator integrator);  // "semi_implicit_euler", "rk4"

struct StepOptions {
  Integrator integrator = Integrator::kSemiImplicitEuler;
  double dt = 1e-3;    // outer time step (the sampling period of outputs)
  int substeps = 1;    // integration steps per dt
  bool check_finite = true;  // throw NumericalError on NaN/Inf (double only)
  // What a replay of recorded controls applies between the recorded samples
  // (`sim.controls`, step/control_signal.hpp; read by step/replay.hpp). The
  // stepper itself applies whatever control it is given.
  ControlSignal controls{};
};

// A control that varies within a step: evaluate(context, step_start, t, u)
// writes u(t) (length nv) for the stage time t of the integration step
// that begins at step_start (a piecewise-constant signal keys its piece on
// step_start; step/control_signal.hpp). A plain function pointer and a
// context, as DynamicsSolver: no allocation per call.
template <class S>
struct ControlSource {
  void (*evaluate)(const void* context, double step_start, double t, VecX<S>& u) = nullptr;
  const void* context = nullptr;
};

// Adds forces after kinematics: write data.f_ext (body coordinates) and/or
// add to data.tau. Called once per dynamics evaluation.
template <class S>
using ForceHook = std::function<void(const Model<S>&, Data<S>&, const VecX<S>& q,
                                     const VecX<S>& qd, double t)>;

// Velocity-level constraint solve (impulse-based contact, joint limits):
// called by semi-implicit Euler after q̇⁺ = q̇ + h q̈ and before the position
// update, it may change q̇⁺ in place. `data` holds the kinematics of q.
template <class S>
using VelocityHook = std::function<void(const Model<S>&, Data<S>&, const VecX<S>& q, VecX<S>& qd_next,
                                        double h, double t)>;

// Customization point for forward dynamics (reverse mode, grad/): when set,
// forward_dynamics() calls solve(context, model, data, q, q̇, τ) instead of
// aba(); it must write q̈ to data.qdd (other Data fields, e.g. the world
// poses and the articulated-body factorization, are then not updated, so
// velocity hooks are refused). grad/rollout_gradient.hpp sets it to record
// aba() as ONE AbaNode per call on a Stepper<Rev>. When `kinematics` is
// also set, it replaces forward_kinematics(model, data, q, q̇) before the
// force hooks and must fill data.X_up, X_world and v as that does (the
// rollout gradient records them as one KinematicsNode). Plain function
// pointers and a context: no allocation, and without them the step is
// unchanged.
template <class S>
struct DynamicsSolver {
  void (*solve)(void* context, const Model<S>& model, Data<S>& data, const VecX<S>& q, const VecX<S>& qd,
                const VecX<S>& tau) = nullptr;
  void (*kinematics)(void* context, const Model<S>& model, Data<S>& data, const VecX<S>& q,
                     const VecX<S>& qd) = nullptr;
  void* context = nullptr;
};

template <class S>
class Stepper {
 public:
  // InvalidArgument unless dt is finite and > 0 and substeps >= 1.
  Stepper(const Model<S>& model, const StepOptions& options);

  const Model<S>& model() const { return model_; }
  const StepOptions& options() const { return options_; }
  Data<S>& data() { return data_; }
  std::vector<ForceHook<S>>& hooks() { return hooks_; }
  // Whether forward_dynamics runs forward kinematics before the forces:
  // with force hooks, or when a body declares drag (step/body_drag.hpp; a
  // structural property of the model, fixed at construction).
  bool runs_kinematics() const { return !hooks_.empty() || body_drag_; }
  // Only semi-implicit Euler runs velocity hooks (an impulse solve has no
  // meaning inside RK4 stages); step() throws InvalidArgument for RK4 with
  // velocity hooks.
  std::vector<VelocityHook<S>>& velocity_hooks() { return velocity_hooks_; }
  // Replaces aba() (DynamicsSolver above); a default-constructed one restores it.
  void set_dynamics_solver(const DynamicsSolver<S>& solver) { solver_ = solver; }

  // Accelerations for state (q, q̇) at time t under `control` (length nv,
  // scaled by each joint's gear ratio). Result in data().qdd.
  void forward_dynamics(const VecX<S>& q, const VecX<S>& qd, const VecX<S>& control, double t);

  // Advances (q, q̇) from time t by options().dt. Controls are held constant
  // over the step (zero-order hold, as a real controller would apply them).
  // Sizes are checked against the model (InvalidArgument).
  void step(VecX<S>& q, VecX<S>& qd, const VecX<S>& control, double t) { step(q, qd, control, t, options_.dt); }

  // Advances by an explicit `dt` (non-uniform recordings), with as many
  // substeps as keep each one no longer than options().dt / substeps.
  void step(VecX<S>& q, VecX<S>& qd, const VecX<S>& control, double t, double dt) {
    advance(q, qd, &control, nullptr, t, dt);
  }

  // Advances by `dt` under a control that varies within it: every substep,
  // and every RK4 stage, evaluates `controls` at its own time (recorded
  // controls interpolated between samples, step/replay.hpp).
  void step(VecX<S>& q, VecX<S>& qd, const ControlSource<S>& controls, double t, double dt) {
    if (!controls.evaluate) throw InvalidArgument("Stepper::step: the control source has no evaluate function");
    advance(q, qd, nullptr, &controls, t, dt);
  }

 private:
  // The one integration loop: a constant `control`, or else `source`.
  void advance(VecX<S>& q, VecX<S>& qd, const VecX<S>* control, const ControlSource<S>* source, double t,
               double dt);
  // The control of the stage at time t of the step that begins at step_start.
  const VecX<S>& control_at(const VecX<S>* control, const ControlSource<S>* source, double step_start, double t) {
    if (control) return *control;
    source->evaluate(source->context, step_start, t, u_);
    return u_;
  }
  // Classical RK4 with configuration updates q ⊕ (h·v) on the manifold.
  void rk4_step(VecX<S>& q, VecX<S>& qd, const VecX<S>* control, const ControlSource<S>* source, double t,
                double h);
  void check_finite(const VecX<S>& q, const VecX<S>& qd, double t) const;

  const Model<S>& model_;
  StepOptions options_;
  Data<S> data_;
  std::vector<ForceHook<S>> hooks_;
  std::vector<VelocityHook<S>> velocity_hooks_;
  DynamicsSolver<S> solver_;
  bool body_drag_ = false;  // some body declares drag (has_body_drag)
  VecX<S> q_tmp_, q_start_, qd_tmp_, qd_start_, dv_, acc_sum_, vel_sum_, rate_, u_;
};

namespace internal {
[[noreturn]] void throw_non_finite(const std::string& what, int index, double t, double value);
[[noreturn]] void throw_bad_state_size(long nq, long nv, long nu, int model_nq, int model_nv);
}

template <class S>
void Stepper<S>::forward_dynamics(const VecX<S>& q, const VecX<S>& qd, const VecX<S>& control, double t) {
  data_.clear_external_forces();
  passive_forces(model_, data_, q, qd);
  for (const Joint<S>& j : model_.joints)
    for (int k = 0; k < j.nv; ++k) data_.tau[j.idx_v + k] = j.dynamics.gear_ratio * control[j.idx_v + k];
  data_.tau += data_.tau_passive;
  if (runs_kinematics()) {
    if (solver_.kinematics)
      solver_.kinematics(solver_.context, model_, data_, q, qd);
    else
      forward_kinematics(model_, data_, q, qd);
    if (body_drag_) add_body_drag(model_, data_);
    for (auto& hook : hooks_) hook(model_, data_, q, qd, t);
  }
  if (solver_.solve)
    solver_.solve(solver_.context, model_, data_, q, qd, data_.tau);
  else
    aba(model_, data_, q, qd, data_.tau);
}

template <class S>
void Stepper<S>::advance(VecX<S>& q, VecX<S>& qd, const VecX<S>* control, const ControlSource<S>* source, double t,
                         double dt) {
  const long nu = control ? control->size() : u_.size();
  if (q.size() != model_.nq || qd.size() != model_.nv || nu != model_.nv)
    internal::throw_bad_state_size(q.size(), qd.size(), nu, model_.nq, model_.nv);
  if (!velocity_hooks_.empty() && options_.integrator != Integrator::kSemiImplicitEuler)
    throw InvalidArgument("Stepper::step: velocity-level constraints (impulse contact) need semi-implicit Euler");
  if (!velocity_hooks_.empty() && solver_.solve)
    throw InvalidArgument("Stepper::step: velocity-level constraints need aba(), not a dynamics solver");
  const double h_max = options_.dt / options_.substeps;
  const int n = std::max(1, static_cast<int>(std::ceil(dt / h_max - 1e-9)));
  const double h = dt / n;
  for (int s = 0; s < n; ++s) {
    const double ts = t + s * h;
    if (options_.integrator == Integrator::kSemiImplicitEuler) {
      forward_dynamics(q, qd, control_at(control, source, ts, ts), ts);
      semi_implicit_velocity_update(model_, qd, data_.qdd, h);
      for (auto& hook : velocity_hooks_) hook(model_, data_, q, qd, h, ts);
      dv_ = S(h) * qd;
      integrate_configuration(model_, q, dv_, q_tmp_);
      q = q_tmp_;
      transport_free_velocities(model_, dv_, qd);
    } else {
      rk4_step(q, qd, control, source, ts, h);
    }
  }
  if (options_.check_finite) check_finite(q, qd, t + dt);
}

template <class S>
void Stepper<S>::rk4_step(VecX<S>& q, VecX<S>& qd, const VecX<S>* control, const ControlSource<S>* source,
                          double t, double h) {
  static constexpr double kStage[4] = {0.0, 0.5, 0.5, 1.0};
  static constexpr double kWeight[4] = {1.0 / 6, 2.0 / 6, 2.0 / 6, 1.0 / 6};
  q_start_ = q;
  qd_start_ = qd;
  acc_sum_.setZero();
  vel_sum_.setZero();
  // Stage k evaluates at (q0 ⊕ θ_k, q̇0 + c_k h a_{k-1}) with θ_k = c_k h κ_{k-1},
  // where κ is the stage velocity expressed as a rate of θ at q0 (RKMK).
  qd_tmp_ = qd_start_;
  q_tmp_ = q_start_;
  dv_.setZero();
  for (int k = 0; k < 4; ++k) {
    if (k > 0) {
      dv_ = S(kStage[k] * h) * rate_;  // rate_ holds κ_{k-1}
      integrate_configuration(model_, q_start_, dv_, q_tmp_);
      qd_tmp_ = qd_start_ + S(kStage[k] * h) * data_.qdd;
    }
    velocity_in_initial_tangent(model_, dv_, qd_tmp_, rate_);
    vel_sum_ += S(kWeight[k]) * rate_;
    const double tk = t + kStage[k] * h;
    forward_dynamics(q_tmp_, qd_tmp_, control_at(control, source, t, tk), tk);
    acc_sum_ += S(kWeight[k]) * data_.qdd;
  }
  dv_ = S(h) * vel_sum_;
  integrate_configuration(model_, q_start_, dv_, q);
  qd = qd_start_ + S(h) * acc_sum_;
}


template <class S>
Stepper<S>::Stepper(const Model<S>& model, const StepOptions& options)
    : model_(model), options_(options), data_(model), body_drag_(has_body_drag(model)) {
  if (!(options.dt > 0) || !std::isfinite(options.dt) || options.substeps < 1)
    throw InvalidArgument("Stepper: dt must be finite and > 0 and substeps >= 1");
  const int nq = model.nq, nv = model.nv;
  for (auto* v : {&q_tmp_, &q_start_}) *v = VecX<S>::Zero(nq);
  for (auto* v : {&qd_tmp_, &qd_start_, &dv_, &acc_sum_, &vel_sum_, &rate_, &u_}) *v = VecX<S>::Zero(nv);
}

template <class S>
void Stepper<S>::check_finite(const VecX<S>& q, const VecX<S>& qd, double t) const {
  for (int i = 0; i < q.size(); ++i)
    if (!is_finite(q[i]))
      internal::throw_non_finite(model_.position_names()[i], i, t, to_double(q[i]));
  for (int i = 0; i < qd.size(); ++i)
    if (!is_finite(qd[i]))
      internal::throw_non_finite(model_.velocity_names()[i] + " velocity", i, t, to_double(qd[i]));
}

// Explicit instantiations (step/instantiate_*.cpp).
#define NEURALSIM_STEP_TEMPLATES(PREFIX, S) \
  PREFIX template class Stepper<S>;         \
  PREFIX template void passive_forces<S>(const Model<S>&, Data<S>&, const VecX<S>&, const VecX<S>&);
NEURALSIM_FOR_EACH_SCALAR(NEURALSIM_STEP_TEMPLATES, extern)

}  // namespace neuralsim
