// First-order optimizers for training: Adam with decoupled weight decay
// (AdamW), gradient clipping by global norm, learning-rate schedules, and
// L-BFGS through Ceres for full-batch problems.
//
// References:
//  - D. P. Kingma, J. Ba, "Adam: A Method for Stochastic Optimization",
//    ICLR 2015 (Algorithm 1: bias-corrected first and second moments).
//  - I. Loshchilov, F. Hutter, "Decoupled Weight Decay Regularization",
//    ICLR 2019 (AdamW: the decay acts on the weights, not through the
//    gradient, so it is not rescaled by the second-moment estimate).
//  - I. Loshchilov, F. Hutter, "SGDR: Stochastic Gradient Descent with Warm
//    Restarts", ICLR 2017 (cosine annealing, used here without restarts).
//  - R. Pascanu, T. Mikolov, Y. Bengio, "On the difficulty of training
//    recurrent neural networks", ICML 2013 (clipping by global norm).
//  - J. Nocedal, S. Wright, "Numerical Optimization", 2nd ed., ch. 7
//    (L-BFGS; Ceres' implementation with a Wolfe line search).
#pragma once

#include <Eigen/Core>
#include <functional>
#include <string>

namespace neuralsim {

struct AdamOptions {
  double learning_rate = 1e-3;  // α, used by step(x, grad); the trainer passes its schedule's rate instead
  double beta1 = 0.9;           // decay of the first-moment estimate, in [0, 1)
  double beta2 = 0.999;         // decay of the second-moment estimate, in [0, 1)
  double epsilon = 1e-8;        // added to √v̂ (Kingma & Ba), in the gradient's units
  double weight_decay = 0;      // λ ≥ 0: x ← x − α·λ·x each step (decoupled), per unit learning rate
};

// Adam / AdamW. Per step t (1-based), with g the gradient and α the learning
// rate (Kingma & Ba, Algorithm 1; Loshchilov & Hutter, Algorithm 2 with the
// schedule multiplier folded into α, as PyTorch's AdamW):
//   x ← x − α·λ·mask ⊙ x                        (decoupled weight decay)
//   m ← β₁ m + (1 − β₁) g,   v ← β₂ v + (1 − β₂) g²
//   x ← x − α · (m / (1 − β₁ᵗ)) / (√(v / (1 − β₂ᵗ)) + ε)
// The state (m, v, t) is exposed so that a checkpoint resumes bit-identically.
class Adam {
 public:
  // n variables. Throws InvalidArgument for n < 0 or options out of range.
  Adam(int n, AdamOptions options = {});

  int size() const { return static_cast<int>(m_.size()); }
  const AdamOptions& options() const { return options_; }

  // Which variables weight decay applies to (1 = decays, 0 = not; values in
  // between scale the decay). Physical parameters of a hybrid model should
  // not decay towards 0. Empty = every variable decays. Throws
  // InvalidArgument when the size is neither 0 nor n.
  void set_decay_mask(Eigen::VectorXd mask);
  const Eigen::VectorXd& decay_mask() const { return mask_; }

  // One update of x (size n) with gradient grad (size n) and learning rate α.
  // No heap allocation.
  void step(Eigen::VectorXd& x, const Eigen::VectorXd& grad, double learning_rate);
  void step(Eigen::VectorXd& x, const Eigen::VectorXd& grad) { step(x, grad, options_.learning_rate); }

  // State for checkpoints: moments and the number of steps taken.
  const Eigen::VectorXd& m() const { return m_; }
  const Eigen::VectorXd& v() const { return v_; }
  long long t() const { return t_; }
  // Throws InvalidArgument for sizes other than n or t < 0.
  void restore(Eigen::VectorXd m, Eigen::VectorXd v, long long t);

