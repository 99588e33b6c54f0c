#include "neuralsim/train/trainer.hpp"

#include <tbb/blocked_range.h>
#include <tbb/concurrent_queue.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <utility>

#include "neuralsim/core/communicator.hpp"
#include "neuralsim/core/splitmix.hpp"
#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"

namespace neuralsim {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Thrown from the L-BFGS loss when the stop flag is set mid-iteration.
struct StopRequested {};

constexpr std::size_t kFullBatchChunk = 32;  // windows evaluated per parallel pass outside minibatches

}  // namespace

// Clones of the model for the workers. A clone is taken for one block of
// windows and given back afterwards: unlike a per-thread slot, a clone is
// never shared by two blocks that a worker interleaves (TBB may run another
// block on a thread waiting inside a nested parallel loop).
struct Trainer::Pool {
  explicit Pool(const WindowModel& m) : prototype(m) {}
  WindowModel* acquire() {
    WindowModel* m = nullptr;
    if (free.try_pop(m)) return m;
    std::lock_guard<std::mutex> lock(mutex);
    owned.push_back(prototype.clone());
    return owned.back().get();
  }
  void release(WindowModel* m) { free.push(m); }

  const WindowModel& prototype;
  tbb::concurrent_queue<WindowModel*> free;
  std::mutex mutex;
  std::vector<std::unique_ptr<WindowModel>> owned;
};

