// What a trainer optimizes: a model with a flat parameter vector that
// predicts a window of a recorded trajectory and returns the loss and its
// gradient. Hybrid simulators (physics + networks) and the data-driven
// baselines (MLP, LSTM) implement it, so every training mode, optimizer and
// evaluation applies to both in the same way.
//
// Training modes, as compared by seed 002 (../shared/seeds/002_*.txt):
//  - kOneStep:          teacher forcing. Step k starts from the recorded
//                       state k; the loss is on the predicted state k+1.
//  - kUnrolledDetached: the model rolls K steps from the window's first
//                       recorded state, but the state passed from one step
//                       to the next is detached: ∂x_{k+1}/∂x_k is taken as 0,
//                       so the gradient reaches the parameters only through
//                       each step's direct dependence on them.
//  - kUnrolled:         the same rollout, fully differentiated through time.
// A curriculum (growing K) is the trainer's business, not the model's.
//
// A WindowModel is used by one thread at a time; clone() makes one per
// worker. Virtual calls are per window, never per step or scalar.
#pragma once

#include <Eigen/Core>
#include <memory>
#include <string>

#include "neuralsim/core/trajectory.hpp"

namespace neuralsim {

enum class TrainingMode { kOneStep, kUnrolledDetached, kUnrolled };
// "one_step", "unrolled_detached", "unrolled" (the config's spelling).
const char* training_mode_name(TrainingMode mode);

// One window of K steps cut from a recording. Column k of the matrices is
// step k (0 ≤ k < K): states[k] is the recorded state before step k, controls
// are applied during step k, targets are the recorded state after step k
// (so targets column k equals states column k+1 of the recording).
struct TrainingWindow {
  int trajectory = 0;       // index of the source trajectory in its set
  int start = 0;            // sample index of the first state
  Eigen::MatrixXd q;        // nq × K recorded positions before each step
  Eigen::MatrixXd qd;       // nv × K recorded velocities before each step
  Eigen::MatrixXd controls; // nv × K applied joint forces (0 × K when none)
  Eigen::MatrixXd q_next;   // nq × K recorded positions after each step
  Eigen::MatrixXd qd_next;  // nv × K recorded velocities after each step
  // The recording the window was cut from (make_windows; not owned: valid
  // while its TrajectorySet lives), for models that interpolate its
  // controls between samples (sim.controls). Null for hand-made windows.
  const Trajectory* recording = nullptr;
  int steps() const { return static_cast<int>(q.cols()); }
};

// Loss of a window: mean over its K steps of Σ_i wq_i (q̂_i − q_i)² +
// Σ_j wqd_j (q̂d_j − qd_j)², where (q̂, q̂d) is the model's prediction of the
// state after each step. The weights normalize coordinates of different
// units (typically 1/variance of the training data).
struct WindowLossWeights {
  Eigen::VectorXd wq;   // nq
  Eigen::VectorXd wqd;  // nv
};

class WindowModel {
 public:
  virtual ~WindowModel() = default;

  virtual std::string name() const = 0;
  virtual int num_parameters() const = 0;
  // The starting point of training (seeded initialization for networks, the
  // configured values for physical parameters), in optimizer variables.
  virtual Eigen::VectorXd initial_parameters() const = 0;

  // Loss of window w under parameters x in the given mode; when grad is not
  // null it is resized to num_parameters() and set to ∂loss/∂x.
  virtual double loss(const Eigen::VectorXd& x, const TrainingWindow& w, TrainingMode mode,
                      const WindowLossWeights& weights, Eigen::VectorXd* grad) = 0;

  // Free rollout (no teacher forcing, no gradient) of `steps` steps from
  // (q0, qd0) under controls (nv × steps, or 0 × steps): positions nq × steps
  // and velocities nv × steps after each step. Used for evaluation.
  // `recording`: the recording that (q0, qd0) is sample 0 of and the
  // controls come from, for models that interpolate controls between its
  // samples (the hybrid model with sim.controls); others ignore it.
  virtual void rollout(const Eigen::VectorXd& x, const Eigen::VectorXd& q0, const Eigen::VectorXd& qd0,
                       const Eigen::MatrixXd& controls, Eigen::MatrixXd* q, Eigen::MatrixXd* qd,
                       const Trajectory* recording = nullptr) = 0;

  virtual std::unique_ptr<WindowModel> clone() const = 0;
};

}  // namespace neuralsim
