// Reverse-mode gradients through whole rollouts (backpropagation through
// time) with checkpointing.
//
// WHAT. For a rollout of T steps of a Stepper from (q0, q̇0) under controls
// u_0..u_{T-1} (held over each step) and a trajectory loss
//     L = Σ_{k=1..T} w_k ℓ(k, q_k, q̇_k, link poses_k) + Φ(q_T, q̇_T, poses_T)
// RolloutGradient gives ∂L/∂q0, ∂L/∂q̇0, ∂L/∂u_k and ∂L/∂θ for the model,
// contact and network parameters of the Rev system (see SYSTEM below), all
// in one reverse sweep per segment: the cost is a small multiple of a
// rollout, independent of the number of parameters (Griewank & Walther,
// "Evaluating Derivatives", 2nd ed., SIAM 2008, ch. 3-4), where forward mode
// (ceres::Jet) or finite differences cost one rollout per few parameters.
//
// CHECKPOINTING (Griewank & Walther 2008, ch. 12; the uniform single-level
// schedule). The forward pass runs in double and stores the state every k
// steps (T/k checkpoints). Then, for each segment from last to first, the
// segment is replayed on the tape from its checkpoint (the tape rewound to
// the parameter prefix, capacity kept), its loss terms are seeded with 1 and
// its final state with the adjoint carried from the later segment, the tape
// is reversed, and the adjoint of the segment's initial state is carried
// backward. Parameter adjoints are read after every sweep and summed (the
// network nodes add into AugmentedDynamics<Rev>::gradient() themselves).
// Memory: ceil(T/k)(nq + nv) doubles of checkpoints + one segment of k steps
// on the tape; k = ceil(√T) by default, so memory grows as √T, and time is
// one extra forward rollout in double on top of the taped replay.
//
// SYSTEM. Two steppers of the same system: `forward` in double and `reverse`
// in Rev, with the same hooks (contact, augmentation) and parameter values.
// Whatever Model<Rev> / contact fields are to be differentiated must be
// variables recorded on `tape` BEFORE the call (the "prefix": the tape's
// content at the start of gradient(), which is kept; every segment rewinds
// to it) and listed in `parameters`. The driver installs a KinematicsNode
// for the kinematics the stepper runs before its force hooks
// (grad/kinematics_node.hpp) and, as the reverse stepper's dynamics solver,
// an AbaNode (one external node per ABA call, grad/aba_node.hpp), so
// neither is taped operation by operation.
// Two cases keep aba<Rev> on the tape instead (exact, at the taped cost of
// ~35x a double ABA per call, tape.hpp): motor rotors (AbaNode's adjoint has
// no rotor terms) and velocity hooks (impulse contact), which read the
// articulated-body factorization aba<Rev> leaves in Data and are then taped
// too: the projected Gauss–Seidel iterations of the impulse solver are
// differentiated as the iterated algorithm, as forward-mode Jets would.
// Velocity hooks must be installed before the driver is built, and no hook
// may carry state from one step to the next (the impulse solver's PGS warm
// start does: HybridRollout turns it off): a replayed segment starts from
// its checkpoint alone. The driver checks this where it can: each replayed
// segment must end at the next segment's checkpoint, else NumericalError.
// parameters/hybrid_rollout.hpp builds both steppers from named parameters
// and augmentation blueprints.
//
// The two passes agree to rounding: the replay starts from the double
// checkpoints, so the gradient is that of the double trajectory.
//
// No heap allocation per step once warmed up (the tape keeps its capacity
// across segments and calls; the loss callbacks are the caller's). Not
// thread-safe: one object (and one tape, one system) per thread.
#pragma once

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