Trainer::Trainer(const WindowModel& prototype, TrajectorySet train, TrajectorySet validation,
                 WindowLossWeights weights, TrainerOptions options)
    : model_(prototype.clone()),
      train_(std::move(train)),
      validation_(std::move(validation)),
      weights_(std::move(weights)),
      options_(std::move(options)) {
  const TrainerOptions& o = options_;
  const auto at_least = [](const char* field, long long v, long long lo) {
    if (v < lo)
      throw InvalidArgument(std::string("Trainer: ") + field + " is " + std::to_string(v) + ", must be >= " +
                            std::to_string(lo));
  };
  at_least("epochs", o.epochs, 0);
  at_least("batch_size", o.batch_size, 1);
  at_least("window_steps", o.window_steps, 1);
  at_least("curriculum_start", o.curriculum_start, 0);
  at_least("curriculum_every", o.curriculum_every, 1);
  at_least("curriculum_factor", o.curriculum_factor, 1);
  at_least("window_stride", o.window_stride, 1);
  at_least("max_samples", o.max_samples, 0);
  at_least("validation_steps", o.validation_steps, 0);
  at_least("validation_stride", o.validation_stride, 0);
  at_least("patience", o.patience, 0);
  at_least("lbfgs.memory", o.lbfgs.memory, 1);
  if (o.curriculum_start > o.window_steps)
    throw InvalidArgument("Trainer: curriculum_start (" + std::to_string(o.curriculum_start) +
                          ") is larger than window_steps (" + std::to_string(o.window_steps) + ")");
  if (!(o.clip_norm >= 0) || !std::isfinite(o.clip_norm))
    throw InvalidArgument("Trainer: clip_norm is " + format_number(o.clip_norm) + ", must be finite and >= 0");
  o.schedule.check();
  const int P = model_->num_parameters();
  Adam(P, o.adam).set_decay_mask(o.decay_mask);  // checks the Adam options and the mask size
  for (const Eigen::VectorXd* b : {&o.lower, &o.upper})
    if (b->size() != 0 && b->size() != P)
      throw InvalidArgument("Trainer: bounds have " + std::to_string(b->size()) + " entries, the model has " +
                            std::to_string(P) + " parameters");
  if (o.lower.size() && o.upper.size() && (o.lower.array() > o.upper.array()).any())
    throw InvalidArgument("Trainer: a lower bound exceeds its upper bound");
  if (o.optimizer == TrainerOptions::Optimizer::kLbfgs &&
      ((o.lower.size() && o.lower.array().isFinite().any()) || (o.upper.size() && o.upper.array().isFinite().any())))
    throw InvalidArgument("Trainer: L-BFGS cannot keep parameters within bounds; use optimizer adam, or a log "
                          "transformation instead of the bound");
  {
    const Eigen::VectorXd x0 = model_->initial_parameters();
    for (Eigen::Index i = 0; i < x0.size(); ++i)
      if ((o.lower.size() && x0[i] < o.lower[i]) || (o.upper.size() && x0[i] > o.upper[i]))
        throw InvalidArgument("Trainer: initial parameter " + std::to_string(i) + " = " + format_number(x0[i]) +
                              " lies outside its bounds");
  }

  if (train_.trajectories.empty()) throw DataError("Trainer: the training set has no trajectory");
  const Trajectory& t0 = train_.trajectories.front();
  if (weights_.wq.size() != t0.q.cols() || weights_.wqd.size() != t0.qd.cols())
    throw InvalidArgument("Trainer: the loss weights have " + std::to_string(weights_.wq.size()) + " + " +
                          std::to_string(weights_.wqd.size()) + " entries, the data has nq = " +
                          std::to_string(t0.q.cols()) + ", nv = " + std::to_string(t0.qd.cols()));
  if (!weights_.wq.allFinite() || !weights_.wqd.allFinite() || (weights_.wq.array() < 0).any() ||
      (weights_.wqd.array() < 0).any())
    throw InvalidArgument("Trainer: the loss weights must be finite and >= 0");
  for (std::size_t i = 0; i < validation_.trajectories.size(); ++i) {
    const Trajectory& t = validation_.trajectories[i];
    if (t.q.cols() != t0.q.cols() || t.qd.cols() != t0.qd.cols() || t.has_tau() != t0.has_tau())
      throw DataError("Trainer: validation trajectory " + std::to_string(i) + " ('" + t.name +
                      "') does not match the training data (nq, nv or the presence of tau)");
  }

  // The final window length must fit the data; the first stage's windows
  // are cut now so that bad data fails here, not at epoch 0.
  std::int64_t final_windows = 0;
  const WindowOptions final_options{o.window_steps, o.window_stride, o.max_samples};
  for (const Trajectory& t : train_.trajectories) final_windows += count_windows(t.q.rows(), final_options);
  if (final_windows == 0)
    throw DataError("Trainer: no training window of " + std::to_string(o.window_steps) +
                    " steps: every training trajectory has fewer than " + std::to_string(o.window_steps + 1) +
                    " samples" + (o.max_samples > 0 ? " (after max_samples)" : ""));
  training_windows(current_window_steps(0));

  const int kval = o.validation_steps > 0 ? o.validation_steps : o.window_steps;
  validation_windows_ = make_windows(validation_, {kval, o.validation_stride > 0 ? o.validation_stride : kval, 0});
  if (!validation_.trajectories.empty() && validation_windows_.empty())
    throw DataError("Trainer: no validation window of " + std::to_string(kval) +
                    " steps: every validation trajectory has fewer than " + std::to_string(kval + 1) + " samples");
  validation_order_.resize(validation_windows_.size());
  std::iota(validation_order_.begin(), validation_order_.end(), 0);
  pool_ = std::make_unique<Pool>(*model_);
}

Trainer::~Trainer() = default;

int Trainer::num_parameters() const { return model_->num_parameters(); }

int Trainer::current_window_steps(int epoch) const {
  const TrainerOptions& o = options_;
  if (o.curriculum_start <= 0) return o.window_steps;
  long long k = o.curriculum_start;
  for (int stage = std::max(epoch, 0) / o.curriculum_every; stage > 0 && k < o.window_steps; --stage)
    k *= o.curriculum_factor;
  return static_cast<int>(std::min<long long>(k, o.window_steps));
}

