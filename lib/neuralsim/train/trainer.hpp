// The training loop, generic over WindowModel: windows of the training
// recordings, minibatch gradients in parallel, Adam (or full-batch L-BFGS),
// validation on held-out recordings after each epoch, the best weights by
// validation loss, early stopping, a curriculum over the window length, and
// a state that resumes bit-identically.
//
// Adam path, per epoch e (the loop itself is train/training_loop.hpp):
//   1. K = current_window_steps(e); the windows of K steps of the training set
//   2. in the order epoch_permutation(seed, e, n)
//   3. per minibatch of batch_size windows: loss = mean of window losses,
//      gradient = mean of window gradients, summed in window order (the same
//      bits at any thread count), clipped to clip_norm, one Adam step at
//      schedule.at(e, epochs)
//   4. validation loss (K_val steps, kUnrolled, no gradient); best weights,
//      patience counter
// Stop flag: checked before each minibatch. When it is set, run_epoch returns
// false and leaves the state as it was after the previous epoch (the
// interrupted epoch does not count), so the caller can save best_x.
//
// L-BFGS path: one full-batch problem (mean loss over all training windows)
// per curriculum stage, solved by minimize_lbfgs with one EpochRecord per
// accepted iteration: "epochs" counts L-BFGS iterations, the learning rate
// field holds the accepted line-search step. A stage that converges before
// its budget ends early: the epoch counter jumps to the stage's end (no
// records for the skipped epochs; at the last stage, training is over).
// L-BFGS minimizes the loss alone: no weight decay, no clipping, no
// minibatches, no seed. A non-finite loss at a trial point of the line
// search only shortens the step; at a stage's starting point it is an error.
// Resuming an L-BFGS run restarts L-BFGS from state.x with an empty memory:
// it continues the descent but is not bit-identical to an uninterrupted run.
// The stop flag is also checked before each full-batch evaluation.
//
// Threads: windows are evaluated with tbb::parallel_for, each worker on its
// own clone of the model (taken from a pool, so nested parallelism inside a
// model cannot share one); results land in one slot per window and are
// summed in window order, so a seed gives the same bits at any thread count.
//
// Errors: a non-finite loss or gradient of a training window throws
// NumericalError naming the epoch and the window (trajectory, start); the
// state passed in is untouched by the failed epoch, so its best_x is still
// the best weights. Errors other than NumericalError thrown by the model
// pass through unchanged. A non-finite validation loss is recorded as is
// (+inf when the model throws NumericalError on a validation window: a
// diverging free rollout is a poor model, not a failure) and never counts as
// an improvement.
#pragma once

#include <Eigen/Core>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "neuralsim/core/communicator.hpp"
#include "neuralsim/core/trajectory.hpp"
#include "neuralsim/train/optimizer.hpp"
#include "neuralsim/train/training_data.hpp"
#include "neuralsim/train/training_loop.hpp"
#include "neuralsim/train/window_model.hpp"

