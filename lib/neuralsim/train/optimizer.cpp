#include "neuralsim/train/optimizer.hpp"

#include <ceres/ceres.h>

#include <cmath>
#include <exception>
#include <string>
#include <utility>

#include "neuralsim/core/errors.hpp"
#include "neuralsim/core/format.hpp"

namespace neuralsim {

// ---------------------------------------------------------------- Adam

Adam::Adam(int n, AdamOptions options) : options_(options) {
  const auto bad = [](const char* field, double v, const char* range) {
    throw InvalidArgument(std::string("Adam: ") + field + " is " + format_number(v) + ", must be " + range);
  };
  if (n < 0) bad("the number of variables", n, ">= 0");
  if (!(options.learning_rate >= 0) || !std::isfinite(options.learning_rate))
    bad("learning_rate", options.learning_rate, "finite and >= 0");
  if (!(options.beta1 >= 0 && options.beta1 < 1)) bad("beta1", options.beta1, "in [0, 1)");
  if (!(options.beta2 >= 0 && options.beta2 < 1)) bad("beta2", options.beta2, "in [0, 1)");
  if (!(options.epsilon > 0) || !std::isfinite(options.epsilon)) bad("epsilon", options.epsilon, "finite and > 0");
  if (!(options.weight_decay >= 0) || !std::isfinite(options.weight_decay))
    bad("weight_decay", options.weight_decay, "finite and >= 0");
  m_ = Eigen::VectorXd::Zero(n);
  v_ = Eigen::VectorXd::Zero(n);
}

void Adam::set_decay_mask(Eigen::VectorXd mask) {
  if (mask.size() != 0 && mask.size() != m_.size())
    throw InvalidArgument("Adam::set_decay_mask: the mask has " + std::to_string(mask.size()) + " entries, expected " +
                          std::to_string(m_.size()) + " (or 0 for all)");
  mask_ = std::move(mask);
}

void Adam::step(Eigen::VectorXd& x, const Eigen::VectorXd& grad, double learning_rate) {
  check_argument_size("Adam::step", "x", x.size(), m_.size());
  check_argument_size("Adam::step", "grad", grad.size(), m_.size());
  ++t_;
  const double b1 = options_.beta1, b2 = options_.beta2;
  // Decoupled decay first, on the weights before the Adam update
  // (Loshchilov & Hutter, Algorithm 2, line 12).
  const double decay = learning_rate * options_.weight_decay;
  if (decay != 0) {
    if (mask_.size() == 0)
      x -= decay * x;
    else
      x.array() -= decay * mask_.array() * x.array();
  }
  m_ = b1 * m_ + (1 - b1) * grad;
  v_ = b2 * v_ + (1 - b2) * grad.cwiseAbs2();
  const double c1 = 1 - std::pow(b1, static_cast<double>(t_));
  const double c2 = 1 - std::pow(b2, static_cast<double>(t_));
  x.array() -= learning_rate * (m_.array() / c1) / ((v_.array() / c2).sqrt() + options_.epsilon);
}

void Adam::restore(Eigen::VectorXd m, Eigen::VectorXd v, long long t) {
  check_argument_size("Adam::restore", "m", m.size(), m_.size());
  check_argument_size("Adam::restore", "v", v.size(), v_.size());
  if (t < 0) throw InvalidArgument("Adam::restore: t is " + std::to_string(t) + ", must be >= 0");
  m_ = std::move(m);
  v_ = std::move(v);
  t_ = t;
}

double clip_gradient_norm(Eigen::VectorXd& g, double max_norm) {
  const double norm = g.norm();
  if (max_norm > 0 && std::isfinite(norm) && norm > max_norm) g *= max_norm / norm;
  return norm;
}

// ---------------------------------------------------------------- schedules

const char* schedule_kind_name(LearningRateSchedule::Kind k) {
  switch (k) {
    case LearningRateSchedule::Kind::kConstant: return "constant";
    case LearningRateSchedule::Kind::kStep: return "step";
    case LearningRateSchedule::Kind::kExponential: return "exponential";
    case LearningRateSchedule::Kind::kCosine: return "cosine";
  }
  return "unknown";
}

void LearningRateSchedule::check() const {
  const auto bad = [](const char* field, double v, const char* range) {
    throw InvalidArgument(std::string("learning-rate schedule: ") + field + " is " + format_number(v) + ", must be " +
                          range);
  };
  if (!(base > 0) || !std::isfinite(base)) bad("base", base, "finite and > 0");
  if (!(final_fraction >= 0 && final_fraction <= 1)) bad("final_fraction", final_fraction, "in [0, 1]");
  if (!(gamma > 0 && gamma <= 1)) bad("gamma", gamma, "in (0, 1]");
  if (step_every < 1) bad("step_every", step_every, ">= 1");
  if (warmup_epochs < 0) bad("warmup_epochs", warmup_epochs, ">= 0");
}

double LearningRateSchedule::at(int epoch, int total_epochs) const {
  if (epoch < warmup_epochs) return base * (epoch + 1) / (warmup_epochs + 1);
  const int e = epoch - warmup_epochs;
  const int n = std::max(1, total_epochs - warmup_epochs);
  switch (kind) {
    case Kind::kConstant: return base;
    case Kind::kStep: return base * std::pow(gamma, e / step_every);
    case Kind::kExponential: return base * std::pow(gamma, e);
    case Kind::kCosine: {
      const double p = std::min(1.0, static_cast<double>(e) / n);
      return base * (final_fraction + (1 - final_fraction) * 0.5 * (1 + std::cos(M_PI * p)));
    }
  }
  return base;
}

// ---------------------------------------------------------------- L-BFGS

namespace {

// f as a Ceres first-order function. An exception from f is kept and
// rethrown after Solve: it must not unwind through Ceres' frames. Every
// later evaluation fails at once, which ends the line search.
class CeresFunction final : public ceres::FirstOrderFunction {
 public:
  CeresFunction(const LossFunction& f, int n) : f_(f), x_(n), g_(n) {}