const std::vector<TrainingWindow>& Trainer::training_windows(int steps) {
  if (steps != cached_steps_) {
    train_windows_.clear();
    train_windows_ = make_windows(train_, {steps, options_.window_stride, options_.max_samples});
    cached_steps_ = steps;
  }
  return train_windows_;
}

TrainingState Trainer::initial_state() const {
  TrainingState s;
  s.x = model_->initial_parameters();
  check_argument_size("Trainer::initial_state", "the model's initial parameters", s.x.size(),
                      model_->num_parameters());
  s.best_x = s.x;
  s.adam_m = Eigen::VectorXd::Zero(s.x.size());
  s.adam_v = Eigen::VectorXd::Zero(s.x.size());
  return s;
}

void Trainer::check_state(const TrainingState& s) const {
  const long P = model_->num_parameters();
  check_argument_size("Trainer", "state.x", s.x.size(), P);
  if (s.best_x.size() != 0) check_argument_size("Trainer", "state.best_x", s.best_x.size(), P);
  if (s.adam_m.size() != 0) check_argument_size("Trainer", "state.adam_m", s.adam_m.size(), P);
  if (s.adam_v.size() != s.adam_m.size())
    throw InvalidArgument("Trainer: state.adam_v has size " + std::to_string(s.adam_v.size()) + ", state.adam_m " +
                          std::to_string(s.adam_m.size()));
  if (s.epoch < 0) throw InvalidArgument("Trainer: state.epoch is " + std::to_string(s.epoch));
}

bool Trainer::done(const TrainingState& s) const { return s.stopped_early || s.epoch >= options_.epochs; }

namespace trainer_detail {

// Every rank's slots of windows begin … begin + m − 1 (loss, error, gradient)
// to every rank: the sum in window order then follows as in one process.
void exchange_slots(const Communicator& comm, std::size_t begin, std::size_t m, bool with_gradient,
                    std::vector<double>& loss, std::vector<std::exception_ptr>& error,
                    std::vector<Eigen::VectorXd>& grad) {
  auto pack = [&](std::size_t i, ByteWriter& w) {
    w.put(loss[i]);
    std::uint8_t kind = 0;
    std::string message;
    if (error[i]) {
      try {
        std::rethrow_exception(error[i]);
      } catch (const NumericalError& e) {
        kind = 1;
        message = e.what();
      } catch (const std::exception& e) {
        kind = 2;
        message = e.what();
      } catch (...) {
        kind = 2;
        message = "unknown exception";
      }
    }
    w.put(kind);
    w.put_string(message);
    if (with_gradient) w.put_doubles(grad[i].data(), static_cast<std::size_t>(grad[i].size()));
  };
  auto unpack = [&](std::size_t i, ByteReader& in) {
    loss[i] = in.get<double>();
    const auto kind = in.get<std::uint8_t>();
    const std::string message = in.get_string();
    error[i] = kind == 0 ? nullptr
               : kind == 1 ? std::make_exception_ptr(NumericalError(message))
                           : std::make_exception_ptr(std::runtime_error(message));
    if (with_gradient) {
      const std::vector<double> g = in.get_vector();
      grad[i] = Eigen::Map<const Eigen::VectorXd>(g.data(), static_cast<Eigen::Index>(g.size()));
    }
  };
  exchange_owned(comm, m, pack, unpack, static_cast<long long>(begin));
}

}  // namespace trainer_detail