namespace neuralsim {

struct TrainerOptions {
  enum class Optimizer { kAdam, kLbfgs };
  Optimizer optimizer = Optimizer::kAdam;
  int epochs = 100;     // Adam: passes over the training windows; L-BFGS: iterations
  int batch_size = 16;  // windows per minibatch (Adam)
  TrainingMode mode = TrainingMode::kUnrolled;
  int window_steps = 1;  // K: steps per training window (the final K with a curriculum)
  // Curriculum (Bengio et al. 2009, "Curriculum learning"): K starts at
  // curriculum_start and is multiplied by curriculum_factor every
  // curriculum_every epochs, up to window_steps. 0 = no curriculum.
  int curriculum_start = 0;
  int curriculum_every = 10;  // epochs per stage (≥ 1)
  int curriculum_factor = 2;  // ≥ 1
  int window_stride = 1;      // samples between training-window starts
  int max_samples = 0;        // training set only: first N samples of each trajectory (0 = all)
  int validation_steps = 0;   // K_val: steps per validation window (0 = window_steps)
  int validation_stride = 0;  // samples between validation-window starts (0 = K_val: disjoint windows)
  int patience = 0;           // early stopping: epochs without validation improvement (0 = off)
  double clip_norm = 0;       // clip the minibatch gradient to this global norm (0 = off)
  AdamOptions adam;           // adam.learning_rate is not used: the schedule gives the rate
  Eigen::VectorXd decay_mask; // per parameter, 1 = weight decay applies (empty = all); see Adam::set_decay_mask
  // Box bounds of the parameters (empty = unbounded; ±inf entries allowed):
  // Adam's iterate is projected onto them after every step (projected
  // gradient). L-BFGS has no bounds: a finite bound with the L-BFGS
  // optimizer is refused (use a log transformation instead).
  Eigen::VectorXd lower, upper;
  LearningRateSchedule schedule;  // schedule.base is Adam's learning rate
  LbfgsOptions lbfgs;         // lbfgs.max_iterations is not used: the epochs are the budget
  std::uint64_t seed = 0;     // minibatch order
  // Adam only: the proximal step after every Adam step (AdamEpochOptions::proximal).
  std::function<void(Eigen::VectorXd& x, double step, const Adam& adam)> proximal;
  // The processes the windows of each minibatch are spread over (window i
  // of a pass on rank i mod size, every slot gathered to every rank and
  // summed in window order: the same bits at any number of processes). Null:
  // this process alone.
  const Communicator* communicator = nullptr;
};

class Trainer {
 public:
  // Copies the prototype (clone()) and the data. Throws InvalidArgument for
  // options out of range or loss weights whose sizes do not match the data,
  // DataError for unusable data (see make_windows) or a training set without
  // a single window of window_steps steps.
  Trainer(const WindowModel& prototype, TrajectorySet train, TrajectorySet validation, WindowLossWeights weights,
          TrainerOptions options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Epoch 0: the model's initial parameters, zero Adam moments.
  TrainingState initial_state() const;

  // One epoch (L-BFGS: every remaining iteration). Returns false when
  // training is over (epochs done, early stop) or the stop flag was set.
  // The starting parameters compete for the best validation loss (the
  // first epoch of a fresh state evaluates them: best_epoch −1 when no
  // epoch beats them), so a hybrid that starts at the analytical model
  // (zero outputs) never ends worse than it on validation.
  bool run_epoch(TrainingState& s, const std::atomic<bool>* stop = nullptr);

  // Epochs until done, calling on_epoch after each completed one (the tool
  // writes checkpoints and progress there; returning false stops).
  void run(TrainingState& s, const std::function<bool(const TrainingState&)>& on_epoch,
           const std::atomic<bool>* stop = nullptr);

  // Mean loss over the validation windows (kUnrolled, no gradient); NaN
  // without validation windows.
  double validation_loss(const Eigen::VectorXd& x);
  // The same mean and its standard error over the validation windows
  // (sample deviation / √n, the windows taken as independent: disjoint
  // windows by default); NaN without validation windows, +inf when a
  // rollout diverges.
  struct ValidationStatistics {
    double mean = 0, standard_error = 0;
  };
  ValidationStatistics validation_statistics(const Eigen::VectorXd& x);

  // Mean loss over every training window of the final K in the training
  // mode, and its gradient when `grad` is not null (a full batch; e.g. the
  // KKT bound of a penalty path). NumericalError naming the window when a
  // loss or gradient is not finite.
  double training_loss(const Eigen::VectorXd& x, Eigen::VectorXd* grad);

  // K of epoch e under the curriculum.
  int current_window_steps(int epoch) const;

  int num_parameters() const;
  std::size_t num_validation_windows() const { return validation_windows_.size(); }
  const TrainerOptions& options() const { return options_; }
  // Ceres' message of the last L-BFGS stage ("" before any).
  const std::string& lbfgs_termination() const { return lbfgs_termination_; }

 private:
  struct Pool;
  // The first window (position in `order`) whose loss or gradient is not
  // finite or whose evaluation threw, or position −1.
  struct Failure {
    long position = -1;
    std::exception_ptr error;
    double loss = 0;
  };
  const std::vector<TrainingWindow>& training_windows(int steps);
  // Mean loss (and gradient when grad is not null) over windows[order[first … last)].
  // per_window (when not null) receives each window's loss in order.
  Failure evaluate(const Eigen::VectorXd& x, const std::vector<TrainingWindow>& windows, const std::vector<int>& order,
                   std::size_t first, std::size_t last, TrainingMode mode, double* loss, Eigen::VectorXd* grad,
                   std::vector<double>* per_window = nullptr);
  [[noreturn]] void throw_failure(const Failure& f, const std::vector<TrainingWindow>& windows,
                                  const std::vector<int>& order, const std::string& where) const;
  void check_state(const TrainingState& s) const;
  bool run_adam_epoch(TrainingState& s, const std::atomic<bool>* stop);
  void consider_initial_parameters(TrainingState& s);
  void run_lbfgs(TrainingState& s, const std::function<bool(const TrainingState&)>& on_epoch,
                 const std::atomic<bool>* stop);
  bool done(const TrainingState& s) const;

  std::unique_ptr<WindowModel> model_;  // the prototype of the workers' clones
  TrajectorySet train_, validation_;
  WindowLossWeights weights_;
  TrainerOptions options_;
  std::unique_ptr<Pool> pool_;
  int cached_steps_ = -1;  // K of train_windows_
  std::vector<TrainingWindow> train_windows_;
  std::vector<TrainingWindow> validation_windows_;
  std::vector<int> validation_order_;
  // Per-window results of one parallel pass, summed in window order afterwards.
  std::vector<double> slot_loss_;
  std::vector<std::exception_ptr> slot_error_;
  std::vector<Eigen::VectorXd> slot_grad_;
  std::string lbfgs_termination_;
};

}  // namespace neuralsim