// What a loss term sees after step k (k = 1..T): the state and, on demand,
// the world poses of the links at that state: `poses` if given (the driver
// passes the stepper's own forward kinematics of that state, see
// RolloutGradient::gradient), else forward kinematics of the positions on
// the tape, computed once per state (no velocities: the terms see poses).
class LossState {
 public:
  LossState(int step, double t, const VecX<Rev>& q, const VecX<Rev>& qd, const Model<Rev>& model, Data<Rev>& data,
            const std::vector<Transform<Rev>>* poses = nullptr)
      : step(step), t(t), q(q), qd(qd), model_(model), data_(data), poses_(poses) {}
  const int step;  // k: the state after k steps
  const double t;  // its time
  const VecX<Rev>& q;
  const VecX<Rev>& qd;
  // World pose of link b (Data::X_world: E = Rᵀ, r = the link origin in world).
  const Transform<Rev>& link_pose(int body) const {
    if (poses_ != nullptr) return poses_->at(static_cast<std::size_t>(body));
    kinematics();
    return data_.X_world.at(static_cast<std::size_t>(body));
  }
  const Vec3<Rev>& link_position(int body) const { return link_pose(body).r; }
  // Rotation body → world.
  Mat3<Rev> link_rotation(int body) const { return link_pose(body).E.transpose(); }
  const Model<Rev>& model() const { return model_; }

 private:
  void kinematics() const {
    if (!kinematics_done_) forward_kinematics(model_, data_, q);
    kinematics_done_ = true;
  }
  const Model<Rev>& model_;
  Data<Rev>& data_;
  const std::vector<Transform<Rev>>* poses_;
  mutable bool kinematics_done_ = false;
};

using LossTerm = std::function<Rev(const LossState&)>;

// L = Σ_k horizon_weight[k-1] · stage(state_k) + terminal(state_T). Either
// term may be empty; horizon_weight empty means all 1, else it has T values.
// Terms are functions in Rev of what LossState offers (q, q̇, link poses);
// a loss known only by its gradient is state_gradient_loss below.
struct TrajectoryLoss {
  LossTerm stage;
  std::vector<double> horizon_weight;
  LossTerm terminal;
};