Trainer::Failure Trainer::evaluate(const Eigen::VectorXd& x, const std::vector<TrainingWindow>& windows,
                                   const std::vector<int>& order, std::size_t first, std::size_t last,
                                   TrainingMode mode, double* loss, Eigen::VectorXd* grad,
                                   std::vector<double>* per_window) {
  const std::size_t chunk = std::max<std::size_t>(static_cast<std::size_t>(options_.batch_size), kFullBatchChunk);
  if (slot_loss_.size() < chunk) {
    slot_loss_.resize(chunk);
    slot_error_.resize(chunk);
    slot_grad_.resize(chunk);
  }
  if (grad) grad->setZero(model_->num_parameters());
  double sum = 0;
  Failure failure;
  const Communicator* comm = options_.communicator;
  for (std::size_t begin = first; begin < last; begin += chunk) {
    const std::size_t m = std::min(chunk, last - begin);
    // With processes, window begin + i is rank (begin + i) mod size's; every
    // rank then gathers every slot (trainer_detail::exchange_slots).
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, m, 1), [&](const tbb::blocked_range<std::size_t>& r) {
      WindowModel* model = pool_->acquire();
      for (std::size_t i = r.begin(); i != r.end(); ++i) {
        if (!owns(comm, static_cast<long long>(begin + i))) continue;
        slot_error_[i] = nullptr;
        try {
          slot_loss_[i] = model->loss(x, windows[order[begin + i]], mode, weights_, grad ? &slot_grad_[i] : nullptr);
        } catch (...) {
          slot_error_[i] = std::current_exception();
          slot_loss_[i] = std::numeric_limits<double>::quiet_NaN();
        }
      }
      pool_->release(model);
    });
    if (comm) trainer_detail::exchange_slots(*comm, begin, m, grad != nullptr, slot_loss_, slot_error_, slot_grad_);
    // Summed in window order: the same bits whatever the scheduling.
    for (std::size_t i = 0; i < m; ++i) {
      bool finite = !slot_error_[i] && std::isfinite(slot_loss_[i]);
      if (grad && finite) finite = slot_grad_[i].size() == grad->size() && slot_grad_[i].allFinite();
      if (!finite && failure.position < 0) {
        failure.position = static_cast<long>(begin + i);
        failure.error = slot_error_[i];
        failure.loss = slot_loss_[i];
      }
      sum += slot_loss_[i];
      if (per_window) per_window->push_back(slot_loss_[i]);
      if (grad && finite) *grad += slot_grad_[i];
    }
  }
  const double n = static_cast<double>(last - first);
  *loss = sum / n;
  if (grad) *grad /= n;
  return failure;
}

void Trainer::throw_failure(const Failure& f, const std::vector<TrainingWindow>& windows,
                            const std::vector<int>& order, const std::string& where) const {
  const TrainingWindow& w = windows[order[static_cast<std::size_t>(f.position)]];
  const Trajectory& t = train_.trajectories[static_cast<std::size_t>(w.trajectory)];
  const std::string context = "training " + where + ", window of trajectory " + std::to_string(w.trajectory) +
                              (t.name.empty() ? "" : " ('" + t.name + "')") + " starting at sample " +
                              std::to_string(w.start) + " (" + std::to_string(w.steps()) + " steps): ";
  if (f.error) {
    try {
      std::rethrow_exception(f.error);
    } catch (const NumericalError& e) {
      throw NumericalError(context + e.what());
    }
  }
  throw NumericalError(context + (std::isfinite(f.loss) ? std::string("the gradient is not finite")
                                                        : "the loss is " + format_number(f.loss)));
}

double Trainer::validation_loss(const Eigen::VectorXd& x) {
  check_argument_size("Trainer::validation_loss", "x", x.size(), model_->num_parameters());
  if (validation_windows_.empty()) return std::numeric_limits<double>::quiet_NaN();
  double loss = 0;
  const Failure f = evaluate(x, validation_windows_, validation_order_, 0, validation_windows_.size(),
                             TrainingMode::kUnrolled, &loss, nullptr);
  if (f.error) {
    // A free rollout that diverges is a bad model, not a bug: an infinite loss.
    try {
      std::rethrow_exception(f.error);
    } catch (const NumericalError&) {
      return std::numeric_limits<double>::infinity();
    }
  }
  return loss;
}

