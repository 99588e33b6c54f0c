#include "neuralsim/train/training_loop.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"
#include "neuralsim/core/splitmix.hpp"

namespace neuralsim {
// Named (not anonymous): layers may be compiled as unity translation units.
namespace training_loop_detail {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Uniform in [0, bound) without bias: reject the 2^64 mod bound lowest draws
// (as OpenBSD's arc4random_uniform). std::uniform_int_distribution is
// implementation-defined, this is not.
std::uint64_t uniform_below(std::mt19937_64& engine, std::uint64_t bound) {
  const std::uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const std::uint64_t r = engine();
    if (r >= threshold) return r % bound;
  }
}

}  // namespace training_loop_detail

std::vector<int> epoch_permutation(std::uint64_t seed, int epoch, int n) {
  using training_loop_detail::uniform_below;
  std::vector<int> p(static_cast<std::size_t>(std::max(n, 0)));
  std::iota(p.begin(), p.end(), 0);
  std::mt19937_64 engine(splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(epoch) + 0x632be59bd9b4e019ull)));
  for (int i = n - 1; i > 0; --i)  // Fisher–Yates (Knuth, TAOCP vol. 2, Algorithm 3.4.2 P)
    std::swap(p[i], p[uniform_below(engine, static_cast<std::uint64_t>(i) + 1)]);
  return p;
}

void finish_epoch(TrainingState& s, const EpochRecord& record, const Eigen::VectorXd& x, bool has_validation,
                  int patience) {
  s.x = x;
  s.history.push_back(record);
  if (!has_validation) {
    s.best_x = x;
    s.best_epoch = record.epoch;
    s.epochs_since_best = 0;
  } else if (record.validation_loss < s.best_validation) {  // false for NaN
    s.best_x = x;
    s.best_validation = record.validation_loss;
    s.best_epoch = record.epoch;
    s.epochs_since_best = 0;
  } else {
    ++s.epochs_since_best;
    if (patience > 0 && s.epochs_since_best >= patience) s.stopped_early = true;
  }
  s.epoch = record.epoch + 1;
}

bool run_adam_epoch(TrainingState& s, const AdamEpochOptions& o, int num_items, const MinibatchLoss& minibatch_loss,
                    const ValidationLoss& validation, bool has_validation, EpochRecord record,
                    const std::atomic<bool>* stop) {
  using training_loop_detail::Clock;
  using training_loop_detail::seconds_since;
  const int e = s.epoch;
  const int P = static_cast<int>(s.x.size());
  record.epoch = e;
  record.learning_rate = o.schedule.at(e, o.epochs);
  const std::vector<int> order = epoch_permutation(o.seed, e, num_items);

  // Work on copies: the state changes only when the epoch completes.
  Eigen::VectorXd x = s.x;
  Adam adam(P, o.adam);
  adam.set_decay_mask(o.decay_mask);
  if (s.adam_m.size() != 0)
    adam.restore(s.adam_m, s.adam_v, s.adam_t);
  else
    adam.restore(Eigen::VectorXd::Zero(P), Eigen::VectorXd::Zero(P), s.adam_t);
  Eigen::VectorXd grad(P);

  const std::size_t n = static_cast<std::size_t>(num_items), B = static_cast<std::size_t>(o.batch_size);
  double loss_sum = 0, norm_sum = 0;
  int batches = 0;
  for (std::size_t first = 0; first < n; first += B) {
    // Collective with processes: every rank stops before the same minibatch.
    if (any_of(o.communicator, stop && stop->load())) return false;
    const std::size_t last = std::min(n, first + B);
    const auto t0 = Clock::now();
    const double loss = minibatch_loss(x, order, first, last, grad);
    const auto t1 = Clock::now();
    record.seconds_gradient += std::chrono::duration<double>(t1 - t0).count();
    const double norm = clip_gradient_norm(grad, o.clip_norm);
    if (!std::isfinite(norm))
      throw NumericalError("training epoch " + std::to_string(e) + ": the gradient of the minibatch starting at item " +
                           std::to_string(first) + " overflows (norm " + format_number(norm) + ")");
    adam.step(x, grad, record.learning_rate);
    if (o.proximal) o.proximal(x, record.learning_rate, adam);
    if (o.lower.size()) x = x.cwiseMax(o.lower);
    if (o.upper.size()) x = x.cwiseMin(o.upper);
    record.seconds_optimizer += seconds_since(t1);
    loss_sum += loss * static_cast<double>(last - first);
    norm_sum += norm;
    ++batches;
  }
  if (!x.allFinite())
    throw NumericalError("training: the parameters are not finite after epoch " + std::to_string(e));
  record.train_loss = loss_sum / static_cast<double>(n);
  record.gradient_norm = norm_sum / std::max(batches, 1);
  const auto tv = Clock::now();
  record.validation_loss = validation(x);
  record.seconds_validation = seconds_since(tv);

  s.adam_m = adam.m();
  s.adam_v = adam.v();
  s.adam_t = adam.t();
  finish_epoch(s, record, x, has_validation, o.patience);
  return true;
}

}  // namespace neuralsim
