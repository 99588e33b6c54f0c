// The core of every training loop (the Trainer of window models: hybrid
// simulators and baselines; the SupervisedRegression of distillation): the
// epoch order, one Adam epoch over minibatches, the best parameters by
// validation loss with early stopping, and the state that a checkpoint
// holds (tools/training_checkpoint.hpp writes and reads it).
//
// One Adam epoch e over n items (windows, samples):
//   1. the items in the order epoch_permutation(seed, e, n), which depends
//      on (seed, e) only: the same on every platform and thread count
//   2. per minibatch of batch_size items: the caller's mean loss and mean
//      gradient over them, clipped to clip_norm (global norm), one Adam step
//      at schedule.at(e, epochs), the proximal step if any, projected onto
//      [lower, upper]
//   3. the validation loss at the epoch's parameters; finish_epoch
// A stop flag set before a minibatch leaves the state as it was after the
// previous epoch (the interrupted epoch does not count).
#pragma once

#include <Eigen/Core>

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "neuralsim/core/communicator.hpp"
#include "neuralsim/train/optimizer.hpp"

namespace neuralsim {

struct EpochRecord {
  int epoch = 0;               // 0-based
  int window_steps = 0;        // K of this epoch (trainers of windows); 0 otherwise
  double train_loss = 0;       // mean item loss over the epoch (each at the parameters it was evaluated at)
  double validation_loss = 0;  // NaN without a validation set
  double learning_rate = 0;    // Adam: the scheduled rate; L-BFGS: the accepted step size
  double gradient_norm = 0;    // Adam: mean over minibatches of ‖g‖ before clipping; L-BFGS: full-batch ‖g‖
  double seconds_gradient = 0;    // wall time in loss and gradient evaluations
  double seconds_optimizer = 0;   // wall time in clipping and the optimizer update
  double seconds_validation = 0;  // wall time of the validation pass
};

// Everything a checkpoint must hold to resume (Adam: bit-identically).
struct TrainingState {
  int epoch = 0;            // epochs completed
  Eigen::VectorXd x;        // current parameters
  Eigen::VectorXd best_x;   // parameters of the lowest validation loss (the last ones without validation)
  double best_validation = std::numeric_limits<double>::infinity();
  int best_epoch = -1;
  int epochs_since_best = 0;
  Eigen::VectorXd adam_m, adam_v;  // Adam moments (empty = zero)
  long long adam_t = 0;
  std::vector<EpochRecord> history;
  bool stopped_early = false;  // patience ran out
};

struct AdamEpochOptions {
  int epochs = 100;           // the schedule's length
  int batch_size = 16;        // items per minibatch (≥ 1)
  double clip_norm = 0;       // clip each minibatch gradient to this global norm (0 = off)
  AdamOptions adam;           // adam.learning_rate is not used: the schedule gives the rate
  Eigen::VectorXd decay_mask; // per parameter, 1 = weight decay applies (empty = all)
  Eigen::VectorXd lower, upper;  // box bounds (empty = none; ±inf allowed)
  LearningRateSchedule schedule;
  std::uint64_t seed = 0;     // the item order
  int patience = 0;           // early stopping: epochs without validation improvement (0 = off)
  const Communicator* communicator = nullptr;  // the stop flag is read collectively (null: one process)
  // Applied after every Adam step with the step's learning rate and the
  // optimizer (its moments give the step's metric), before the box
  // projection: the proximal operator of a non-smooth penalty (e.g.
  // adam_group_soft_threshold, train/group_lasso.hpp). Empty: none.
  std::function<void(Eigen::VectorXd& x, double step, const Adam& adam)> proximal;
};

// The mean loss over the items order[first … last) at x, and the mean
// gradient in `gradient` (sized by the caller). Throws NumericalError
// naming the items when the loss or the gradient is not finite.
using MinibatchLoss = std::function<double(const Eigen::VectorXd& x, const std::vector<int>& order, std::size_t first,
                                           std::size_t last, Eigen::VectorXd& gradient)>;
// The validation loss at x (NaN without validation data).
using ValidationLoss = std::function<double(const Eigen::VectorXd& x)>;

// A permutation of 0 … n−1 that depends on (seed, epoch) only (splitmix64
// mix → std::mt19937_64 → Fisher–Yates with unbiased rejection sampling; no
// implementation-defined distribution).
std::vector<int> epoch_permutation(std::uint64_t seed, int epoch, int n);

// One Adam epoch over `num_items` items (see the file comment); `record`
// comes with its epoch-specific fields (window_steps) set. Returns false,
// with `s` unchanged, when `stop` was set before a minibatch.
bool run_adam_epoch(TrainingState& s, const AdamEpochOptions& options, int num_items, const MinibatchLoss& loss,
                    const ValidationLoss& validation, bool has_validation, EpochRecord record,
                    const std::atomic<bool>* stop);

// Records the epoch that ended at x: the best parameters by validation loss
// (without validation: the latest), the patience counter and early stop.
void finish_epoch(TrainingState& s, const EpochRecord& record, const Eigen::VectorXd& x, bool has_validation,
                  int patience);

}  // namespace neuralsim