Trainer::ValidationStatistics Trainer::validation_statistics(const Eigen::VectorXd& x) {
  check_argument_size("Trainer::validation_statistics", "x", x.size(), model_->num_parameters());
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  if (validation_windows_.empty()) return {nan, nan};
  double loss = 0;
  std::vector<double> losses;
  const Failure f = evaluate(x, validation_windows_, validation_order_, 0, validation_windows_.size(),
                             TrainingMode::kUnrolled, &loss, nullptr, &losses);
  if (f.error) {
    try {
      std::rethrow_exception(f.error);
    } catch (const NumericalError&) {
      return {inf, inf};
    }
  }
  const double n = static_cast<double>(losses.size());
  double ss = 0;
  for (double l : losses) ss += (l - loss) * (l - loss);
  return {loss, n > 1 ? std::sqrt(ss / (n - 1) / n) : 0.0};
}

double Trainer::training_loss(const Eigen::VectorXd& x, Eigen::VectorXd* grad) {
  check_argument_size("Trainer::training_loss", "x", x.size(), model_->num_parameters());
  const std::vector<TrainingWindow>& windows = training_windows(options_.window_steps);
  std::vector<int> order(windows.size());
  std::iota(order.begin(), order.end(), 0);
  double loss = 0;
  if (grad) grad->setZero(model_->num_parameters());
  const Failure f = evaluate(x, windows, order, 0, windows.size(), options_.mode, &loss, grad);
  if (f.position >= 0) throw_failure(f, windows, order, "the full training set");
  return loss;
}

void Trainer::consider_initial_parameters(TrainingState& s) {
  // A fresh state only (a resumed one carries its best); collective with
  // processes, as every validation pass.
  if (s.epoch != 0 || !s.history.empty() || validation_windows_.empty() || std::isfinite(s.best_validation)) return;
  const double v = validation_loss(s.x);
  if (v < s.best_validation) {  // false for NaN
    s.best_validation = v;
    s.best_x = s.x;
    s.best_epoch = -1;
  }
}

bool Trainer::run_adam_epoch(TrainingState& s, const std::atomic<bool>* stop) {
  consider_initial_parameters(s);
  const int e = s.epoch;
  EpochRecord record;
  record.window_steps = current_window_steps(e);
  const std::vector<TrainingWindow>& windows = training_windows(record.window_steps);
  AdamEpochOptions o;
  o.epochs = options_.epochs;
  o.batch_size = options_.batch_size;
  o.clip_norm = options_.clip_norm;
  o.adam = options_.adam;
  o.decay_mask = options_.decay_mask;
  o.lower = options_.lower;
  o.upper = options_.upper;
  o.schedule = options_.schedule;
  o.seed = options_.seed;
  o.patience = options_.patience;
  o.communicator = options_.communicator;
  o.proximal = options_.proximal;
  const MinibatchLoss loss = [&](const Eigen::VectorXd& x, const std::vector<int>& order, std::size_t first,
                                 std::size_t last, Eigen::VectorXd& grad) {
    double value = 0;
    const Failure f = evaluate(x, windows, order, first, last, options_.mode, &value, &grad);
    if (f.position >= 0) throw_failure(f, windows, order, "epoch " + std::to_string(e));
    return value;
  };
  const ValidationLoss validation = [this](const Eigen::VectorXd& x) { return validation_loss(x); };
  if (!neuralsim::run_adam_epoch(s, o, static_cast<int>(windows.size()), loss, validation,
                                 !validation_windows_.empty(), record, stop))
    return false;
  return !done(s);
}