// ½ Σ_i wq_i (q_i - q*_i)² + ½ Σ_i wv_i (q̇_i - q̇*_i)², targets per step
// (columns 0..T-1 for k = 1..T) or one column for every step; the weights
// may be empty (no term). The returned term holds copies.
inline LossTerm state_tracking_loss(Eigen::MatrixXd q_target, Eigen::MatrixXd qd_target, Eigen::VectorXd wq,
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

// ½ w |p_b - p*|² for the world position of link b's origin.
inline LossTerm link_position_loss(int body, Eigen::Vector3d target, double w = 1.0) {
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

// A loss given by its gradient: Σ gq_i q_i + Σ gv_i q̇_i (gq, gv: ∂L/∂q,
// ∂L/∂q̇ supplied by the caller, e.g. from another tool; as a terminal
// term this seeds the final state's adjoint with exactly (gq, gv)).
inline LossTerm state_gradient_loss(Eigen::VectorXd gq, Eigen::VectorXd gv) {
  return [gq = std::move(gq), gv = std::move(gv)](const LossState& s) {
    Rev L = 0.0;
    for (int i = 0; i < gq.size(); ++i) L += gq[i] * s.q[i];
    for (int i = 0; i < gv.size(); ++i) L += gv[i] * s.qd[i];
    return L;
  };
}

// Sums of terms.
inline LossTerm sum_of(std::vector<LossTerm> terms) {
  return [terms = std::move(terms)](const LossState& s) {
    Rev L = 0.0;
    for (const LossTerm& f : terms)
      if (f) L += f(s);
    return L;
  };
}

struct RolloutGradientResult {
  double loss = 0;
  Eigen::VectorXd q0, qd0;      // ∂L/∂q0 (raw coordinates), ∂L/∂q̇0
  Eigen::MatrixXd controls;     // ∂L/∂u, nv × T
  Eigen::VectorXd parameters;   // ∂L/∂(the `parameters` given to gradient())
};

struct RolloutGradientStats {
  int checkpoint_interval = 0;
  int checkpoints = 0;
  std::size_t checkpoint_bytes = 0;
  std::size_t peak_tape_nodes = 0;      // largest segment + prefix
  std::size_t tape_capacity_bytes = 0;  // arena blocks held by the tape
  std::size_t aba_cache_bytes = 0;      // AbaNode's forward cache (capacity)
};

class RolloutGradient {
 public:
  // `reverse` must record on `tape`; installs the AbaNode solver on it (and
  // restores aba() on destruction). Both steppers must outlive this object.
  RolloutGradient(Stepper<double>& forward, Stepper<Rev>& reverse, Tape& tape)
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
  ~RolloutGradient() { rev_.set_dynamics_solver(DynamicsSolver<Rev>()); }
  RolloutGradient(const RolloutGradient&) = delete;
  RolloutGradient& operator=(const RolloutGradient&) = delete;

  // The loss of the rollout (double forward pass; loss terms evaluated on
  // constant Revs, i.e. in double). controls: nv × T; t0: time of step 0.
  double value(const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0, const Eigen::MatrixXd& controls,
               const TrajectoryLoss& loss, double t0 = 0.0) {
    check(q0, qd0, controls, loss);
    const std::size_t prefix = tape_.size();
    const int T = static_cast<int>(controls.cols());
    const double dt = fwd_.options().dt;
    q_ = q0;
    qd_ = qd0;
    double L = 0;
    for (int k = 0; k < T; ++k) {
      ud_ = controls.col(k);
      fwd_.step(q_, qd_, ud_, t0 + k * dt);
      for (int i = 0; i < q_.size(); ++i) qr_[i] = Rev(q_[i]);
      for (int i = 0; i < qd_.size(); ++i) qdr_[i] = Rev(qd_[i]);
      L += loss_terms(loss, k + 1, T, t0 + (k + 1) * dt, qr_, qdr_, nullptr).value();
      tape_.rewind(prefix);  // link poses may have recorded on the model's parameters
    }
    return L;
  }

  // The loss and its gradient (see the top of the file). `parameters`
  // (n_parameters variables of the prefix) receive their adjoints in
  // out.parameters. checkpoint_interval: steps per segment (0: ceil(√T);
  // T: no checkpointing, one segment).
  double gradient(const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0, const Eigen::MatrixXd& controls,
                  const TrajectoryLoss& loss, RolloutGradientResult& out, const Rev* parameters = nullptr,
                  int n_parameters = 0, int checkpoint_interval = 0, double t0 = 0.0) {
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
        fwd_.step(q_, qd_, ud_, t0 + j * dt);
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
    // Reverse, segment by segment, last first. With force hooks the stepper
    // runs forward kinematics of each step's starting state on the tape
    // (Stepper::forward_dynamics), so the link poses of state j are taken
    // from step j's first dynamics call (the same Revs a separate kinematics
    // of q_j would give, at no extra nodes): state j's loss terms are
    // recorded after step j; only the segment's final state gets kinematics
    // of its own. (Hooks read data.X_world; a hook that overwrote it with
    // the poses of another configuration would break this.)
    const bool reuse_poses = !rev_.hooks().empty();
    for (int s = segments - 1; s >= 0; --s) {
      tape_.rewind(prefix);
      const double* c = ckpt_.data() + static_cast<std::size_t>(s) * (nq + nv);
      for (int i = 0; i < nq; ++i) qr_[i] = q_in_[i] = tape_.variable(c[i]);
      for (int i = 0; i < nv; ++i) qdr_[i] = qd_in_[i] = tape_.variable(c[nq + i]);
      const int first = s * k, last = std::min(T, first + k);
      Rev L = 0.0;
      for (int j = first; j < last; ++j) {
        Rev* u = u_vars_.data() + static_cast<std::size_t>(j - first) * nv;
        for (int i = 0; i < nv; ++i) ur_[i] = u[i] = tape_.variable(controls(i, j));
        const bool pending = reuse_poses && j > first;  // state j's terms wait for step j's kinematics
        if (pending) {
          q_prev_ = qr_;
          qd_prev_ = qdr_;
          capture_poses_ = true;
        }
        rev_.step(qr_, qdr_, ur_, t0 + j * dt);
        if (pending) {
          capture_poses_ = false;
          L += loss_terms(loss, j, T, t0 + j * dt, q_prev_, qd_prev_, &poses_);
        } else if (!reuse_poses) {
          L += loss_terms(loss, j + 1, T, t0 + (j + 1) * dt, qr_, qdr_, nullptr);
        }
      }
      if (reuse_poses && last > first) L += loss_terms(loss, last, T, t0 + last * dt, qr_, qdr_, nullptr);
      if (s + 1 < segments) check_replay(s, ckpt_.data() + static_cast<std::size_t>(s + 1) * (nq + nv));
      out.loss += L.value();
      tape_.seed(L, 1.0);
      for (int i = 0; i < nq; ++i) tape_.seed(qr_[i], carry_q_[i]);
      for (int i = 0; i < nv; ++i) tape_.seed(qdr_[i], carry_qd_[i]);
      stats_.peak_tape_nodes = std::max(stats_.peak_tape_nodes, tape_.size());
      tape_.reverse();
      for (int i = 0; i < nq; ++i) carry_q_[i] = tape_.adjoint(q_in_[i]);
      for (int i = 0; i < nv; ++i) carry_qd_[i] = tape_.adjoint(qd_in_[i]);
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

  const RolloutGradientStats& stats() const { return stats_; }

 private:
  void check(const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0, const Eigen::MatrixXd& controls,
             const TrajectoryLoss& loss) const {
    const Model<double>& m = fwd_.model();
    if (q0.size() != m.nq || qd0.size() != m.nv || controls.rows() != m.nv)
      throw InvalidArgument("RolloutGradient: q0, q̇0 or the controls do not match the model (nq " +
                            std::to_string(m.nq) + ", nv " + std::to_string(m.nv) + ")");
    if (!loss.horizon_weight.empty() && static_cast<long>(loss.horizon_weight.size()) != controls.cols())
      throw InvalidArgument("RolloutGradient: " + std::to_string(loss.horizon_weight.size()) +
                            " horizon weights for " + std::to_string(controls.cols()) + " steps");
    if (rev_.velocity_hooks().size() != fwd_.velocity_hooks().size())
      throw InvalidArgument("RolloutGradient: the double and Rev steppers have different velocity hooks");
    if (!rev_.velocity_hooks().empty() && !taped_aba_)
      throw InvalidArgument(
          "RolloutGradient: velocity hooks (impulse contact) were installed after the driver was built; install "
          "them first");
  }

  // The Rev replay of segment s must end where the double rollout did (the
  // next checkpoint c), to rounding: otherwise the gradient would be that of
  // another trajectory (a hook with state across steps, or one that differs
  // between the double and Rev systems).
  void check_replay(int s, const double* c) const {
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

  // The loss terms of the state (q, q̇) after `step` steps; poses: its link
  // poses if known (else computed on demand).
  Rev loss_terms(const TrajectoryLoss& loss, int step, int T, double t, const VecX<Rev>& q, const VecX<Rev>& qd,
                 const std::vector<Transform<Rev>>* poses) {
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

  Stepper<double>& fwd_;
  Stepper<Rev>& rev_;
  Tape& tape_;
  std::optional<AbaNode> node_;  // empty: aba<Rev> on the tape (rotors, velocity hooks)
  bool taped_aba_ = false;
  KinematicsNode kinematics_node_;
  Data<Rev> loss_data_;
  VecX<double> q_, qd_, ud_, carry_q_, carry_qd_;
  VecX<Rev> qr_, qdr_, ur_, q_in_, qd_in_, q_prev_, qd_prev_;
  std::vector<Transform<Rev>> poses_;  // link poses of the current step's starting state
  bool capture_poses_ = false;
  std::vector<double> ckpt_;
  std::vector<Rev> u_vars_;
  RolloutGradientStats stats_;
};

}  // namespace neuralsim