  bool Evaluate(const double* parameters, double* cost, double* gradient) const override {
    if (error_) return false;
    x_ = Eigen::Map<const Eigen::VectorXd>(parameters, x_.size());
    const bool first = evaluations_++ == 0;
    try {
      *cost = f_(x_, gradient ? &g_ : nullptr);
    } catch (...) {
      error_ = std::current_exception();
      return false;
    }
    bool finite = std::isfinite(*cost);
    if (gradient) {
      finite = finite && g_.size() == x_.size() && g_.allFinite();
      if (finite) Eigen::Map<Eigen::VectorXd>(gradient, x_.size()) = g_;
    }
    if (!finite && first) nonfinite_start_ = true;
    return finite;
  }
  int NumParameters() const override { return static_cast<int>(x_.size()); }

  std::exception_ptr error() const { return error_; }
  bool nonfinite_start() const { return nonfinite_start_; }

 private:
  const LossFunction& f_;
  mutable Eigen::VectorXd x_, g_;
  mutable long long evaluations_ = 0;
  mutable std::exception_ptr error_;
  mutable bool nonfinite_start_ = false;
};

class Observer final : public ceres::IterationCallback {
 public:
  Observer(const std::function<bool(const LbfgsIterate&)>& observer, const Eigen::VectorXd& x,
           const CeresFunction& function)
      : observer_(observer), x_(x), function_(function) {}

  ceres::CallbackReturnType operator()(const ceres::IterationSummary& s) override {
    if (function_.error()) return ceres::SOLVER_ABORT;
    last_iteration = s.iteration;
    last_cost = s.cost;
    if (!observer_) return ceres::SOLVER_CONTINUE;
    bool go_on = false;
    try {
      go_on = observer_(LbfgsIterate{s.iteration, s.cost, s.gradient_norm, s.step_size, x_});
    } catch (...) {
      error = std::current_exception();  // rethrown after Solve, not through Ceres' frames
      return ceres::SOLVER_ABORT;
    }
    if (!go_on) {
      stopped = true;
      // USER_SUCCESS: Ceres keeps the current (best) point.
      return ceres::SOLVER_TERMINATE_SUCCESSFULLY;
    }
    return ceres::SOLVER_CONTINUE;
  }

  int last_iteration = 0;
  double last_cost = 0;
  bool stopped = false;
  std::exception_ptr error;

 private:
  const std::function<bool(const LbfgsIterate&)>& observer_;
  const Eigen::VectorXd& x_;
  const CeresFunction& function_;
};

}  // namespace

LbfgsResult minimize_lbfgs_observed(const LossFunction& f, Eigen::VectorXd x0, const LbfgsOptions& options,
                                    const std::function<bool(const LbfgsIterate&)>& observer) {
  if (options.max_iterations < 0)
    throw InvalidArgument("minimize_lbfgs: max_iterations is " + std::to_string(options.max_iterations) +
                          ", must be >= 0");
  if (options.memory < 1)
    throw InvalidArgument("minimize_lbfgs: memory is " + std::to_string(options.memory) + ", must be >= 1");
  LbfgsResult result;
  result.x = std::move(x0);
  const int n = static_cast<int>(result.x.size());
  auto* function = new CeresFunction(f, n);
  ceres::GradientProblem problem(function);  // owns function
  Observer callback(observer, result.x, *function);

  ceres::GradientProblemSolver::Options so;
  so.line_search_direction_type = ceres::LBFGS;
  so.max_lbfgs_rank = options.memory;
  so.max_num_iterations = options.max_iterations;
  so.function_tolerance = options.function_tolerance;
  so.gradient_tolerance = options.gradient_tolerance;
  so.parameter_tolerance = options.parameter_tolerance;
  so.logging_type = ceres::SILENT;
  so.update_state_every_iteration = true;  // result.x is the current iterate in each callback
  so.callbacks.push_back(&callback);
  ceres::GradientProblemSolver::Summary summary;
  ceres::Solve(so, problem, result.x.data(), &summary);

  if (function->error()) std::rethrow_exception(function->error());
  if (callback.error) std::rethrow_exception(callback.error);
  if (function->nonfinite_start())
    throw NumericalError("minimize_lbfgs: the loss or its gradient is not finite at the starting point");
  result.final_loss = callback.last_cost;
  result.iterations = callback.last_iteration;
  result.termination = callback.stopped ? "stopped by the caller" : summary.message;
  return result;
}

LbfgsResult minimize_lbfgs(const LossFunction& f, Eigen::VectorXd x0, const LbfgsOptions& options,
                           const std::function<bool(int iteration, double loss)>& on_iteration) {
  std::function<bool(const LbfgsIterate&)> observer;
  if (on_iteration)
    observer = [&](const LbfgsIterate& it) { return it.iteration == 0 || on_iteration(it.iteration, it.loss); };
  return minimize_lbfgs_observed(f, std::move(x0), options, observer);
}

}  // namespace neuralsim