void Trainer::run_lbfgs(TrainingState& s, const std::function<bool(const TrainingState&)>& on_epoch,
                        const std::atomic<bool>* stop) {
  // Collective with processes: every rank stops at the same evaluation.
  const auto stopped = [&] { return any_of(options_.communicator, stop && stop->load()); };
  consider_initial_parameters(s);
  while (!done(s)) {
    if (stopped()) return;
    const int K = current_window_steps(s.epoch);
    int stage_end = s.epoch + 1;
    while (stage_end < options_.epochs && current_window_steps(stage_end) == K) ++stage_end;
    const std::vector<TrainingWindow>& windows = training_windows(K);
    std::vector<int> order(windows.size());
    std::iota(order.begin(), order.end(), 0);

    // Full-batch loss. A non-finite value at a trial point of the line
    // search is returned as NaN (Ceres then tries a shorter step); at the
    // stage's starting point it is an error naming the window.
    bool first_evaluation = true;
    double seconds_gradient = 0;
    const std::string where = "epoch " + std::to_string(s.epoch) + " (L-BFGS)";
    const LossFunction f = [&](const Eigen::VectorXd& x, Eigen::VectorXd* grad) {
      if (stopped()) throw StopRequested{};
      const auto t0 = Clock::now();
      double loss = 0;
      const Failure failure = evaluate(x, windows, order, 0, windows.size(), options_.mode, &loss, grad);
      seconds_gradient += seconds_since(t0);
      if (failure.position >= 0) {
        bool numerical = !failure.error;
        if (failure.error) {
          try {
            std::rethrow_exception(failure.error);
          } catch (const NumericalError&) {
            numerical = true;
          } catch (...) {
          }
        }
        if (first_evaluation || !numerical) throw_failure(failure, windows, order, where);
        return std::numeric_limits<double>::quiet_NaN();
      }
      first_evaluation = false;
      return loss;
    };

    bool caller_stopped = false;
    auto iteration_start = Clock::now();
    const auto observer = [&](const LbfgsIterate& it) {
      if (it.iteration == 0) {
        seconds_gradient = 0;
        iteration_start = Clock::now();
        return !stopped();
      }
      EpochRecord record;
      record.epoch = s.epoch;
      record.window_steps = K;
      record.train_loss = it.loss;
      record.learning_rate = it.step_size;
      record.gradient_norm = it.gradient_norm;
      record.seconds_gradient = seconds_gradient;
      record.seconds_optimizer = std::max(0.0, seconds_since(iteration_start) - seconds_gradient);
      const auto tv = Clock::now();
      record.validation_loss = validation_loss(it.x);
      record.seconds_validation = seconds_since(tv);
      finish_epoch(s, record, it.x, !validation_windows_.empty(), options_.patience);
      seconds_gradient = 0;
      if (on_epoch && any_of(options_.communicator, !on_epoch(s))) caller_stopped = true;
      if (caller_stopped || stopped()) return false;
      iteration_start = Clock::now();
      return !done(s);
    };
    LbfgsOptions lo = options_.lbfgs;
    lo.max_iterations = stage_end - s.epoch;
    try {
      lbfgs_termination_ = minimize_lbfgs_observed(f, s.x, lo, observer).termination;
    } catch (const StopRequested&) {
      lbfgs_termination_ = "stopped by the caller";
      return;  // the state is that of the last completed iteration
    }
    if (caller_stopped || stopped() || done(s)) return;
    // Converged (or the line search failed) before the stage's budget.
    if (s.epoch < stage_end) s.epoch = stage_end;
  }
}

bool Trainer::run_epoch(TrainingState& s, const std::atomic<bool>* stop) {
  check_state(s);
  if (done(s)) return false;
  if (options_.optimizer == TrainerOptions::Optimizer::kLbfgs) {
    run_lbfgs(s, {}, stop);
    return false;
  }
  return run_adam_epoch(s, stop);
}

void Trainer::run(TrainingState& s, const std::function<bool(const TrainingState&)>& on_epoch,
                  const std::atomic<bool>* stop) {
  check_state(s);
  if (options_.optimizer == TrainerOptions::Optimizer::kLbfgs) {
    run_lbfgs(s, on_epoch, stop);
    return;
  }
  while (!done(s)) {
    const int before = s.epoch;
    const bool more = run_adam_epoch(s, stop);
    if (s.epoch > before && on_epoch && any_of(options_.communicator, !on_epoch(s))) return;
    if (!more) return;
  }
}

}  // namespace neuralsim
