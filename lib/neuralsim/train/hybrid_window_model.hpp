// A hybrid simulator (physics + neural augmentations) as a WindowModel: its
// parameter vector is the HybridParameters vector of a RolloutProblem,
//
//   x = [ physical variables (num_physical()) | network weights ]
//
// and the loss of a window is window_model.hpp's definition, evaluated and
// differentiated exactly by HybridRollout's reverse mode
// (parameters/hybrid_rollout.hpp, docs/gradients.md) in each training mode:
//
//   kUnrolled          one rollout of K steps from the window's first recorded
//                      state under its controls; one reverse sweep through the
//                      whole window (backpropagation through time).
//   kOneStep           K one-step problems, step k from the recorded state k
//                      (teacher forcing); ∂loss/∂x = Σ_k of their gradients.
//   kUnrolledDetached  a double rollout of K steps from the window's first
//                      recorded state gives the predicted states x̂_0..x̂_{K-1}
//                      (x̂_0 = the recorded state 0); then K one-step problems
//                      from x̂_k (as constants) with the recorded next states
//                      as targets. Its loss VALUE is the unrolled one (the same
//                      predictions); its gradient is Σ_k ∂ℓ_k/∂x at fixed x̂_k,
//                      i.e. ∂x̂_{k+1}/∂x̂_k = 0: the state passed between steps
//                      is detached.
//
// Each step's term is (1/K)[Σ_i wq_i (q̂_i − q_i)² + Σ_j wqd_j (q̂d_j − qd_j)²],
// written as one loss term shared by every mode (grad/rollout_gradient.hpp's
// state_tracking_loss carries a factor ½ and is not used), so a window of
// K = 1 is the same computation in the three modes, bit for bit.
//
// Values: without a gradient the loss comes from the double rollout; with a
// gradient, from the taped replay of the same steps (rollout_gradient.hpp:
// both agree to rounding; tested to 1e-13 relative).
//
// Controls between samples: with `sim.controls` other than zero_order_hold
// (step/control_signal.hpp), every step replays its recorded interval from
// the window's recording (TrainingWindow::recording), at the recording's
// time stamps, with the controls interpolated at every substep and RK4
// stage; the simulation step is sim.dt / sim.substeps at most, independent
// of the data interval, and the loss compares at the recorded samples only.
// With zero-order hold, each step is sim.dt long under its column of
// controls (the data interval must then be sim.dt).
//
// Physical parameters of kind initial.qd.* are refused (a window starts from
// its recorded state), and so are networks reading `time` (HybridRollout
// simulates from t = 0, so windows and one-step problems would each see
// their own clock).
//
// Not thread-safe (it owns a tape): one object per thread, clone() for each
// worker; clones share nothing. No heap allocation per step: a warmed-up
// unrolled loss + gradient makes 7 allocations whatever K (HybridRollout's
// own, per call); the one-step and detached modes make one HybridRollout call
// per step, so as many allocations per step. The window buffers are reused
// once sized.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "neuralsim/parameters/hybrid_rollout.hpp"
#include "neuralsim/train/window_model.hpp"

namespace neuralsim {

class HybridWindowModel final : public WindowModel {
 public:
  // InvalidArgument if the problem cannot be built (HybridRollout's checks),
  // has initial.qd.* parameters or a network reading `time`.
  explicit HybridWindowModel(RolloutProblem problem);
  ~HybridWindowModel() override;
  HybridWindowModel(const HybridWindowModel&) = delete;
  HybridWindowModel& operator=(const HybridWindowModel&) = delete;

  std::string name() const override { return "hybrid"; }
  int num_parameters() const override;
  // Physical variables at the problem's configured values (optimizer
  // variables: transformed and scaled), then the blueprints' weights.
  Eigen::VectorXd initial_parameters() const override;

