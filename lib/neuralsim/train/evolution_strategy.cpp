#include "neuralsim/train/evolution_strategy.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "neuralsim/core/dense.hpp"
#include "neuralsim/core/errors.hpp"

namespace neuralsim {

Cmaes::Cmaes(const Eigen::VectorXd& x0, const CmaesOptions& options) : options_(options), engine_(options.seed) {
  n_ = static_cast<int>(x0.size());
  if (n_ == 0) throw InvalidArgument("Cmaes: x0 is empty");
  if (!(options.sigma0 > 0) || !std::isfinite(options.sigma0)) throw InvalidArgument("Cmaes: sigma0 must be > 0");
  for (int i = 0; i < n_; ++i)
    if (!std::isfinite(x0[i])) throw InvalidArgument("Cmaes: x0 is not finite");
  const double n = n_;
  // Selection and recombination (Hansen 2016, eqs. 48-50, positive weights only).
  lambda_ = options.population > 0 ? options.population : 4 + static_cast<int>(std::floor(3.0 * std::log(n)));
  if (lambda_ < 2) throw InvalidArgument("Cmaes: population must be >= 2");
  mu_ = lambda_ / 2;
  weights_.resize(mu_);
  for (int i = 0; i < mu_; ++i) weights_[i] = std::log((lambda_ + 1) / 2.0) - std::log(i + 1.0);
  weights_ /= weights_.sum();
  mu_eff_ = 1.0 / weights_.squaredNorm();
  // Adaptation (eqs. 55-58) and step-size control (eqs. 43-44).
  c_c_ = (4 + mu_eff_ / n) / (n + 4 + 2 * mu_eff_ / n);
  c_sigma_ = (mu_eff_ + 2) / (n + mu_eff_ + 5);
  const double alpha_cov = 2;
  c_1_ = alpha_cov / ((n + 1.3) * (n + 1.3) + mu_eff_);
  c_mu_ = std::min(1 - c_1_, alpha_cov * (mu_eff_ - 2 + 1 / mu_eff_) / ((n + 2) * (n + 2) + alpha_cov * mu_eff_ / 2));
  d_sigma_ = 1 + 2 * std::max(0.0, std::sqrt((mu_eff_ - 1) / (n + 1)) - 1) + c_sigma_;
  chi_n_ = std::sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n));  // E‖N(0, I)‖
  mean_ = x0;
  sigma_ = options.sigma0;
  p_sigma_ = Eigen::VectorXd::Zero(n_);
  p_c_ = Eigen::VectorXd::Zero(n_);
  C_ = Eigen::MatrixXd::Identity(n_, n_);
  B_ = Eigen::MatrixXd::Identity(n_, n_);
  D_ = Eigen::VectorXd::Ones(n_);
  Z_.resize(n_, lambda_);
  Y_.resize(n_, lambda_);
  X_.resize(n_, lambda_);
  best_x_ = x0;
}

const Eigen::MatrixXd& Cmaes::ask() {
  for (int k = 0; k < lambda_; ++k)
    for (int i = 0; i < n_; ++i) Z_(i, k) = normal_(engine_);
  Y_.noalias() = B_ * D_.asDiagonal() * Z_;  // y_k ~ N(0, C)
  X_ = (sigma_ * Y_).colwise() + mean_;
  asked_ = true;
  return X_;
}

