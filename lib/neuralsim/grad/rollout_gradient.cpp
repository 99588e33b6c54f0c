// Implementation of rollout_gradient.hpp (declarations and documentation there),
// compiled once in the grad layer.
#include "neuralsim/grad/rollout_gradient.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/dynamics/kinematics.hpp"
#include "neuralsim/grad/aba_node.hpp"
#include "neuralsim/grad/kinematics_node.hpp"
#include "neuralsim/grad/rev_engine.hpp"
#include "neuralsim/step/stepper.hpp"

namespace neuralsim {

const Transform<Rev>& LossState::link_pose(int body) const {
  if (poses_ != nullptr) return poses_->at(static_cast<std::size_t>(body));
  kinematics();
  return data_.X_world.at(static_cast<std::size_t>(body));
}

void LossState::kinematics() const {
  if (!kinematics_done_) forward_kinematics(model_, data_, q);
  kinematics_done_ = true;
}

LossTerm state_tracking_loss(Eigen::MatrixXd q_target, Eigen::MatrixXd qd_target, Eigen::VectorXd wq,
                                    Eigen::VectorXd wv) {
  return [q_target = std::move(q_target), qd_target = std::move(qd_target), wq = std::move(wq),
          wv = std::move(wv)](const LossState& s) {
    Rev L = 0.0;
    auto col = [&](const Eigen::MatrixXd& m) { return m.cols() == 1 ? 0 : s.step - 1; };
    for (int i = 0; i < wq.size(); ++i) {
      const Rev e = s.q[i] - q_target(i, col(q_target));
      L += 0.5 * wq[i] * e * e;
    }
    for (int i = 0; i < wv.size(); ++i) {
      const Rev e = s.qd[i] - qd_target(i, col(qd_target));
      L += 0.5 * wv[i] * e * e;
    }
    return L;
  };
}

LossTerm link_position_loss(int body, Eigen::Vector3d target, double w) {
  return [body, target, w](const LossState& s) {
    const Vec3<Rev>& p = s.link_position(body);
    Rev L = 0.0;
    for (int c = 0; c < 3; ++c) {
      const Rev e = p[c] - target[c];
      L += 0.5 * w * e * e;
    }
    return L;
  };
}

LossTerm state_gradient_loss(Eigen::VectorXd gq, Eigen::VectorXd gv) {
  return [gq = std::move(gq), gv = std::move(gv)](const LossState& s) {
    Rev L = 0.0;
    for (int i = 0; i < gq.size(); ++i) L += gq[i] * s.q[i];
    for (int i = 0; i < gv.size(); ++i) L += gv[i] * s.qd[i];
    return L;
  };
}

LossTerm sum_of(std::vector<LossTerm> terms) {
  return [terms = std::move(terms)](const LossState& s) {
    Rev L = 0.0;
    for (const LossTerm& f : terms)
      if (f) L += f(s);
    return L;
  };
}

RolloutGradient::RolloutGradient(Stepper<double>& forward, Stepper<Rev>& reverse, Tape& tape)
    : fwd_(forward),
      rev_(reverse),
      tape_(tape),
      kinematics_node_(reverse.model()),
      loss_data_(reverse.model()) {
  const int nq = forward.model().nq, nv = forward.model().nv;
  if (reverse.model().nq != nq || reverse.model().nv != nv)
    throw InvalidArgument("RolloutGradient: the double and Rev systems differ");
  if (forward.options().dt != reverse.options().dt || forward.options().integrator != reverse.options().integrator ||
      forward.options().substeps != reverse.options().substeps)
    throw InvalidArgument("RolloutGradient: the double and Rev steppers have different step options");
  qd_ = VecX<double>::Zero(nv);
  q_ = VecX<double>::Zero(nq);
  ud_ = VecX<double>::Zero(nv);
  qr_ = VecX<Rev>::Zero(nq);
  qdr_ = VecX<Rev>::Zero(nv);
  ur_ = VecX<Rev>::Zero(nv);
  q_in_ = VecX<Rev>::Zero(nq);
  qd_in_ = VecX<Rev>::Zero(nv);
  q_prev_ = VecX<Rev>::Zero(nq);
  qd_prev_ = VecX<Rev>::Zero(nv);
  poses_.assign(static_cast<std::size_t>(reverse.model().num_bodies()), Transform<Rev>());
  carry_q_ = VecX<double>::Zero(nq);
  carry_qd_ = VecX<double>::Zero(nv);
  bool rotors = false;
  for (const Joint<Rev>& j : reverse.model().joints) rotors |= j.has_rotor;
  taped_aba_ = rotors || !reverse.velocity_hooks().empty();
  if (!taped_aba_) node_.emplace(reverse.model());
  DynamicsSolver<Rev> solver;
  solver.context = this;
  if (!taped_aba_)
    solver.solve = [](void* self, const Model<Rev>& model, Data<Rev>& data, const VecX<Rev>& q,
                      const VecX<Rev>& qd, const VecX<Rev>& tau) {
      RolloutGradient& g = *static_cast<RolloutGradient*>(self);
      g.node_->record(g.tape_, model, q, qd, tau, data.f_ext, data.qdd);
    };
  solver.kinematics = [](void* self, const Model<Rev>& model, Data<Rev>& data, const VecX<Rev>& q,
                         const VecX<Rev>& qd) {
    RolloutGradient& g = *static_cast<RolloutGradient*>(self);
    g.kinematics_node_.record(g.tape_, model, data, q, qd);
    if (g.capture_poses_) {  // the step's first dynamics call: the kinematics of its start
      g.poses_ = data.X_world;
      g.capture_poses_ = false;
    }
  };
  rev_.set_dynamics_solver(solver);
}

double RolloutGradient::value(const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
                                     const Eigen::MatrixXd& controls, const TrajectoryLoss& loss, double t0) {
  check(q0, qd0, controls, loss);
  const std::size_t prefix = tape_.size();
  const int T = static_cast<int>(controls.cols());
  const double dt = fwd_.options().dt;
  q_ = q0;
  qd_ = qd0;
  double L = 0;
  for (int k = 0; k < T; ++k) {
    ud_ = controls.col(k);
    step_double(k, t0, dt, ud_);
    for (int i = 0; i < q_.size(); ++i) qr_[i] = Rev(q_[i]);
    for (int i = 0; i < qd_.size(); ++i) qdr_[i] = Rev(qd_[i]);
    L += loss_terms(loss, k + 1, T, state_time(k + 1, t0, dt), qr_, qdr_, nullptr).value();
    tape_.rewind(prefix);  // link poses may have recorded on the model's parameters
  }
  return L;
}

double RolloutGradient::gradient(const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
                                        const Eigen::MatrixXd& controls, const TrajectoryLoss& loss,
                                        RolloutGradientResult& out, const Rev* parameters, int n_parameters,
                                        int checkpoint_interval, double t0) {
  check(q0, qd0, controls, loss);
  const int nq = static_cast<int>(q0.size()), nv = static_cast<int>(qd0.size());
  const int T = static_cast<int>(controls.cols());
  const double dt = fwd_.options().dt;
  const int k = checkpoint_interval > 0 ? std::min(checkpoint_interval, std::max(T, 1))
                                        : std::max(1, static_cast<int>(std::ceil(std::sqrt(double(T)))));
  const int segments = T == 0 ? 0 : (T + k - 1) / k;
  const std::size_t prefix = tape_.size();
  // Forward in double, a checkpoint at the start of every segment.
  ckpt_.resize(static_cast<std::size_t>(segments) * static_cast<std::size_t>(nq + nv));
  q_ = q0;
  qd_ = qd0;
  for (int s = 0; s < segments; ++s) {
    double* c = ckpt_.data() + static_cast<std::size_t>(s) * (nq + nv);
    for (int i = 0; i < nq; ++i) c[i] = q_[i];
    for (int i = 0; i < nv; ++i) c[nq + i] = qd_[i];
    if (s + 1 == segments) break;  // the last segment is replayed from here
    for (int j = s * k; j < (s + 1) * k; ++j) {
      ud_ = controls.col(j);
      step_double(j, t0, dt, ud_);
    }
  }
  u_vars_.resize(static_cast<std::size_t>(k) * nv);
  out.loss = 0;
  out.q0.setZero(nq);  // setZero(n): no reallocation when the size is unchanged
  out.qd0.setZero(nv);
  out.controls.setZero(nv, T);
  out.parameters.setZero(n_parameters);
  carry_q_.setZero();
  carry_qd_.setZero();
  stats_ = RolloutGradientStats();
  stats_.checkpoint_interval = k;
  stats_.checkpoints = segments;
  stats_.checkpoint_bytes = ckpt_.size() * sizeof(double);
  // Reverse, segment by segment, last first. With force hooks (or body drag) the stepper
  // runs forward kinematics of each step's starting state on the tape
  // (Stepper::forward_dynamics), so the link poses of state j are taken
  // from step j's first dynamics call (the same Revs a separate kinematics
  // of q_j would give, at no extra nodes): state j's loss terms are
  // recorded after step j; only the segment's final state gets kinematics
  // of its own. (Hooks read data.X_world; a hook that overwrote it with
  // the poses of another configuration would break this.)
  const bool reuse_poses = rev_.runs_kinematics();  // force hooks or body drag
  for (int s = segments - 1; s >= 0; --s) {
    tape_.rewind(prefix);
    const double* c = ckpt_.data() + static_cast<std::size_t>(s) * (nq + nv);
    for (int i = 0; i < nq; ++i) qr_[i] = q_in_[i] = tape_.variable(c[i]);
    for (int i = 0; i < nv; ++i) qdr_[i] = qd_in_[i] = tape_.variable(c[nq + i]);
    const int first = s * k, last = std::min(T, first + k);
    Rev L = 0.0;
    for (int j = first; j < last; ++j) {
      Rev* u = u_vars_.data() + static_cast<std::size_t>(j - first) * nv;
      // Interpolated recorded controls are data: constants, no variables.
      if (!recorded_.trajectory)
        for (int i = 0; i < nv; ++i) ur_[i] = u[i] = tape_.variable(controls(i, j));
      const bool pending = reuse_poses && j > first;  // state j's terms wait for step j's kinematics
      if (pending) {
        q_prev_ = qr_;
        qd_prev_ = qdr_;
        capture_poses_ = true;
      }
      step_taped(j, t0, dt, ur_);
      if (pending) {
        capture_poses_ = false;
        L += loss_terms(loss, j, T, state_time(j, t0, dt), q_prev_, qd_prev_, &poses_);
      } else if (!reuse_poses) {
        L += loss_terms(loss, j + 1, T, state_time(j + 1, t0, dt), qr_, qdr_, nullptr);
      }
    }
    if (reuse_poses && last > first) L += loss_terms(loss, last, T, state_time(last, t0, dt), qr_, qdr_, nullptr);
    if (s + 1 < segments) check_replay(s, ckpt_.data() + static_cast<std::size_t>(s + 1) * (nq + nv));
    out.loss += L.value();
    tape_.seed(L, 1.0);
    for (int i = 0; i < nq; ++i) tape_.seed(qr_[i], carry_q_[i]);
    for (int i = 0; i < nv; ++i) tape_.seed(qdr_[i], carry_qd_[i]);
    stats_.peak_tape_nodes = std::max(stats_.peak_tape_nodes, tape_.size());
    tape_.reverse();
    for (int i = 0; i < nq; ++i) carry_q_[i] = tape_.adjoint(q_in_[i]);
    for (int i = 0; i < nv; ++i) carry_qd_[i] = tape_.adjoint(qd_in_[i]);
    if (!recorded_.trajectory)
      for (int j = first; j < last; ++j) {
        const Rev* u = u_vars_.data() + static_cast<std::size_t>(j - first) * nv;
        for (int i = 0; i < nv; ++i) out.controls(i, j) = tape_.adjoint(u[i]);
      }
    for (int p = 0; p < n_parameters; ++p) out.parameters[p] += tape_.adjoint(parameters[p]);
  }
  out.q0 = carry_q_;
  out.qd0 = carry_qd_;
  tape_.rewind(prefix);
  stats_.tape_capacity_bytes = tape_.capacity() / detail::kNodesPerBlock * detail::kBlockBytes;
  stats_.aba_cache_bytes = node_ ? node_->cache_capacity_bytes() : 0;
  return out.loss;
}

void RolloutGradient::set_recorded_controls(const Trajectory* recording, int first_interval) {
  if (recording) {
    const int nv = fwd_.model().nv;
    if (!recording->has_tau() || recording->tau.cols() != nv)
      throw InvalidArgument("RolloutGradient::set_recorded_controls: the recording '" + recording->name +
                            "' has no controls for the model's " + std::to_string(nv) + " coordinates");
    if (first_interval < 0 || first_interval + 1 >= recording->size())
      throw InvalidArgument("RolloutGradient::set_recorded_controls: interval " + std::to_string(first_interval) +
                            " is outside the recording '" + recording->name + "' of " +
                            std::to_string(recording->size()) + " samples");
  }
  recorded_ = RecordedControls{recording, &fwd_.options().controls, 0};
  first_interval_ = first_interval;
}

void RolloutGradient::use_contact(ContactSystem<Rev>* system, bool implicit_impulse) {
  if (contact_ != nullptr) {
    contact_->set_force_override(ContactForceOverride<Rev>());
    contact_->set_pgs_override(PgsOverride<Rev>());
  }
  contact_ = nullptr;
  force_node_.reset();
  pgs_node_.reset();
  if (system == nullptr) return;
  const ContactGradient how = system->settings().gradient;
  if (system->is_impulse() ? !(implicit_impulse || how == ContactGradient::kImplicit) : how == ContactGradient::kTaped)
    return;
  contact_ = system;
  if (system->is_impulse()) {
    pgs_node_.emplace(system->geometry().max_contacts());
    PgsOverride<Rev> o;
    o.context = this;
    o.solve = [](void* self, const MatX<Rev>& A, const VecX<Rev>& r, const VecX<Rev>& mu, int nc, const Rev& cfm,
                 FrictionCone cone, const PgsOptions& options, VecX<Rev>& lambda) {
      RolloutGradient& g = *static_cast<RolloutGradient*>(self);
      return g.pgs_node_->solve(g.tape_, A, r, mu, nc, cfm, cone, options, lambda);
    };
    system->set_pgs_override(o);
    return;
  }
  force_node_.emplace(*system);
  if (!force_node_->handles_any()) return;
  ContactForceOverride<Rev> o;
  o.context = this;
  o.pairs = &force_node_->handled_pairs();
  o.apply = [](void* self, const ContactSystem<Rev>& sys, Data<Rev>& data) {
    RolloutGradient& g = *static_cast<RolloutGradient*>(self);
    return g.force_node_->record(g.tape_, sys, data);
  };
  system->set_force_override(o);
}

void RolloutGradient::step_double(int j, double t0, double dt, const VecX<double>& u) {
  if (!recorded_.trajectory) {
    fwd_.step(q_, qd_, u, t0 + j * dt);
    return;
  }
  const Eigen::VectorXd& time = recorded_.trajectory->time;
  recorded_.interval = first_interval_ + j;
  const double t = time[recorded_.interval];
  fwd_.step(q_, qd_, recorded_control_source<double>(&recorded_), t, time[recorded_.interval + 1] - t);
}

void RolloutGradient::step_taped(int j, double t0, double dt, const VecX<Rev>& u) {
  if (!recorded_.trajectory) {
    rev_.step(qr_, qdr_, u, t0 + j * dt);
    return;
  }
  const Eigen::VectorXd& time = recorded_.trajectory->time;
  recorded_.interval = first_interval_ + j;
  const double t = time[recorded_.interval];
  rev_.step(qr_, qdr_, recorded_control_source<Rev>(&recorded_), t, time[recorded_.interval + 1] - t);
}

void RolloutGradient::check(const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
                                   const Eigen::MatrixXd& controls, const TrajectoryLoss& loss) const {
  const Model<double>& m = fwd_.model();
  if (q0.size() != m.nq || qd0.size() != m.nv || controls.rows() != m.nv)
    throw InvalidArgument("RolloutGradient: q0, q̇0 or the controls do not match the model (nq " +
                          std::to_string(m.nq) + ", nv " + std::to_string(m.nv) + ")");
  if (!loss.horizon_weight.empty() && static_cast<long>(loss.horizon_weight.size()) != controls.cols())
    throw InvalidArgument("RolloutGradient: " + std::to_string(loss.horizon_weight.size()) +
                          " horizon weights for " + std::to_string(controls.cols()) + " steps");
  if (recorded_.trajectory && first_interval_ + controls.cols() >= recorded_.trajectory->size())
    throw InvalidArgument("RolloutGradient: " + std::to_string(controls.cols()) + " steps from interval " +
                          std::to_string(first_interval_) + " run past the recording '" +
                          recorded_.trajectory->name + "' of " + std::to_string(recorded_.trajectory->size()) +
                          " samples");
  if (rev_.velocity_hooks().size() != fwd_.velocity_hooks().size())
    throw InvalidArgument("RolloutGradient: the double and Rev steppers have different velocity hooks");
  if (!rev_.velocity_hooks().empty() && !taped_aba_)
    throw InvalidArgument(
        "RolloutGradient: velocity hooks (impulse contact) were installed after the driver was built; install "
        "them first");
}

void RolloutGradient::check_replay(int s, const double* c) const {
  const int nq = static_cast<int>(qr_.size());
  for (int i = 0; i < nq + static_cast<int>(qdr_.size()); ++i) {
    const double replay = i < nq ? qr_[i].value() : qdr_[i - nq].value(), rollout = c[i];
    if (!(std::abs(replay - rollout) <= 1e-8 * (1.0 + std::abs(rollout))))
      throw NumericalError("RolloutGradient: the replay of segment " + std::to_string(s) + " ends at " +
                           std::to_string(replay) + " where the rollout had " + std::to_string(rollout) +
                           " (state coordinate " + std::to_string(i) +
                           "): a hook carries state between steps (e.g. PGS warm start) or differs between the "
                           "double and Rev systems");
  }
}

Rev RolloutGradient::loss_terms(const TrajectoryLoss& loss, int step, int T, double t, const VecX<Rev>& q,
                                       const VecX<Rev>& qd, const std::vector<Transform<Rev>>* poses) {
  Rev L = 0.0;
  if (!loss.stage && !(loss.terminal && step == T)) return L;
  const LossState state(step, t, q, qd, rev_.model(), loss_data_, poses);
  if (loss.stage) {
    const double w = loss.horizon_weight.empty() ? 1.0 : loss.horizon_weight[static_cast<std::size_t>(step - 1)];
    if (w != 0.0) L += w * loss.stage(state);
  }
  if (loss.terminal && step == T) L += loss.terminal(state);
  return L;
}

}  // namespace neuralsim