  // Errors: InvalidArgument for x or the weights (size, not finite,
  // negative weights), DataError for a window that does not fit the model
  // (shapes, non-finite data), NumericalError when the rollout diverges or
  // the loss or a gradient is not finite (with step.check_finite, the
  // default; without it, non-finite values are returned as they are).
  double loss(const Eigen::VectorXd& x, const TrainingWindow& w, TrainingMode mode, const WindowLossWeights& weights,
              Eigen::VectorXd* grad) override;

  // loss() and, for every non-null output, its derivative: ∂loss/∂x
  // (num_parameters()), ∂loss/∂(w.q column 0) (nq, raw coordinates) and
  // ∂loss/∂(w.qd column 0) (nv). In kOneStep and kUnrolledDetached only
  // step 0 depends on the first recorded state.
  double loss_with_state_gradient(const Eigen::VectorXd& x, const TrainingWindow& w, TrainingMode mode,
                                  const WindowLossWeights& weights, Eigen::VectorXd* grad_x,
                                  Eigen::VectorXd* grad_q0, Eigen::VectorXd* grad_qd0);

  // Free double rollout with the parameters x, controls.cols() steps. With
  // sim.controls other than zero_order_hold, `recording` is required when
  // there are controls (InvalidArgument without it).
  void rollout(const Eigen::VectorXd& x, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
               const Eigen::MatrixXd& controls, Eigen::MatrixXd* q, Eigen::MatrixXd* qd,
               const Trajectory* recording = nullptr) override;

  // An independent model (its own HybridRollout and tape) of the same problem.
  std::unique_ptr<WindowModel> clone() const override;

  int num_physical() const;
  int num_weights() const;
  // Physical names, then augment.<network>.w<k> (HybridParameters::names()).
  std::vector<std::string> parameter_names() const;
  // Bounds of each optimizer variable (±inf for weights and unbounded ones).
  Eigen::VectorXd lower_bounds() const;
  Eigen::VectorXd upper_bounds() const;
  // Physical values of the first num_physical() variables of x (what
  // params.json reports: p = to_physical(transformation, x · scale)).
  Eigen::VectorXd physical_values(const Eigen::VectorXd& x) const;
  // The problem's blueprints with the weights of x in their networks (for
  // the network weight files).
  std::vector<AugmentBlueprint> blueprints_at(const Eigen::VectorXd& x) const;

  const RolloutProblem& problem() const { return problem_; }
  const HybridParameters& hybrid_parameters() const;

  // Steps per checkpoint segment of the unrolled gradient: 0 (default) is one
  // segment up to 1 024 steps (no extra double pass; the tape holds the
  // window), ⌈√K⌉ beyond; any other value is passed on to HybridRollout.
  void set_checkpoint_interval(int steps) { checkpoint_interval_ = steps; }

 private:
  struct Workspace;  // the rollout, its tape, the loss context and buffers

  void check(const char* where, const Eigen::VectorXd& x, const TrainingWindow& w,
             const WindowLossWeights& weights) const;
  // loss_with_state_gradient after the checks.
  double evaluate(const Eigen::VectorXd& x, const TrainingWindow& w, TrainingMode mode,
                  const WindowLossWeights& weights, Eigen::VectorXd* grad_x, Eigen::VectorXd* grad_q0,
                  Eigen::VectorXd* grad_qd0);
  void load_x(const Eigen::VectorXd& x);
  const Eigen::MatrixXd& controls_of(const TrainingWindow& w);
  // The recording whose controls the steps interpolate or delay
  // (sim.controls other than zero_order_hold, or a delay; controls given),
  // else null.
  const Trajectory* interpolated_controls(const Eigen::MatrixXd& controls, const Trajectory* recording,
                                          const char* where) const;
  // One gradient call of K' steps from (q0, qd0) whose step j is the
  // window's step `offset` + j; adds ∂/∂x into grad_x when given.
  double gradient_call(const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0, const Eigen::MatrixXd& controls,
                       int offset, Eigen::VectorXd* grad_x, Eigen::VectorXd* grad_q0, Eigen::VectorXd* grad_qd0);

  RolloutProblem problem_;
  std::unique_ptr<Workspace> ws_;
  int checkpoint_interval_ = 0;
};

}  // namespace neuralsim