void Cmaes::tell(const Eigen::VectorXd& f) {
  if (!asked_) throw InvalidArgument("Cmaes::tell: no samples asked for");
  if (f.size() != lambda_)
    throw InvalidArgument("Cmaes::tell: " + std::to_string(f.size()) + " values for " + std::to_string(lambda_) +
                          " samples");
  asked_ = false;
  ++generation_;
  // Rank: finite values ascending, non-finite last, ties by index.
  std::vector<int> order(static_cast<std::size_t>(lambda_));
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](int k) { return std::isfinite(f[k]) ? f[k] : std::numeric_limits<double>::infinity(); };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  last_best_f_ = key(order.front());
  last_range_ = key(order[static_cast<std::size_t>(lambda_ - 1)]) - last_best_f_;
  if (last_best_f_ < best_f_) {
    best_f_ = last_best_f_;
    best_x_ = X_.col(order.front());
  }
  // Recombination: y_w = Σ w_i y_{i:λ}, m ← m + σ y_w (c_m = 1, eq. 41).
  Eigen::VectorXd y_w = Eigen::VectorXd::Zero(n_), z_w = Eigen::VectorXd::Zero(n_);
  for (int i = 0; i < mu_; ++i) {
    y_w += weights_[i] * Y_.col(order[static_cast<std::size_t>(i)]);
    z_w += weights_[i] * Z_.col(order[static_cast<std::size_t>(i)]);
  }
  mean_ += sigma_ * y_w;
  // CSA (eqs. 43-44): C^{-1/2} y_w = B z_w since y = B D z.
  p_sigma_ = (1 - c_sigma_) * p_sigma_ + std::sqrt(c_sigma_ * (2 - c_sigma_) * mu_eff_) * (B_ * z_w);
  const double ps_norm = p_sigma_.norm();
  // h_σ stalls the update of p_c when ‖p_σ‖ is large (eq. 45 and below).
  const double h_sigma_lhs = ps_norm / std::sqrt(1 - std::pow(1 - c_sigma_, 2.0 * generation_));
  const double h_sigma = h_sigma_lhs < (1.4 + 2 / (n_ + 1.0)) * chi_n_ ? 1.0 : 0.0;
  p_c_ = (1 - c_c_) * p_c_ + h_sigma * std::sqrt(c_c_ * (2 - c_c_) * mu_eff_) * y_w;
  // Rank-one and rank-μ update (eq. 47 with w_i = 0 for i > μ, Σ w = 1).
  const double delta_h = (1 - h_sigma) * c_c_ * (2 - c_c_);
  Eigen::MatrixXd rank_mu = Eigen::MatrixXd::Zero(n_, n_);
  for (int i = 0; i < mu_; ++i) {
    const auto y = Y_.col(order[static_cast<std::size_t>(i)]);
    rank_mu.noalias() += weights_[i] * y * y.transpose();
  }
  C_ = (1 + c_1_ * delta_h - c_1_ - c_mu_) * C_ + c_1_ * p_c_ * p_c_.transpose() + c_mu_ * rank_mu;
  sigma_ *= std::exp((c_sigma_ / d_sigma_) * (ps_norm / chi_n_ - 1));
  decompose();
}

void Cmaes::decompose() {
  // Enforce symmetry (rounding), then C = B D² Bᵀ.
  C_ = 0.5 * (C_ + C_.transpose()).eval();
  const SymmetricEigen es = symmetric_eigen(C_);
  if (!es.converged) throw NumericalError("Cmaes: eigendecomposition of C failed");
  B_ = es.vectors;
  D_ = es.values.cwiseMax(0.0).cwiseSqrt();
  // A tiny floor keeps B D z well defined if C loses rank to rounding.
  const double floor = 1e-20 * std::max(1.0, D_.maxCoeff());
  D_ = D_.cwiseMax(floor);
}

CmaesResult minimize_cmaes(const EsObjective& f, const Eigen::VectorXd& x0, const CmaesOptions& options,
                           const std::function<bool(const CmaesIteration&)>& on_iteration) {
  Cmaes es(x0, options);
  const int lambda = es.population();
  Eigen::VectorXd values(lambda);
  std::vector<Eigen::VectorXd> slots(static_cast<std::size_t>(lambda));
  CmaesResult r;
  long long evaluations = 0;
  while (true) {
    const Eigen::MatrixXd& X = es.ask();
    for (int k = 0; k < lambda; ++k) slots[static_cast<std::size_t>(k)] = X.col(k);
    // One slot per sample; the ranking below does not depend on the order
    // in which slots are filled.
    if (options.parallel)
      tbb::parallel_for(0, lambda, [&](int k) { values[k] = f(slots[static_cast<std::size_t>(k)]); });
    else
      for (int k = 0; k < lambda; ++k) values[k] = f(slots[static_cast<std::size_t>(k)]);
    evaluations += lambda;
    es.tell(values);
    const CmaesIteration it{es.generation(), evaluations, es.last_best_f(), es.best_f(), es.best_x(), es.mean(),
                            es.sigma()};
    const bool go_on = on_iteration ? on_iteration(it) : true;
    std::string why;
    const double spread = es.sigma() * es.covariance().diagonal().cwiseMax(0.0).cwiseSqrt().maxCoeff();
    if (es.best_f() <= options.target_f)
      why = "target";
    else if (!go_on)
      why = "stopped by the caller";
    else if (options.max_evaluations > 0 && evaluations >= options.max_evaluations)
      why = "max_evaluations";
    else if (options.max_generations > 0 && es.generation() >= options.max_generations)
      why = "max_generations";
    else if (spread < options.tol_x)
      why = "tol_x";
    else if (std::isfinite(es.last_f_range()) && es.last_f_range() < options.tol_fun &&
             es.last_best_f() - es.best_f() < options.tol_fun)
      why = "tol_fun";
    if (!why.empty()) {
      r.termination = why;
      break;
    }
  }
  r.x = es.best_x();
  r.f = es.best_f();
  r.generations = es.generation();
  r.evaluations = evaluations;
  return r;
}

}  // namespace neuralsim
