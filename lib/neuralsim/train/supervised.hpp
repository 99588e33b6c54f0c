// Supervised regression of an MLP (nn/mlp.hpp) on (x, y) pairs with Adam:
// the "distillation" of a controller (issue 14, a network that imitates the
// convex MPC) is behaviour cloning, i.e. plain least squares on recorded
// (features, forces) pairs (Ross, Gordon, Bagnell, AISTATS 2011, §2).
//
// Normalization (fit_regression_normalization): the inputs are standardized
// with the training set's mean and (population) standard deviation, and the
// outputs de-standardized by the network's output scaling (scale = the
// training targets' standard deviation, offset = their mean), so the last
// layer works in units of one standard deviation of each target. Neither is
// trained.
//
// Loss. L(θ) = 1/(N m) Σ_k Σ_j ((ŷ_kj − y_kj) / s_j)², s_j the output scale
// (the targets' standard deviation): a dimensionless mean squared error in
// which every output counts equally, whatever its units. For a network
// without hidden layers and identity output it is a weighted linear least
// squares problem whose minimizer is the ordinary least-squares fit of each
// output (the weights are per output), which is what the tests check.
//
// Per epoch e: one Adam epoch of the training loop core
// (train/training_loop.hpp) over the training samples: in the order
// epoch_permutation(seed, e, N), minibatches of batch_size, per minibatch
// the gradient of the minibatch mean and one Adam step at
// schedule.at(e, epochs); then the validation loss (full set) and the best
// parameters by it. Threads: a minibatch is cut into fixed blocks
// of kBlock samples; blocks are evaluated on TBB, each into its own
// gradient slot, and the slots are summed in block order, so the result is
// the same, bit for bit, at any thread count. The state (parameters, Adam
// moments, history) resumes bit-identically.
#pragma once

#include <Eigen/Core>

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "neuralsim/nn/mlp.hpp"
#include "neuralsim/train/optimizer.hpp"
#include "neuralsim/train/training_loop.hpp"

namespace neuralsim {

struct SupervisedOptions {
  int epochs = 100;        // ≥ 1
  int batch_size = 64;     // ≥ 1 samples per minibatch
  LearningRateSchedule schedule;  // base = learning rate
  AdamOptions adam;        // beta1, beta2, epsilon, weight_decay (its learning_rate is unused)
  double clip_norm = 0;    // global-norm clipping of each minibatch gradient (0 = off)
  std::uint64_t seed = 0;  // minibatch order
  // The processes a minibatch's blocks are spread over (block b on rank b
  // mod size, gathered to every rank and summed in block order: the same
  // bits at any number of processes). Null: this process alone.
  const Communicator* communicator = nullptr;
  // Throws InvalidArgument naming the field.
  void check() const;
};

// Input normalization and output scaling divide by a column's standard
// deviation, and the loss squares errors in those units: a column whose
// mean or standard deviation exceeds this would overflow them.
inline constexpr double kMaxRegressionScale = 1e100;

// The first column of `m` (N × n) whose mean or standard deviation exceeds
// kMaxRegressionScale, as "column 3 has mean 1e+300 and standard deviation
// 0"; "" if none. Computed without overflow for any finite values, so a
// caller can name its data before fit_regression_normalization.
std::string regression_scale_problem(const nn::RowMatrixXd& m);

// Sets the network's input normalization (std floored at `std_floor`) and
// output scaling from row-major samples x (N × n_in) and y (N × n_out).
// InvalidArgument on mismatched sizes or N = 0.
void fit_regression_normalization(nn::Mlp& network, const nn::RowMatrixXd& x, const nn::RowMatrixXd& y,
                                  double std_floor = 1e-3);

class SupervisedRegression {
 public:
  static constexpr int kBlock = 16;  // samples per parallel block (fixes the summation order)

  // `network` gives the shape, the normalization and the initial weights.
  // Training data must be non-empty; validation may be empty (0 rows).
  // InvalidArgument on mismatched sizes, non-finite data or bad options.
  SupervisedRegression(nn::Mlp network, nn::RowMatrixXd x_train, nn::RowMatrixXd y_train,
                       nn::RowMatrixXd x_validation, nn::RowMatrixXd y_validation, SupervisedOptions options);

  const SupervisedOptions& options() const { return options_; }
  const nn::Mlp& network() const { return net_; }
  int num_parameters() const { return static_cast<int>(net_.num_parameters()); }
  Eigen::Index num_train() const { return x_train_.rows(); }
  Eigen::Index num_validation() const { return x_val_.rows(); }

  // The network with parameters `x` (normalization and scaling kept).
  nn::Mlp network_at(const Eigen::VectorXd& x) const;
  TrainingState initial_state() const;

  // The loss above on the training or validation set (NaN for an empty
  // validation set), and optionally its gradient.
  double train_loss(const Eigen::VectorXd& x, Eigen::VectorXd* grad = nullptr) const;
  double validation_loss(const Eigen::VectorXd& x) const;
  // RMSE per output in the targets' units, on either set.
  Eigen::VectorXd rmse(const Eigen::VectorXd& x, bool validation) const;

  // One epoch. Returns false (state unchanged) when `stop` is set before a
  // minibatch. NumericalError naming the epoch and minibatch when a loss or
  // gradient is not finite (state unchanged).
  bool run_epoch(TrainingState& state, const std::atomic<bool>* stop = nullptr) const;
  // Epochs until options().epochs; `after_epoch` (may be empty) runs after
  // each and stops the run by returning false.
  void run(TrainingState& state, const std::function<bool(const TrainingState&)>& after_epoch,
           const std::atomic<bool>* stop = nullptr) const;

 private:
  // Loss sum and gradient sum over rows [begin, end) of the given order.
  double accumulate(const Eigen::VectorXd& x, const nn::RowMatrixXd& X, const nn::RowMatrixXd& Y,
                    const int* rows, Eigen::Index count, Eigen::VectorXd* grad) const;

  nn::Mlp net_;
  nn::RowMatrixXd x_train_, y_train_, x_val_, y_val_;
  SupervisedOptions options_;
  Eigen::VectorXd inv_scale2_;  // 1 / s_j²
};

}  // namespace neuralsim
