// Reverse-mode gradients through whole rollouts (backpropagation through
// time) with checkpointing.
//
// WHAT. For a rollout of T steps of a Stepper from (q0, q̇0) under controls
// u_0..u_{T-1} (held over each step, or a recording's controls interpolated
// between its samples: set_recorded_controls) and a trajectory loss
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

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "neuralsim/grad/aba_node.hpp"
#include "neuralsim/grad/force_contact_node.hpp"
#include "neuralsim/grad/kinematics_node.hpp"
#include "neuralsim/grad/pgs_node.hpp"
#include "neuralsim/grad/rev_engine.hpp"
#include "neuralsim/step/replay.hpp"
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
  const Transform<Rev>& link_pose(int body) const;
  const Vec3<Rev>& link_position(int body) const { return link_pose(body).r; }
  // Rotation body → world.
  Mat3<Rev> link_rotation(int body) const { return link_pose(body).E.transpose(); }
  const Model<Rev>& model() const { return model_; }

 private:
  void kinematics() const;
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
LossTerm state_tracking_loss(Eigen::MatrixXd q_target, Eigen::MatrixXd qd_target, Eigen::VectorXd wq,
                                    Eigen::VectorXd wv);

// ½ w |p_b - p*|² for the world position of link b's origin.
LossTerm link_position_loss(int body, Eigen::Vector3d target, double w = 1.0);

// A loss given by its gradient: Σ gq_i q_i + Σ gv_i q̇_i (gq, gv: ∂L/∂q,
// ∂L/∂q̇ supplied by the caller, e.g. from another tool; as a terminal
// term this seeds the final state's adjoint with exactly (gq, gv)).
LossTerm state_gradient_loss(Eigen::VectorXd gq, Eigen::VectorXd gv);

// Sums of terms.
LossTerm sum_of(std::vector<LossTerm> terms);

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
  RolloutGradient(Stepper<double>& forward, Stepper<Rev>& reverse, Tape& tape);
  ~RolloutGradient() {
    rev_.set_dynamics_solver(DynamicsSolver<Rev>());
    use_contact(nullptr);
  }
  RolloutGradient(const RolloutGradient&) = delete;
  RolloutGradient& operator=(const RolloutGradient&) = delete;

  // The loss of the rollout (double forward pass; loss terms evaluated on
  // constant Revs, i.e. in double). controls: nv × T; t0: time of step 0.
  double value(const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0, const Eigen::MatrixXd& controls,
               const TrajectoryLoss& loss, double t0 = 0.0);

  // The loss and its gradient (see the top of the file). `parameters`
  // (n_parameters variables of the prefix) receive their adjoints in
  // out.parameters. checkpoint_interval: steps per segment (0: ceil(√T);
  // T: no checkpointing, one segment).
  double gradient(const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0, const Eigen::MatrixXd& controls,
                  const TrajectoryLoss& loss, RolloutGradientResult& out, const Rev* parameters = nullptr,
                  int n_parameters = 0, int checkpoint_interval = 0, double t0 = 0.0);

  // Recorded controls interpolated between samples instead of the columns
  // of `controls` (the forward stepper's options().controls, step/
  // control_signal.hpp; training windows with sim.controls): step j of the
  // next value() / gradient() calls covers the recording's sample interval
  // first_interval + j, from its time stamp and for its length (t0 is then
  // unused), with the controls evaluated at every substep and RK4 stage.
  // `controls` still gives T and must match the recorded samples' count;
  // the controls are data, so out.controls is zero. nullptr: held columns
  // again. The recording must outlive the calls.
  void set_recorded_controls(const Trajectory* recording, int first_interval);

  // Records the contact of `system` (the reverse stepper's) through
  // hand-written nodes: a force model's laws against world planes as one
  // ForceContactNode per step (force_contact_node.hpp) unless its settings
  // say contact.gradient: taped; with `implicit_impulse`, the impulse
  // model's PGS solve as one PgsNode differentiated implicitly at its
  // solution (pgs_node.hpp; otherwise every iteration is taped). nullptr
  // tapes everything. The system must outlive this object or be released
  // first.
  void use_contact(ContactSystem<Rev>* system, bool implicit_impulse = false);

  const RolloutGradientStats& stats() const { return stats_; }

 private:
  // Step j (of a call) forward in double / on the tape, under the held
  // column u or the recorded controls; the time of state j.
  void step_double(int j, double t0, double dt, const VecX<double>& u);
  void step_taped(int j, double t0, double dt, const VecX<Rev>& u);
  double state_time(int j, double t0, double dt) const {
    return recorded_.trajectory ? recorded_.trajectory->time[first_interval_ + j] : t0 + j * dt;
  }

  void check(const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0, const Eigen::MatrixXd& controls,
             const TrajectoryLoss& loss) const;

  // The Rev replay of segment s must end where the double rollout did (the
  // next checkpoint c), to rounding: otherwise the gradient would be that of
  // another trajectory (a hook with state across steps, or one that differs
  // between the double and Rev systems).
  void check_replay(int s, const double* c) const;

  // The loss terms of the state (q, q̇) after `step` steps; poses: its link
  // poses if known (else computed on demand).
  Rev loss_terms(const TrajectoryLoss& loss, int step, int T, double t, const VecX<Rev>& q, const VecX<Rev>& qd,
                 const std::vector<Transform<Rev>>* poses);

  Stepper<double>& fwd_;
  Stepper<Rev>& rev_;
  Tape& tape_;
  std::optional<AbaNode> node_;  // empty: aba<Rev> on the tape (rotors, velocity hooks)
  bool taped_aba_ = false;
  KinematicsNode kinematics_node_;
  ContactSystem<Rev>* contact_ = nullptr;
  std::optional<ForceContactNode> force_node_;
  std::optional<PgsNode> pgs_node_;
  Data<Rev> loss_data_;
  VecX<double> q_, qd_, ud_, carry_q_, carry_qd_;
  VecX<Rev> qr_, qdr_, ur_, q_in_, qd_in_, q_prev_, qd_prev_;
  std::vector<Transform<Rev>> poses_;  // link poses of the current step's starting state
  bool capture_poses_ = false;
  std::vector<double> ckpt_;
  std::vector<Rev> u_vars_;
  RecordedControls recorded_;  // trajectory null: held columns
  int first_interval_ = 0;
  RolloutGradientStats stats_;
};

}  // namespace neuralsim

