// A derivative-free optimizer: the covariance matrix adaptation evolution
// strategy, the (μ/μ_w, λ)-CMA-ES with rank-one and rank-μ updates of the
// covariance and cumulative step-size adaptation (CSA), as in
//   N. Hansen, "The CMA Evolution Strategy: A Tutorial", arXiv:1604.00772
//   (2016), Table 1 and Appendix A (default strategy parameters, eqs. 44-58).
// The baseline that Degrave et al. (2016) compare backpropagation through
// time against ("88 gradient iterations against 2 422 for CMA-ES"); the
// policy-search study (bench/policy_search_study.cpp) does the same here.
//
// Deviations from the tutorial's default, on purpose:
//  * only the μ best samples get (positive) weights, w_i = 0 for i > μ (the
//    original (μ/μ_w, λ)-CMA-ES; the tutorial's "active" negative weights
//    are not used);
//  * the eigendecomposition of C is computed every generation (problems
//    here have at most a few hundred variables; the tutorial's lazy update
//    only saves time);
//  * a non-finite f (a diverged rollout) ranks after every finite one; ties
//    are broken by sample index, so the ranking is deterministic.
//
// Reproducibility: one std::mt19937_64 per optimizer and the portable
// normal sampler of nn/mlp.hpp (no std:: distributions), so a seed gives
// the same samples on every IEEE-754 platform; minimize() evaluates the
// population in parallel (TBB) into one slot per sample and ranks only
// after all have returned, so the result is bit-identical at any thread
// count, provided f itself is deterministic.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "neuralsim/nn/mlp.hpp"

namespace neuralsim {

struct CmaesOptions {
  double sigma0 = 0.5;           // initial step size σ⁽⁰⁾ (> 0), in the units of x
  int population = 0;            // λ ≥ 2; 0: 4 + ⌊3 ln n⌋ (Hansen eq. 48)
  std::uint64_t seed = 1;        // of the sampler
  long long max_evaluations = 0;  // budget of f evaluations (0: unlimited); checked after each generation
  int max_generations = 0;       // 0: unlimited
  double target_f = -std::numeric_limits<double>::infinity();  // stop once the best f ≤ target_f
  double tol_x = 1e-12;          // stop when σ·max_i √C_ii < tol_x
  double tol_fun = 1e-14;        // stop when the f-range of the last generation and the best-so-far < tol_fun
  bool parallel = true;          // evaluate a generation on TBB (f must then be thread-safe)
};

// The state of one generation, given to the observer after tell().
struct CmaesIteration {
  int generation;               // 1-based: generations completed
  long long evaluations;        // f evaluations so far
  double best_f;                // best f of this generation
  double best_ever_f;           // best f so far
  const Eigen::VectorXd& best_ever_x;
  const Eigen::VectorXd& mean;  // the distribution mean m after the update
  double sigma;                 // σ after the update
};

struct CmaesResult {
  Eigen::VectorXd x;            // the best point evaluated
  double f = 0;
  int generations = 0;
  long long evaluations = 0;
  std::string termination;      // "target", "max_evaluations", "max_generations", "tol_x", "tol_fun", "stopped by the caller"
};

// Ask/tell interface (one generation: ask() the λ samples, evaluate them in
// any order, tell() their values). Not thread-safe.
class Cmaes {
 public:
  // Throws InvalidArgument for an empty x0, σ0 ≤ 0 or λ < 2.
  Cmaes(const Eigen::VectorXd& x0, const CmaesOptions& options);

  int dimension() const { return static_cast<int>(mean_.size()); }
  int population() const { return lambda_; }
  int parents() const { return mu_; }
  double mu_eff() const { return mu_eff_; }

  // λ new samples x_k = m + σ B D z_k, z_k ~ N(0, I), as the columns of the
  // returned matrix (valid until the next ask()).
  const Eigen::MatrixXd& ask();
  // The values f(x_k) of the samples of the last ask() (size λ): updates the
  // mean, the evolution paths, C and σ. Throws InvalidArgument without a
  // preceding ask() or for a wrong size.
  void tell(const Eigen::VectorXd& f);

  const Eigen::VectorXd& mean() const { return mean_; }
  double sigma() const { return sigma_; }
  const Eigen::MatrixXd& covariance() const { return C_; }
  int generation() const { return generation_; }
  const Eigen::VectorXd& best_x() const { return best_x_; }
  double best_f() const { return best_f_; }
  double last_best_f() const { return last_best_f_; }
  double last_f_range() const { return last_range_; }

 private:
  void decompose();

  CmaesOptions options_;
  int n_ = 0, lambda_ = 0, mu_ = 0;
  Eigen::VectorXd weights_;
  double mu_eff_ = 0, c_c_ = 0, c_sigma_ = 0, c_1_ = 0, c_mu_ = 0, d_sigma_ = 0, chi_n_ = 0;
  Eigen::VectorXd mean_, p_sigma_, p_c_, D_;
  Eigen::MatrixXd C_, B_, Z_, Y_, X_;
  double sigma_ = 0;
  int generation_ = 0;
  bool asked_ = false;
  std::mt19937_64 engine_;
  nn::random::NormalSampler normal_;
  Eigen::VectorXd best_x_;
  double best_f_ = std::numeric_limits<double>::infinity();
  double last_best_f_ = std::numeric_limits<double>::infinity();
  double last_range_ = std::numeric_limits<double>::infinity();
};

// f(x): must be thread-safe when options.parallel (e.g. one simulator per
// TBB worker, tbb::enumerable_thread_specific). An exception thrown by f is
// rethrown to the caller.
using EsObjective = std::function<double(const Eigen::VectorXd& x)>;

// Minimizes f from the mean x0 until one of the stopping criteria of
// `options` holds or on_iteration (called after every generation) returns
// false.
CmaesResult minimize_cmaes(const EsObjective& f, const Eigen::VectorXd& x0, const CmaesOptions& options,
                           const std::function<bool(const CmaesIteration&)>& on_iteration = {});

}  // namespace neuralsim