 private:
  AdamOptions options_;
  Eigen::VectorXd m_, v_, mask_;
  long long t_ = 0;
};

// Scales g in place so that ‖g‖₂ ≤ max_norm (all variables together, so the
// direction is kept; Pascanu et al. 2013). max_norm ≤ 0 turns clipping off.
// Returns ‖g‖₂ before clipping (non-finite when g is; g is then untouched).
double clip_gradient_norm(Eigen::VectorXd& g, double max_norm);

// Learning rate per epoch (0-based), constant within an epoch. With
// warmup_epochs = W > 0 the rate ramps linearly, base·(e + 1)/(W + 1) for
// e < W, then follows `kind` over the remaining epochs, counted from the end
// of warmup as e' = e − W out of E' = total − W:
//   kConstant:    base
//   kStep:        base · gamma^⌊e' / step_every⌋
//   kExponential: base · gamma^e'
//   kCosine:      base · (f + (1 − f) · ½ (1 + cos(π e' / E'))), f = final_fraction
//                 (SGDR without restarts: base at e' = 0, → f·base at the end)
struct LearningRateSchedule {
  enum class Kind { kConstant, kStep, kExponential, kCosine };
  Kind kind = Kind::kConstant;
  double base = 1e-3;          // the learning rate α (> 0)
  double final_fraction = 0;   // cosine: final rate / base, in [0, 1]
  double gamma = 0.1;          // step / exponential: factor per step_every epochs / per epoch, in (0, 1]
  int step_every = 10;         // step: epochs per factor gamma (≥ 1)
  int warmup_epochs = 0;       // linear warmup (≥ 0)

  double at(int epoch, int total_epochs) const;
  // Throws InvalidArgument (naming the field) when a value is out of range.
  void check() const;
};

const char* schedule_kind_name(LearningRateSchedule::Kind k);  // "constant", "step", "exponential", "cosine"

struct LbfgsOptions {
  int max_iterations = 100;
  int memory = 10;                     // correction pairs kept (Ceres max_lbfgs_rank)
  double function_tolerance = 1e-10;   // |Δf| / f below this: converged
  double gradient_tolerance = 1e-10;   // ‖∇f‖∞ below this (absolute, in the loss's units per variable): converged
  double parameter_tolerance = 1e-12;  // ‖Δx‖ / (‖x‖ + tol) below this: converged
};

struct LbfgsResult {
  Eigen::VectorXd x;        // the best point found (Ceres only accepts decreasing steps)
  double final_loss = 0;
  int iterations = 0;       // accepted iterations, not counting the starting point
  std::string termination;  // Ceres' message, or "stopped by the caller"
};

// One iteration as seen by an observer: x is valid during the call only.
struct LbfgsIterate {
  int iteration;  // 0 = the starting point
  double loss;
  double gradient_norm;  // ‖∇f(x)‖₂
  double step_size;      // accepted line-search step (0 at iteration 0)
  const Eigen::VectorXd& x;
};

// The loss function: returns f(x) and, when grad is not null, sets *grad
// (resized by the caller to x.size()) to ∇f(x). A non-finite return value at
// a trial point makes the line search try a shorter step; any exception it
// throws ends the minimization and is rethrown to the caller of
// minimize_lbfgs (after Ceres has returned).
using LossFunction = std::function<double(const Eigen::VectorXd& x, Eigen::VectorXd* grad)>;

// Minimizes f from x0 with L-BFGS (ceres::GradientProblemSolver, LBFGS
// direction, Wolfe line search). on_iteration is called after every accepted
// iteration (not for the starting point); returning false stops early (a
// Ctrl-C handler) and the result holds the last accepted point. Throws
// NumericalError when f is not finite at x0.
LbfgsResult minimize_lbfgs(const LossFunction& f, Eigen::VectorXd x0, const LbfgsOptions& options,
                           const std::function<bool(int iteration, double loss)>& on_iteration = {});

// The same, with the observer seeing each iterate (the trainer validates
// each one). Called for iteration 0 too.
LbfgsResult minimize_lbfgs_observed(const LossFunction& f, Eigen::VectorXd x0, const LbfgsOptions& options,
                                    const std::function<bool(const LbfgsIterate&)>& observer);

}  // namespace neuralsim
